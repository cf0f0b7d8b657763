"""Pack specs: a strategy spec, optionally with the shared cache-aware options.

``bm25(k1=1.5)`` packs as before; ``bm25(k1=1.5)+cache(low_water=0.5,recall_share=0.3)``
packs cache-aware (:mod:`packproof.packer.cacheaware`). The canonical form lists
every parameter of both parts (defaults filled), so a report column reproduces,
and a spec without ``+cache`` is exactly the strategy's own spec string.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from .cacheaware import CacheAware, build_cache_aware
from .errors import InputError
from .strategies import StrategyBase, build_strategy, parse_spec
from .strategies.base import _fmt

__all__ = ["CACHE_PART", "PackSpec", "parse_pack_spec"]

CACHE_PART: Final = "cache"


@dataclass(frozen=True)
class PackSpec:
    strategy: StrategyBase
    cache: CacheAware | None = None

    @property
    def name(self) -> str:
        return self.strategy.name

    def _cache_text(self, only_changed: bool) -> str:
        assert self.cache is not None
        defaults = CacheAware().params()
        params = {
            k: v for k, v in self.cache.params().items() if not only_changed or v != defaults[k]
        }
        body = ",".join(f"{k}={_option_text(v)}" for k, v in params.items())
        return f"+{CACHE_PART}({body})" if body else f"+{CACHE_PART}"

    def spec_string(self) -> str:
        text = self.strategy.spec_string()
        return text if self.cache is None else text + self._cache_text(only_changed=False)

    def label(self) -> str:
        """The short display name: default-valued parameters left out."""
        text = self.strategy.label()
        return text if self.cache is None else text + self._cache_text(only_changed=True)

    def request_fields(self) -> dict[str, Any]:
        """The request fields this spec sets: ``strategy`` and, cache-aware, ``cache_aware``."""
        out: dict[str, Any] = {"strategy": self.strategy.spec()}
        if self.cache is not None:
            out["cache_aware"] = self.cache.to_json()
        return out


def _option_text(value: Any) -> str:
    """An option's canonical text: booleans as JSON writes them, so they parse back."""
    return ("true" if value else "false") if isinstance(value, bool) else _fmt(value)


def _split(text: str) -> list[str]:
    """``text`` cut at each ``+`` outside parentheses."""
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == "+" and depth == 0:
            parts.append(text[start:k])
            start = k + 1
    parts.append(text[start:])
    return parts


def parse_pack_spec(text: str, where: str = "/strategy") -> PackSpec:
    """``"bm25(k1=1.5)+cache(recall_share=0.3)"`` -> a checked :class:`PackSpec`."""
    parts = _split(text)
    name, params = parse_spec(parts[0], where)
    strategy = build_strategy(name, params, where)
    if len(parts) == 1:
        return PackSpec(strategy)
    if len(parts) > 2:
        raise InputError(
            where, "more than one '+' part", expected="strategy or strategy+cache(...)", found=text
        )
    part, options = parse_spec(parts[1], where)
    if part != CACHE_PART:
        raise InputError(
            where, "unknown spec part after '+'", expected=f"{CACHE_PART}(...)", found=part
        )
    return PackSpec(strategy, build_cache_aware(options, where + "/cache_aware"))
