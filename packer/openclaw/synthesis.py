"""Synthesis-card preference (``_hybrid_prefer_synthesis_cards``; POLICY.md 6).

A fresh synthesis card that covers at least two of the candidate refs stands in
for them: it goes first and the raw records it covers leave the candidate list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..records import Synthesis

__all__ = ["Card", "Preference", "prefer_cards"]


@dataclass(frozen=True)
class Card:
    """A synthesis card: its ref and what it summarises."""

    ref: str
    synthesis: Synthesis


@dataclass(frozen=True)
class Preference:
    refs: list[str]  # the candidate list: preferred cards, then the refs not covered
    preferred: list[str]  # graph_preferred_card_refs
    covered: list[str]  # graph_covered_raw_refs


def prefer_cards(refs: Sequence[str], cards: Sequence[Card], limit: int) -> Preference:
    """Prefer cards over the raw ``refs`` they cover (``cards``: every card of
    the store, retrieved or not; only fresh ones count).

    A card covers the refs (in ``refs`` order) among its sources and is a
    candidate with at least 2. Candidates in order of covered count descending,
    then source count ascending, then ref ascending (as strings); greedily, a
    card is preferred if at least 2 of the refs still uncovered are among its
    covered refs, and those become covered. The result: the preferred cards,
    then the refs not covered, each once, cut to ``limit``."""
    ranked = []
    for card in cards:
        if not card.synthesis.fresh:
            continue
        sources = set(card.synthesis.sources)
        covers = [ref for ref in refs if ref in sources]
        if len(covers) >= 2:
            ranked.append((-len(covers), len(card.synthesis.sources), card.ref, covers))
    ranked.sort(key=lambda row: row[:3])
    uncovered = set(refs)
    preferred: list[str] = []
    covered: list[str] = []
    for _, _, ref, covers in ranked:
        fresh = [r for r in covers if r in uncovered]
        if len(fresh) >= 2:
            preferred.append(ref)
            covered.extend(fresh)
            uncovered.difference_update(fresh)
    rest = [ref for ref in refs if ref in uncovered]
    out = list(dict.fromkeys([*preferred, *rest]))[:limit]
    return Preference(out, preferred, covered)
