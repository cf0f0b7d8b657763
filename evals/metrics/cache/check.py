"""``packproof cache check``: the cache model held against the provider's bill,
call by call (docs/claude-code.md, "The check").

Each session family (a main session and its sub-agents) is priced as sent
(:func:`~packproof.evals.scenarios.importers.claude_code.replay.family_prompts`):
per model one :class:`Pricer` and one :class:`Prompts` numbering, its calls merged
in time order, segment ids shared where the prompts share content. A chain that
reads a seed first has a seed step written just before it (not counted). The
profile is Anthropic's breakpoints profile with the model's minimum and the
lifetime the calls wrote (``ephemeral_1h_input_tokens``: 1 hour, 2x writes;
otherwise 5 minutes, 1.25x). A call is within tolerance when its predicted cached
and written tokens are each within max(1%, 8 tokens) of the recorded ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, NamedTuple

import yaml

from packproof.evals.metrics.cache.files import profile as shipped_profile
from packproof.evals.metrics.cache.model import Pricer, Profile, Prompts
from packproof.evals.scenarios.importers.claude_code.replay import (
    SESSION_PREFIX_TOKENS,
    CallPrompt,
    family_prompts,
)
from packproof.evals.scenarios.importers.claude_code.sessions import find_sessions

__all__ = [
    "CheckRow",
    "Prices",
    "billed_usd",
    "check_sessions",
    "explain",
    "load_prices",
    "model_profile",
    "within",
]

PRICES_FILE: Final = Path(__file__).resolve().parents[2] / "data" / "claude-prices.yaml"
RELATIVE: Final = 0.01
ABSOLUTE: Final = 8
_MCP: Final = "<command-name>/mcp</command-name>"


def within(predicted: int, billed: int) -> bool:
    """|predicted - billed| <= max(1% of billed, 8 tokens)."""
    return abs(predicted - billed) <= max(RELATIVE * billed, ABSOLUTE)


@dataclass(frozen=True)
class Prices:
    """Input USD per million tokens and minimum cacheable prompt, by model-id prefix."""

    input: Mapping[str, float]
    min_tokens: Mapping[str, int]
    source: str
    date: str

    @staticmethod
    def _lookup(table: Mapping[str, Any], model: str, what: str) -> Any:
        best = max((k for k in table if model.startswith(k)), key=len, default=None)
        if best is None:
            raise ValueError(f"no {what} for model {model!r} in {PRICES_FILE.name}")
        return table[best]

    def price(self, model: str) -> float:
        return float(self._lookup(self.input, model, "input price"))

    def minimum(self, model: str) -> int:
        return int(self._lookup(self.min_tokens, model, "minimum"))


def load_prices(path: Path = PRICES_FILE) -> Prices:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return Prices(data["usd_per_mtok_input"], data["min_tokens"], data["source"], data["date"])


class CheckRow(NamedTuple):
    """One call: where it is, its model and lifetime, predicted and billed
    (cached, written, uncached), both input costs in USD, whether within
    tolerance, and the rule that would explain a miss ('' when within)."""

    session: str
    line: int
    request_id: str
    t: float
    model: str
    ttl: str
    cached: int
    written: int
    uncached: int
    billed_cached: int
    billed_written: int
    billed_uncached: int
    cost: float
    billed_cost: float
    ok: bool
    note: str
    sizing: str


def model_profile(model: str, one_hour: bool, prices: Prices) -> Profile:
    """The shipped ``anthropic`` profile (``anthropic-1h`` for 1-hour entries) with
    the model's minimum cacheable prompt."""
    base = shipped_profile("anthropic-1h" if one_hour else "anthropic")
    return replace(base, min_tokens=prices.minimum(model))


def billed_usd(cached: int, written: int, written_1h: int, uncached: int, price: float) -> float:
    """A call's input cost as billed, in USD at ``price`` per million input tokens:
    reads 0.1x, 5-minute writes 1.25x, 1-hour writes 2x, uncached 1x."""
    five = written - written_1h
    return price * (0.1 * cached + 1.25 * five + 2.0 * written_1h + uncached) / 1e6


def _billed_cost(prompt: CallPrompt, price: float) -> float:
    u = prompt.call.usage
    return billed_usd(u.cached, u.written, u.written_1h, u.input, price)


def explain(prompt: CallPrompt, cached: int, written: int, previous: CallPrompt | None) -> str:
    """The rule that would explain a miss, as far as the records show it."""
    u = prompt.call.usage
    if prompt.breakpoints is not None:
        return (
            "breakpoint before the prompt's end (modelled): the bill prices the new messages "
            "together, and their split around the breakpoint is by estimate"
        )
    if prompt.call.usage.input > 3 * ABSOLUTE:
        return (
            "breakpoint before the prompt's end: the newest turn holds several tool results "
            "and Claude Code marked the one its parentUuid chain passes through"
        )
    if _MCP in " ".join(m.text for m in prompt.call.prompt[-12:]):
        return (
            "an /mcp reconnect changed the tool definitions: "
            "the prompt breaks inside the static prefix"
        )
    if previous is not None and previous.call.usage.input > 3 * ABSOLUTE:
        return (
            "reads what the previous call wrote, whose breakpoint was before its end "
            "(that call's rule)"
        )
    if previous is not None and u.cached > previous.call.usage.prompt:
        return "read more than any prompt of this family sent: a call not in these records wrote it"
    if u.cached < cached:
        return "the prompt changed earlier than the records show (a prefix break not modelled)"
    if prompt.seed is None and u.cached and not cached:
        return "the seed (system prompt and tools) kept warm by the user's other sessions"
    if prompt.note:
        return "sizes not from the bill: " + prompt.note
    return "a longer cached prefix than the model finds (an entry written outside these records)"


def _family_rows(main_prompts: Sequence[CallPrompt], prices: Prices) -> list[CheckRow]:
    rows: list[CheckRow] = []
    by_model: dict[str, list[CallPrompt]] = {}
    for p in main_prompts:
        by_model.setdefault(p.call.model, []).append(p)
    for model, prompts in by_model.items():
        one_hour = sum(p.call.usage.written_1h > 0 for p in prompts) * 2 > sum(
            p.call.usage.written > 0 for p in prompts
        )
        pricer = Pricer(model_profile(model, one_hour, prices))
        encoded = Prompts()
        counted: list[CallPrompt | None] = []
        last_t = -float("inf")
        for p in prompts:
            if p.seed is not None:  # written by the user's other sessions, just before
                seed_t = max(last_t, p.call.t - 1.0)
                encoded.add(seed_t, [p.seed[0]], [p.seed[1]], 0, False)
                counted.append(None)
            encoded.add(
                p.call.t,
                (s for s, _ in p.segments),
                (k for _, k in p.segments),
                p.static_segments,
                False,
                p.breakpoints,
            )
            counted.append(p)
            last_t = p.call.t
        price = prices.price(model)
        previous = None
        for step, cost in zip(counted, pricer.price(encoded), strict=True):
            if step is None:  # the seed
                continue
            p = step
            u = p.call.usage
            ok = within(cost.cached, u.cached) and within(cost.written, u.written)
            rows.append(
                CheckRow(
                    p.session,
                    p.call.line,
                    p.call.request_id,
                    p.call.t,
                    model,
                    "1h" if one_hour else "5m",
                    cost.cached,
                    cost.written,
                    cost.uncached,
                    u.cached,
                    u.written,
                    u.input,
                    price * cost.cost / 1e6,
                    _billed_cost(p, price),
                    ok,
                    "" if ok else explain(p, cost.cached, cost.written, previous),
                    p.note,
                )
            )
            previous = p
    return rows


def check_sessions(
    paths: Iterable[Path], session_prefix: int = SESSION_PREFIX_TOKENS, prices: Prices | None = None
) -> list[CheckRow]:
    """Every call under ``paths``, priced as sent and compared with its bill."""
    prices = prices or load_prices()
    rows: list[CheckRow] = []
    for main in find_sessions(paths):
        rows += _family_rows(family_prompts(main, session_prefix), prices)
    return rows
