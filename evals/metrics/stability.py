"""Stability across a conversation's turns: how much of the previous pack the next
one keeps as an unchanged prefix (what a provider's prompt cache can reuse).

Averaging (``docs/metrics.md``): per conversation over its consecutive turn pairs,
then the report averages the conversations' values."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

__all__ = ["conversation_stability", "prefix_stability"]


def prefix_stability(previous: Sequence[str], current: Sequence[str]) -> float:
    """Share of the previous pack's prefix kept unchanged by the next pack: the
    longest common prefix (in pack order) over the previous pack's length. A
    provider's prompt cache survives exactly that prefix; 1.0 when the previous
    pack was empty."""
    if not previous:
        return 1.0
    common = 0
    for a, b in zip(previous, current, strict=False):
        if a != b:
            break
        common += 1
    return common / len(previous)


def conversation_stability(
    records: Sequence[dict[str, Any]],
) -> dict[tuple[str, str, Any], float]:
    """Mean prefix stability over consecutive turns, per (suite/scenario, spec, budget)."""
    packs: dict[tuple[str, str, Any], dict[int, list[str]]] = {}
    for r in records:
        packs.setdefault((f"{r['suite']}/{r['scenario']}", r["spec"], r["budget"]), {})[
            r["turn"]
        ] = r["selected"]
    out: dict[tuple[str, str, Any], float] = {}
    for (scenario, spec, budget), by_turn in packs.items():
        turns = sorted(by_turn)
        if len(turns) < 2:
            continue
        values = [prefix_stability(by_turn[a], by_turn[b]) for a, b in pairwise(turns)]
        out[(scenario, spec, budget)] = sum(values) / len(values)
    return out
