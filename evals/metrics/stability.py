"""Stability across a conversation's turns: how much of the previous pack the next
one keeps as an unchanged prefix (what a provider's prompt cache can reuse), in
items and in tokens.

Averaging (``docs/metrics.md``): each cell holds its value against the previous
turn's pack; a report averages them per conversation, then over conversations."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["kept_prefix", "prefix_stability"]


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


def kept_prefix(
    previous: Sequence[tuple[str, int]], current: Sequence[tuple[str, int]]
) -> tuple[int, int]:
    """The longest common prefix of two packs given as ``(id, tokens)`` in pack
    order, in items and in tokens."""
    items = tokens = 0
    for (a, n), (b, _) in zip(previous, current, strict=False):
        if a != b:
            break
        items += 1
        tokens += n
    return items, tokens
