"""lossless-claw PR #180: prompt-aware eviction by "BM25-lite" keyword overlap."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..termstats import per_document_order
from ..text import LCM_TOKENIZER, lcm_terms
from .base import NO_SEARCHABLE_TERMS, Ranking, ScoringView, StrategyBase, register

__all__ = ["Bm25Lite", "distinct", "lcm_score"]


def distinct(terms: list[str]) -> list[str]:
    """Terms without repeats, in first-occurrence order (a JS ``Set``'s order)."""
    return list(dict.fromkeys(terms))


def lcm_score(item_terms: list[str], prompt_terms: list[str]) -> float:
    """PR #180 ``scoreRelevance``: 0 if either side has no terms, else the sum over
    DISTINCT prompt terms (in prompt order, as the JS loop adds them) of
    ``tf(term, item) / len(item_terms)``. No IDF, no saturation."""
    if not item_terms or not prompt_terms:
        return 0.0
    n = len(item_terms)
    score = 0.0
    for term in prompt_terms:
        score += item_terms.count(term) / n
    return score


@register
@dataclass(frozen=True)
class Bm25Lite(StrategyBase):
    """Score each evictable item by term-frequency overlap with the prompt and fill
    greedily by score (ties to the newer item), skipping items that do not fit;
    zero-score items still fill leftover space newest first. A prompt with no
    searchable term (``[a-z0-9]{2,}`` after lowercasing) falls back to the
    chronological mode. Full-fit is decided before any of this.

    The scored text is the one lossless-claw scores (:func:`packproof.packer.lcm.scored_texts`):
    assistant and tool messages as their JSON content blocks, so ``type`` and
    ``text`` are terms of each; summaries and user or system messages as is."""

    name: ClassVar[str] = "bm25lite"
    formula: ClassVar[str] = "sum over distinct prompt terms t of tf(t, item) / |item terms|"

    def rank(self, view: ScoringView) -> Ranking:
        prompt_terms = distinct(lcm_terms(view.prompt or ""))
        if not prompt_terms:
            return Ranking(scores=None, fallback=NO_SEARCHABLE_TERMS)
        stats = view.items.term_stats(LCM_TOKENIZER, "lcm")
        scores = np.zeros(len(stats.lengths), dtype=np.float64)
        doc, _, tf = per_document_order(stats, prompt_terms)
        # Each item's pairs come in prompt order (np.add.at adds in array order),
        # so each score is summed in the JS loop's order: exactly lcm_score's floats.
        np.add.at(scores, doc, tf / stats.lengths[doc])
        return Ranking(scores=scores, components={"overlap": scores}, terms=tuple(prompt_terms))
