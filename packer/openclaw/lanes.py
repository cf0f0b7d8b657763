"""The retrieval lanes openclaw-mem fuses (``_hybrid_retrieve``; POLICY.md 3.1).

With the request's ``retrieval``, its lists are the lanes: ``fts``, ``vector``,
then ``vector_en`` when it is not empty, each read up to ``candidate_limit`` ids
(what openclaw-mem asks each search for). Without it (LoCoMo, hand scenarios),
the lexical lane is packproof's ``bm25`` ranking of the memory candidates
against the prompt: the items with a positive score, best first, ties to the
newer item, up to ``candidate_limit``; there is no vector lane.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import Items
from ..records import Retrieval
from ..strategies.base import Ranking

__all__ = ["Lanes", "lexical_lane", "retrieval_lanes"]


@dataclass(frozen=True)
class Lanes:
    fts: tuple[str, ...]
    vector: tuple[str, ...]
    vector_en: tuple[str, ...]
    terms: tuple[str, ...] = ()  # the analysed prompt terms of the bm25 lane

    def fused(self) -> list[tuple[str, ...]]:
        """The lists RRF fuses, in its order."""
        return [self.fts, self.vector, *([self.vector_en] if self.vector_en else [])]


def retrieval_lanes(retrieval: Retrieval, limit: int) -> Lanes:
    """The request's lists, each read up to ``limit`` ids."""
    fts, vector, vector_en = (lane[:limit] for lane in retrieval.lanes())
    return Lanes(fts, vector, vector_en)


def lexical_lane(memory: Items, ranking: Ranking, limit: int) -> Lanes:
    """The memory candidates ``ranking`` (bm25's) scores above 0, best first,
    ties to the newer item, up to ``limit``; no vector lane."""
    if ranking.scores is None:  # nothing in the prompt to search for
        return Lanes((), (), ())
    scores = ranking.scores
    order = np.lexsort((-memory.ordinals, -scores))
    hits = order[scores[order] > 0][:limit]
    return Lanes(tuple(memory.ids[i] for i in hits.tolist()), (), (), ranking.terms)
