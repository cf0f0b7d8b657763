"""openclaw-mem's ``pack`` options, read as its own parser and configuration read them.

:func:`parse_args` reads an argv as ``build_parser`` (argparse) does: ``--opt value``
and ``--opt=value``, the last of a repeated option wins except ``--tail-text``, which
appends; a value that starts with ``-`` must be written ``--opt=value`` unless it is a
negative number; integers are read with Python's ``int``. :func:`parse_env` reads
``OPENCLAW_MEM_*`` as ``resolve_config`` does: an invalid value falls back to the
default (POLICY.md, section 1). What argparse would reject is bad input, as is an empty
``--query`` (openclaw-mem answers ``{"error": "empty query"}`` and exits 2).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from packproof.packer.errors import InputError, pointer

__all__ = [
    "GRAPH_OPTIONS",
    "Options",
    "Settings",
    "parse_args",
    "parse_env",
    "strategy_params",
]

TRUST_POLICIES: Final = ("off", "exclude_quarantined_fail_open")
# Valued options; the flags are below. Graph-lane options are read (openclaw-mem's
# goldens pass them) and reported as not modelled: packproof has no graph lane.
_VALUED: Final = {
    "--query": str,
    "--query-en": str,
    "--limit": int,
    "--budget-tokens": int,
    "--tail-text": str,
    "--tail-file": str,
    "--tail-max-items": int,
    "--tail-budget-tokens": int,
    "--pack-trust-policy": str,
}
GRAPH_OPTIONS: Final = frozenset(
    {
        "--use-graph",
        "--graph-scope",
        "--graph-probe-t-high",
        "--graph-probe-t-marginal",
        "--graph-probe-n-min",
        "--graph-latency-soft-ms",
        "--graph-latency-hard-ms",
    }
)
_FLAGS: Final = frozenset({"--trace", "--json", "--include-archived", "--graph-aware"})
# argparse takes "-2" or "-.5" as a value, not as an option, when no option looks like one
_NEGATIVE: Final = re.compile(r"^-\d+$|^-\d*\.\d+$")

_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off"})
PROFILES: Final = ("composite", "relevance")
FACTORS: Final = ("relevance", "importance", "recency", "use", "state")
DEFAULT_BUDGET: Final = 1200


@dataclass(frozen=True)
class Settings:
    """The ``OPENCLAW_MEM_*`` settings in force (defaults: POLICY.md, section 1)."""

    profile: str = "composite"
    factors: Mapping[str, bool] = field(default_factory=lambda: dict.fromkeys(FACTORS, True))
    quotas: bool = True
    preference_min: int = 1
    decision_min: int = 1
    event_max_ratio: float = 0.4
    budget_tokens: int = DEFAULT_BUDGET


@dataclass(frozen=True)
class Options:
    """``pack``'s parsed arguments; ``limit`` and ``budget`` already clamped to >= 1."""

    query: str  # stripped, non-empty
    query_en: str | None
    limit: int
    budget: int
    tail_texts: tuple[str, ...]
    tail_file: str | None
    tail_max_items: int
    tail_budget_tokens: int
    trust_policy: str
    include_archived: bool
    graph: tuple[str, ...]  # the graph-lane options given (not modelled)


def _bool(text: str, default: bool) -> bool:
    word = text.strip().lower()
    return True if word in _TRUE else False if word in _FALSE else default


def _int(text: str, default: int, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        return default
    return value if value >= minimum else default


def _ratio(text: str, default: float) -> float:
    try:
        value = float(text)
    except ValueError:
        return default
    return value if math.isfinite(value) and 0.0 <= value <= 1.0 else default


def parse_env(env: Any, where: str = "/input/env") -> Settings:
    """The settings an environment gives; a value that is not a string is bad input."""
    if not isinstance(env, Mapping):
        raise InputError(where, "wrong type", expected="an object of strings", found=env)
    for key, value in env.items():
        if not isinstance(value, str):
            raise InputError(where + pointer(key), "wrong type", expected="a string", found=value)
    d = Settings()
    get = env.get
    profile = get("OPENCLAW_MEM_SCORING_PROFILE", "").strip()  # case-sensitive, as resolve_config
    factors = {
        f: _bool(get(f"OPENCLAW_MEM_SCORING_{f.upper()}_ENABLED", ""), True) for f in FACTORS
    }
    return Settings(
        profile=profile if profile in PROFILES else d.profile,
        factors=factors,
        quotas=_bool(get("OPENCLAW_MEM_QUOTA_ENABLED", ""), d.quotas),
        preference_min=_int(get("OPENCLAW_MEM_QUOTA_PREFERENCE_MIN", ""), d.preference_min, 0),
        decision_min=_int(get("OPENCLAW_MEM_QUOTA_DECISION_MIN", ""), d.decision_min, 0),
        event_max_ratio=_ratio(get("OPENCLAW_MEM_QUOTA_EVENT_MAX_RATIO", ""), d.event_max_ratio),
        budget_tokens=_int(get("OPENCLAW_MEM_PACK_BUDGET_TOKENS", ""), d.budget_tokens, 1),
    )


def _is_option(arg: str) -> bool:
    """Whether argparse reads ``arg`` as an option rather than a value: it starts
    with ``-`` and is not ``-`` alone, a negative number or a string with a space
    (unless it names a known option, or a known option with ``=value``)."""
    known = _VALUED.keys() | GRAPH_OPTIONS | _FLAGS
    if arg in known or arg.partition("=")[0] in known:
        return True
    return arg.startswith("-") and arg != "-" and not _NEGATIVE.match(arg) and " " not in arg


def _tokens(args: Any, where: str) -> list[tuple[str, str | None, int]]:
    """(option, value or None for a flag, position) for each option of ``args``."""
    if (
        not isinstance(args, list)
        or not all(isinstance(a, str) for a in args)
        or args[:1] != ["pack"]
    ):
        raise InputError(
            where, "not an openclaw-mem argv", expected='strings, starting with "pack"', found=args
        )
    out: list[tuple[str, str | None, int]] = []
    i = 1
    while i < len(args):
        at = pointer(*where.strip("/").split("/"), i)
        name, eq, inline = args[i].partition("=")
        if not name.startswith("--") or name not in _VALUED.keys() | GRAPH_OPTIONS | _FLAGS:
            raise InputError(
                at, "not an option of openclaw-mem pack", expected="an option", found=args[i]
            )
        if name in _FLAGS:
            if eq:
                raise InputError(at, f"{name} takes no value", expected=name, found=args[i])
            out.append((name, None, i))
            i += 1
            continue
        if eq:
            out.append((name, inline, i))
            i += 1
            continue
        value = args[i + 1] if i + 1 < len(args) else None
        if value is None or _is_option(value):
            raise InputError(
                at, f"{name} expects one value (write --opt=value for one starting with -)"
            )
        out.append((name, value, i))
        i += 2
    return out


def parse_args(args: Any, settings: Settings, where: str = "/input/args") -> Options:
    """``pack``'s options from ``args`` (``["pack", ...]``), as argparse reads them."""
    values: dict[str, Any] = {}
    tail_texts: list[str] = []
    graph: list[str] = []
    flags: set[str] = set()
    for name, value, i in _tokens(args, where):
        if value is None:
            flags.add(name)
            continue
        if name in GRAPH_OPTIONS:
            if not (name == "--use-graph" and value == "off"):  # off: the lane is not run
                graph.append(f"{name}={value}")
            continue
        try:
            parsed = _VALUED[name](value)
        except ValueError:
            raise InputError(
                pointer(*where.strip("/").split("/"), i),
                f"{name}: not an integer",
                expected="an integer",
                found=value,
            ) from None
        if name == "--tail-text":
            tail_texts.append(parsed)
        else:
            values[name] = parsed
    if "--query" not in values:
        raise InputError(where, "--query is required by openclaw-mem pack")
    query = values["--query"].strip()
    if not query:
        raise InputError(where, "empty query: openclaw-mem pack refuses it (exit 2)")
    policy = values.get("--pack-trust-policy", "off")
    if policy not in TRUST_POLICIES:
        raise InputError(
            where,
            "--pack-trust-policy: not a policy of openclaw-mem pack",
            expected=" or ".join(TRUST_POLICIES),
            found=policy,
        )
    if "--graph-aware" in flags:
        graph.append("--graph-aware")
    return Options(
        query=query,
        query_en=values.get("--query-en"),
        limit=max(1, values.get("--limit", 12)),
        budget=max(1, values.get("--budget-tokens", settings.budget_tokens)),
        tail_texts=tuple(tail_texts),
        tail_file=values.get("--tail-file"),
        tail_max_items=values.get("--tail-max-items", 4),
        tail_budget_tokens=values.get("--tail-budget-tokens", 0),
        trust_policy=policy,
        include_archived="--include-archived" in flags,
        graph=tuple(graph),
    )


def strategy_params(options: Options, settings: Settings) -> dict[str, Any]:
    """The ``openclaw-mem`` strategy's parameters (DESIGN.md) these options give."""
    on = {True: "on", False: "off"}
    return {
        "profile": settings.profile,
        "tail_budget_tokens": max(0, options.tail_budget_tokens),
        "tail_max_items": max(0, options.tail_max_items),
        "include_archived": on[options.include_archived],
        "quotas": on[settings.quotas],
        "preference_min": settings.preference_min,
        "decision_min": settings.decision_min,
        "event_max_ratio": settings.event_max_ratio,
        **{f"{f}_factor": on[settings.factors[f]] for f in FACTORS},
    }
