"""A documented hybrid of relevance, recency, usage, importance and trust."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..model import IMPORTANCE, TRUST
from .base import Ranking, ScoringView, StrategyBase, param, register
from .bm25 import Bm25Params
from .clarity import ClarityUsageParams

__all__ = ["Hybrid", "max_normalise"]


def max_normalise(values: np.ndarray) -> np.ndarray:
    """``values / max(values)``, all zeros when the maximum is not positive."""
    top = float(values.max()) if len(values) else 0.0
    return values / top if top > 0 else np.zeros_like(values)


@register
@dataclass(frozen=True)
class Hybrid(StrategyBase, Bm25Params, ClarityUsageParams):
    """Weighted mixture, every weight a parameter and every part in the trace:

        relevance = bm25 / max(bm25 over candidates)              (0 when no match)
        recency   = 0.5 ** (max(0, current_turn - turn) / half_life_turns)
        usage     = clarity_usage / max(clarity_usage over candidates)
        score     = (w_relevance*relevance + w_recency*recency + w_usage*usage)
                    * importance_weight[importance] * trust_weight[trust]

    Importance weights are openclaw-mem's composite profile (must 1.2, nice 1.0,
    unknown 1.0, ignore 0.8); trust weights are packproof's defaults (openclaw-mem
    ranks by trust tier first, which a product of weights cannot express). With no
    searchable prompt the relevance part is 0 and the other parts still rank.
    """

    name: ClassVar[str] = "hybrid"
    formula: ClassVar[str] = (
        "(w_rel*bm25/max + w_rec*0.5^(age/hl) + w_use*usage/max) * w_importance * w_trust"
    )

    w_relevance: float = param(0.7, "weight of max-normalised BM25 relevance", minimum=0)
    w_recency: float = param(0.2, "weight of the recency decay", minimum=0)
    w_usage: float = param(0.1, "weight of max-normalised Clarity usage", minimum=0)
    half_life_turns: float = param(
        8.0, "turns for the recency part to halve (0: only now)", minimum=0
    )
    importance_must_remember: float = param(1.2, "multiplier, importance must_remember", minimum=0)
    importance_nice_to_have: float = param(1.0, "multiplier, importance nice_to_have", minimum=0)
    importance_unknown: float = param(1.0, "multiplier, importance unknown", minimum=0)
    importance_ignore: float = param(0.8, "multiplier, importance ignore", minimum=0)
    trust_trusted: float = param(1.0, "multiplier, trust trusted", minimum=0)
    trust_unknown: float = param(1.0, "multiplier, trust unknown", minimum=0)
    trust_untrusted: float = param(0.8, "multiplier, trust untrusted", minimum=0)
    trust_quarantined: float = param(0.5, "multiplier, trust quarantined", minimum=0)

    def rank(self, view: ScoringView) -> Ranking:
        items = view.items
        bm25, terms = self.relevance(view)
        relevance = max_normalise(bm25)
        age = np.maximum(0, view.current_turn - items.turns).astype(np.float64)
        if self.half_life_turns > 0:
            recency = np.power(0.5, age / self.half_life_turns)
        else:
            recency = (age == 0).astype(np.float64)
        usage_raw = np.maximum(0.0, self.usage(items, view.current_turn)["usage"])
        usage = max_normalise(usage_raw)
        w_imp = np.array([getattr(self, f"importance_{i}") for i in IMPORTANCE])[items.importance]
        w_trust = np.array([getattr(self, f"trust_{t}") for t in TRUST])[items.trust]
        mix = self.w_relevance * relevance + self.w_recency * recency + self.w_usage * usage
        scores = mix * w_imp * w_trust
        return Ranking(
            scores=scores,
            components={
                "bm25": bm25,
                "relevance": relevance,
                "recency": recency,
                "usage_raw": usage_raw,
                "usage": usage,
                "importance_weight": w_imp,
                "trust_weight": w_trust,
            },
            terms=terms,
        )
