"""The Clarity plugin's v1 relevance scorer (OpenClaw), usage signals only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..model import IMPORTANCE, Items
from .base import Ranking, ScoringView, StrategyBase, param, register

__all__ = ["Clarity", "ClarityUsageParams", "clarity_components"]


@dataclass(frozen=True)
class ClarityUsageParams:
    """Clarity v1 scoring defaults. Zero is a value, not "unset": the plugin read
    options with ``||`` so an explicit 0 silently became the default; here it is 0."""

    half_life: float = param(5.0, "turns for staleness to halve the frequency score", minimum=0)
    recency_window: float = param(
        3.0, "turns after a mention that earn the recency bonus", minimum=0
    )
    recency_bonus: float = param(
        20.0, "bonus at t = 0, falling linearly over the window", minimum=0
    )
    reference_weight: float = param(15.0, "points per reference back in an answer", minimum=0)
    frequency_scale: float = param(10.0, "points per log2(mentions + 1)", minimum=0)

    def usage(self, items: Items, current_turn: int) -> dict[str, np.ndarray]:
        return clarity_components(items, current_turn, self)


def clarity_components(
    items: Items, current_turn: int, p: ClarityUsageParams
) -> dict[str, np.ndarray]:
    """Clarity v1, per item, with ``t = max(0, current_turn - last_mention_turn)``:

    - frequency = log2(mentions + 1) * frequency_scale
    - recency   = (1 - t / (recency_window + 1)) * recency_bonus if t <= recency_window else 0
    - utility   = references * reference_weight
    - staleness = (1 - 0.5 ** ((t - recency_window) / half_life)) * frequency
                  if t > recency_window else 0   (half_life 0: full decay at once)
    - usage     = frequency + recency + utility - staleness (the anchor bonus is
                  added by the ``clarity`` strategy; anchors are kept by policy anyway)
    """
    t = np.maximum(0, current_turn - items.last_mention_turns).astype(np.float64)
    window = p.recency_window
    frequency = np.log2(items.mentions.astype(np.float64) + 1.0) * p.frequency_scale
    recency = np.where(t <= window, (1.0 - t / (window + 1.0)) * p.recency_bonus, 0.0)
    utility = items.references.astype(np.float64) * p.reference_weight
    stale = t > window
    if p.half_life > 0:
        decay = np.power(0.5, np.where(stale, t - window, 0.0) / p.half_life)
    else:
        decay = np.where(stale, 0.0, 1.0)
    staleness = np.where(stale, (1.0 - decay) * frequency, 0.0)
    return {
        "frequency": frequency,
        "recency": recency,
        "utility": utility,
        "staleness": staleness,
        "usage": frequency + recency + utility - staleness,
    }


# Clarity's pruner tiers, mapped from packproof importance.
_TIER_OF_IMPORTANCE = {
    "must_remember": "tier_essential",
    "nice_to_have": "tier_high",
    "unknown": "tier_normal",
    "ignore": "tier_low",
}


@register
@dataclass(frozen=True)
class Clarity(StrategyBase, ClarityUsageParams):
    """Clarity's v1 score, ``max(0, frequency + recency + utility - staleness +
    anchor)``, times its pruner's tier factor (importance must_remember ->
    essential 2.0, nice_to_have -> high 1.5, unknown -> normal 1.0, ignore -> low
    0.8; set all four to 1 for the bare scorer). Filled greedily like every ranked
    strategy; the prompt is not used (Clarity tracks mentions, not queries)."""

    name: ClassVar[str] = "clarity"
    formula: ClassVar[str] = (
        "tier * max(0, log2(m+1)*fs + recency(t) + refs*rw - staleness(t) + anchor)"
    )

    # Kept for fidelity to Clarity v1: anchored items are always kept by the shared
    # policy, so under packproof this bonus never changes a selection.
    anchor_bonus: float = param(
        100.0, "bonus for anchored items (always kept anyway: no effect on selection)", minimum=0
    )
    tier_essential: float = param(2.0, "factor for importance must_remember", minimum=0)
    tier_high: float = param(1.5, "factor for importance nice_to_have", minimum=0)
    tier_normal: float = param(1.0, "factor for importance unknown", minimum=0)
    tier_low: float = param(0.8, "factor for importance ignore", minimum=0)

    def rank(self, view: ScoringView) -> Ranking:
        parts = self.usage(view.items, view.current_turn)
        anchor = np.where(view.items.anchored, self.anchor_bonus, 0.0)
        tiers = np.array([getattr(self, _TIER_OF_IMPORTANCE[i]) for i in IMPORTANCE])
        tier = tiers[view.items.importance]
        scores = np.maximum(0.0, parts["usage"] + anchor) * tier
        return Ranking(scores=scores, components={**parts, "anchor": anchor, "tier": tier})
