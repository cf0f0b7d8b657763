"""The Clarity plugin's v1 relevance scorer and pruner (OpenClaw), usage signals only.

As the plugin's code computes them (kbarbel640-del/openclaw, commit 88bb3988,
``extensions/clarity/lib/relevance-scorer.js`` and ``lib/pruner.js``; the rules in
``../shared/data/clarity/SCORER.md``): :func:`v1_score` and :func:`v1_prune` over
the plugin's own settings (:class:`ScorerSettings`; the pruner's in
:mod:`packproof.packer.clarity_pruner`), and
the ``clarity`` strategy, which scores packproof items with them. Proved on the
plugin's recorded outputs by ``packproof conformance clarity`` (docs/clarity.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar, Final

import numpy as np

from ..clarity_pruner import TIERS, PrunerSettings, Zeros, or_default
from ..model import IMPORTANCE, Items
from ..v8pow import pow as v8pow
from .base import Ranking, ScoringView, StrategyBase, param, register

__all__ = [
    "SCORER_DEFAULTS",
    "TIERS",
    "Clarity",
    "ClarityUsageParams",
    "ScorerSettings",
    "V1Score",
    "clarity_components",
    "js_round1",
    "js_round1s",
    "or_default",
    "v1_score",
    "v1_scores",
]


@dataclass(frozen=True)
class ClarityUsageParams:
    """Clarity v1 scoring settings, with the plugin's defaults. ``hybrid`` takes an
    explicit 0 as a value (:func:`clarity_components`); ``clarity`` reads it as its
    ``zeros`` parameter says (the plugin's ``||``: the default)."""

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


# --- Clarity v1 as the plugin's code computes it (SCORER.md, commit 88bb3988) ----------

# The plugin's defaults: RelevanceScorer's constructor and RelevancePruner's.
SCORER_DEFAULTS: Final[dict[str, float]] = {
    "halfLife": 5.0,
    "recencyWindow": 3.0,
    "recencyBonus": 20.0,
    "referenceWeight": 15.0,
    "frequencyScale": 10.0,
    "anchorBonus": 100.0,
}


@dataclass(frozen=True)
class ScorerSettings:
    """``RelevanceScorer``'s settings after its defaulting, and ``decayFactor =
    0.5 ** (1 / halfLife)`` computed once as the constructor does (with V8's pow,
    :mod:`packproof.packer.v8pow`, as every power here)."""

    half_life: float
    recency_window: float
    recency_bonus: float
    reference_weight: float
    frequency_scale: float
    anchor_bonus: float

    @classmethod
    def of(cls, given: Mapping[str, Any], zeros: Zeros = "default") -> ScorerSettings:
        """From the plugin's ``scoring`` keys: each read as ``config.X || default``
        (``zeros="honour"`` keeps an explicit 0; an absent key is the default)."""

        def read(key: str) -> float:
            value = given.get(key)
            if zeros == "honour" and value is not None:
                return float(value)
            return float(or_default(value, SCORER_DEFAULTS[key]))

        return cls(*(read(k) for k in SCORER_DEFAULTS))

    @property
    def decay_factor(self) -> float:
        # JavaScript: 1 / 0 is Infinity and 0.5 ** Infinity is 0 (half_life 0 honoured)
        return v8pow(0.5, 1.0 / self.half_life) if self.half_life else 0.0


@dataclass(frozen=True)
class V1Score:
    """One item scored by ``RelevanceScorer.calculateScore``: the final score
    (unrounded, clamped at 0), the raw sum, and the exact components."""

    final: float
    raw: float
    components: dict[str, float]
    turns_since_last_mention: float

    @property
    def breakdown(self) -> dict[str, float]:
        """What the plugin reports: each part ``Math.round(x * 10) / 10`` (halves
        up), the anchor unrounded."""
        c = self.components
        return {
            "frequency": js_round1(c["frequency"]),
            "recency": js_round1(c["recency"]),
            "utility": js_round1(c["utility"]),
            "stalenessPenalty": js_round1(c["staleness"]),
            "anchor": c["anchor"],
        }


def js_round1(x: float) -> float:
    """``Math.round(x * 10) / 10``: round half up (towards +inf) at one decimal."""
    return math.floor(x * 10 + 0.5) / 10


def v1_score(
    mentions: float,
    references: float,
    last_mention_turn: float,
    anchored: bool,
    current_turn: float,
    s: ScorerSettings,
) -> V1Score:
    """Clarity v1 ``calculateScore`` (SCORER.md "v1 scoring"), in the code's
    operation order, with ``t = max(0, current_turn - last_mention_turn)`` and
    ``W = recency_window``:

    - frequency = log2(mentions + 1) * frequency_scale
    - recency   = (1 - t / (W + 1)) * recency_bonus if t <= W else 0
    - utility   = references * reference_weight
    - staleness = (1 - decayFactor ** (t - W)) * frequency if t > W else 0
    - anchor    = anchor_bonus if anchored else 0
    - final     = max(0, frequency + recency + utility - staleness + anchor)
    """
    t = max(0.0, current_turn - last_mention_turn)
    w = s.recency_window
    frequency = math.log2(mentions + 1) * s.frequency_scale
    recency = (1 - t / (w + 1)) * s.recency_bonus if t <= w else 0.0
    utility = references * s.reference_weight
    staleness = (1 - v8pow(s.decay_factor, t - w)) * frequency if t > w else 0.0
    anchor = s.anchor_bonus if anchored else 0.0
    raw = frequency + recency + utility - staleness + anchor
    parts = {
        "frequency": frequency,
        "recency": recency,
        "utility": utility,
        "staleness": staleness,
        "anchor": anchor,
    }
    return V1Score(max(0.0, raw), raw, parts, t)


def v1_scores(
    mentions: np.ndarray,
    references: np.ndarray,
    last_mention_turns: np.ndarray,
    anchored: np.ndarray,
    current_turn: float,
    s: ScorerSettings,
) -> dict[str, np.ndarray]:
    """:func:`v1_score` of every item at once, bit for bit: the same operations in
    the same order on each item's values (``frequency``, ``recency``, ``utility``,
    ``staleness``, ``anchor`` and ``final``). Each distinct mention count's log2
    and each distinct ``t - W``'s power are computed once, by the scalar
    functions (the powers are remembered across calls: a conversation's turns
    share them)."""
    with np.errstate(all="ignore"):  # the branch not taken may divide by 0
        since = float(current_turn) - last_mention_turns.astype(np.float64)
        t = np.where(since > 0.0, since, 0.0)  # max(0.0, x): NaN and -0.0 give 0.0
        w = s.recency_window
        counts, at = np.unique(mentions.astype(np.float64), return_inverse=True)
        logs = np.array([math.log2(m + 1) for m in counts.tolist()], dtype=np.float64)
        frequency = logs[at.reshape(-1)] * s.frequency_scale
        recency = np.where(t <= w, (1 - t / (w + 1)) * s.recency_bonus, 0.0)
        utility = references.astype(np.float64) * s.reference_weight
        stale = np.flatnonzero(t > w)
        staleness = np.zeros(len(t), dtype=np.float64)
        if len(stale):
            gaps, at = np.unique(t[stale] - w, return_inverse=True)
            decay = s.decay_factor
            powers = np.array([_decay_pow(decay, g) for g in gaps.tolist()], dtype=np.float64)
            staleness[stale] = (1 - powers[at.reshape(-1)]) * frequency[stale]
        anchor = np.where(anchored.astype(bool), s.anchor_bonus, 0.0)
        raw = frequency + recency + utility - staleness + anchor
    return {
        "frequency": frequency,
        "recency": recency,
        "utility": utility,
        "staleness": staleness,
        "anchor": anchor,
        "final": np.where(raw > 0.0, raw, 0.0),
    }


@lru_cache(maxsize=1 << 14)
def _decay_pow(decay: float, gap: float) -> float:
    """``decay ** gap`` (V8's pow), remembered: both are positive or NaN here (a
    NaN key is never found again, so it is only recomputed)."""
    return v8pow(decay, gap)


def js_round1s(x: np.ndarray) -> np.ndarray:
    """:func:`js_round1` of every value, bit for bit (the floor of a finite double
    is an integer that a double holds exactly, so dividing it by 10 rounds as the
    integer division does; ``+ 0.0`` makes a -0.0 the integer 0's 0.0). The first
    value (in C order) whose ``x * 10 + 0.5`` is not finite raises as
    :func:`js_round1` does."""
    with np.errstate(over="ignore", invalid="ignore"):
        shifted = x * 10 + 0.5
    finite = np.isfinite(shifted)
    if not finite.all():
        js_round1(float(x[~finite].reshape(-1)[0]))
    out: np.ndarray = (np.floor(shifted) + 0.0) / 10
    return out


_TIER_OF_IMPORTANCE: Final = {
    "must_remember": "essential",
    "nice_to_have": "high",
    "unknown": "normal",
    "ignore": "low",
}


@register
@dataclass(frozen=True)
class Clarity(StrategyBase, ClarityUsageParams):
    """Clarity v1 as the plugin computes it (``lib/relevance-scorer.js`` and the
    tier step of ``lib/pruner.js``, commit 88bb3988; SCORER.md):
    ``tier * max(0, frequency + recency + utility - staleness + anchor)`` with the
    staleness ``(1 - decayFactor ** (t - W)) * frequency`` past the recency window,
    ``decayFactor = 0.5 ** (1 / half_life)`` computed once. Tier from importance:
    must_remember -> essential (2.0), nice_to_have -> high (1.5), unknown -> normal
    (1.0), ignore -> low (0.8); ``use_tier_multipliers=off`` is the bare scorer.

    ``zeros=default`` (the plugin): a setting or tier factor of 0 means its default
    (the code reads ``config.X || default`` and ``tierMultipliers[tier] || 1.0``);
    ``zeros=honour`` keeps the 0 (``half_life`` 0: full decay at once). Filled
    greedily like every ranked strategy; the prompt is not used."""

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
    use_tier_multipliers: str = param(
        "on", "multiply by the tier factor (the pruner's useTierMultipliers)", choices=("on", "off")
    )
    zeros: str = param(
        "default",
        "an explicit 0 setting or tier factor: 'default' as the plugin's || does, or 'honour'",
        choices=("default", "honour"),
    )

    def settings(self) -> ScorerSettings:
        """The scorer's settings after the plugin's defaulting (per ``zeros``)."""
        given = {
            "halfLife": self.half_life,
            "recencyWindow": self.recency_window,
            "recencyBonus": self.recency_bonus,
            "referenceWeight": self.reference_weight,
            "frequencyScale": self.frequency_scale,
            "anchorBonus": self.anchor_bonus,
        }
        return ScorerSettings.of(given, self.zeros)  # type: ignore[arg-type]

    def tier_settings(self) -> PrunerSettings:
        given = {
            "tierMultipliers": {t: getattr(self, "tier_" + t) for t in TIERS},
            "useTierMultipliers": self.use_tier_multipliers == "on",
        }
        return PrunerSettings.of(given)

    def rank(self, view: ScoringView) -> Ranking:
        items = view.items
        tiers = self.tier_settings()
        by_code = [
            tiers.multiplier(_TIER_OF_IMPORTANCE[name], self.zeros)  # type: ignore[arg-type]
            for name in IMPORTANCE
        ]
        table = np.array([1.0 if f is None else f for f in by_code], dtype=np.float64)
        tier = table[items.importance]
        scored = v1_scores(
            items.mentions,
            items.references,
            items.last_mention_turns,
            items.anchored,
            view.current_turn,
            self.settings(),
        )
        final = scored.pop("final")
        # item by item, as V1Score.breakdown rounds them (a non-finite part raises)
        names = ("frequency", "recency", "utility", "staleness")
        rounded = js_round1s(np.column_stack([scored[name] for name in names]))
        shown = {
            "breakdown_" + ("stalenessPenalty" if name == "staleness" else name): (
                np.ascontiguousarray(rounded[:, k])
            )
            for k, name in enumerate(names)
        }
        return Ranking(
            scores=final * tier, components={**scored, **shown, "final": final, "tier": tier}
        )
