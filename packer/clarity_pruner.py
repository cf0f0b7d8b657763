"""The Clarity plugin's v1 pruner (``lib/pruner.js``, commit 88bb3988), as its code
decides keep and prune: rules (a)-(h) of ``../shared/data/clarity/SCORER.md`` over
the scores of :func:`packproof.packer.strategies.clarity.v1_score`, with the
plugin's reasons, order and hard cap. Proved on the plugin's recorded outputs by
``packproof conformance clarity`` (docs/clarity.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = [
    "PRUNER_DEFAULTS",
    "TIERS",
    "PrunerDecision",
    "PrunerItem",
    "PrunerResult",
    "PrunerSettings",
    "Zeros",
    "category_of",
    "or_default",
    "v1_prune",
]

Zeros = Literal["default", "honour"]
TIERS: Final = ("essential", "high", "normal", "low")

PRUNER_DEFAULTS: Final[dict[str, Any]] = {
    "pruneThreshold": 8,
    "strictModePreserveThreshold": 25,
    "maxItemsPerCategory": 20,
    "targetContextItems": 30,
    "maxContextItems": 50,
    "minMentionsPreserve": 3,
    "tierMultipliers": {"essential": 2.0, "high": 1.5, "normal": 1.0, "low": 0.8},
    "useTierMultipliers": True,
}


def or_default(value: Any, default: Any) -> Any:
    """JavaScript's ``value || default``: every falsy value (0, -0, NaN, None,
    "", False) gives the default."""
    falsy = value is None or value is False or value == "" or value == 0
    return default if falsy or (isinstance(value, float) and math.isnan(value)) else value


@dataclass(frozen=True)
class PrunerSettings:
    """``RelevancePruner``'s settings after its defaulting."""

    prune_threshold: float
    strict_mode_preserve_threshold: float
    max_items_per_category: float
    target_context_items: float
    max_context_items: float
    min_mentions_preserve: float
    tier_multipliers: Mapping[str, float]
    use_tier_multipliers: bool

    @classmethod
    def of(cls, given: Mapping[str, Any], passed_as: str = "config") -> PrunerSettings:
        """From the plugin's ``pruning`` keys. ``passed_as="config"`` (as index.js
        passes them): the defaults, then every given key verbatim (a 0 stays 0, a
        ``tierMultipliers`` object replaces the defaults whole);
        ``"top-level"``: each key read with ``||``, ``useTierMultipliers`` true
        unless exactly false."""
        if passed_as == "config":
            merged = {**PRUNER_DEFAULTS, **given}
            use = bool(merged["useTierMultipliers"])
        else:
            merged = {k: or_default(given.get(k), d) for k, d in PRUNER_DEFAULTS.items()}
            use = given.get("useTierMultipliers") is not False
        return cls(
            merged["pruneThreshold"],
            merged["strictModePreserveThreshold"],
            merged["maxItemsPerCategory"],
            merged["targetContextItems"],
            merged["maxContextItems"],
            merged["minMentionsPreserve"],
            dict(merged["tierMultipliers"] or {}),
            use,
        )

    def multiplier(self, tier: str, zeros: Zeros = "default") -> float | None:
        """``tierMultipliers[tier] || 1.0`` (None when multipliers are off): a
        missing or unknown tier and a 0 give 1.0 (``zeros="honour"`` keeps a 0)."""
        if not self.use_tier_multipliers:
            return None
        value = self.tier_multipliers.get(tier)
        if zeros == "honour" and value is not None:
            return float(value)
        return float(or_default(value, 1.0))


def category_of(item_id: str) -> str:
    """``_categorizeItem``: by the id alone, first match wins."""
    if item_id.startswith("project:") or "_" in item_id:
        return "project"
    if item_id.startswith("tool:"):
        return "tool"
    if item_id.startswith("file:") or item_id.endswith(".md"):
        return "file"
    if item_id.startswith("keyword:"):
        return "topic"
    return "other"


@dataclass(frozen=True)
class PrunerItem:
    """What ``evaluate`` reads of one item."""

    id: str
    final_score: float
    mentions: float
    anchored: bool
    tier: str = "normal"
    category: str | None = None  # None: the plugin's ``category_of(id)``


@dataclass(frozen=True)
class PrunerDecision:
    """One item's verdict: its adjusted score, category, keep or prune, the rule
    that decided (a ``hard_cap(rule)`` when the cap cut a kept item) and its
    position in the walk."""

    id: str
    tier_multiplier: float | None
    adjusted_score: float
    category: str
    keep: bool
    reason: str
    position: int


@dataclass(frozen=True)
class PrunerResult:
    order: list[str]
    keep: list[str]
    prune: list[str]
    decisions: dict[str, PrunerDecision]


def _category(it: PrunerItem) -> str:
    return it.category if it.category is not None else category_of(it.id)


def _js_slice_end(n: int, end: float) -> int:
    """``Array.prototype.slice(0, end)``'s end index for a list of ``n``."""
    if math.isnan(end):
        return 0
    if math.isinf(end):
        return n if end > 0 else 0
    k = int(end)  # truncates towards 0
    return min(k, n) if k >= 0 else max(n + k, 0)


def v1_prune(
    scored: Sequence[PrunerItem], p: PrunerSettings, strict: bool, zeros: Zeros = "default"
) -> PrunerResult:
    """``RelevancePruner.evaluate`` (SCORER.md "The pruner"): ``scored`` in the
    scorer's order (untracked context items appended). Sort stably by adjusted
    score, walk with a count of kept items per category, first rule that applies:
    (a) anchored keep; (b) strict and adjusted >= strictModePreserveThreshold keep;
    (c) mentions >= minMentionsPreserve keep; (d) strict and tier essential keep;
    (e) category already at maxItemsPerCategory prune; (f) adjusted >=
    pruneThreshold keep; (g) fewer than targetContextItems kept keep; (h) prune.
    Then the kept list is cut at maxContextItems, the cut going to the prune list."""
    rows = []
    for it in scored:
        m = p.multiplier(it.tier, zeros)
        rows.append((it, m, it.final_score * m if m is not None else it.final_score))
    walk = sorted(rows, key=lambda r: -r[2])  # stable: ties keep the scorer's order
    keep: list[tuple[PrunerItem, str]] = []
    prune: list[tuple[PrunerItem, str]] = []
    per_category: dict[str, int] = {}
    for it, _, adjusted in walk:
        category = _category(it)
        if it.anchored:
            reason = "anchored"
        elif strict and adjusted >= p.strict_mode_preserve_threshold:
            reason = "strict_score"
        elif it.mentions >= p.min_mentions_preserve:
            reason = "min_mentions"
        elif strict and it.tier == "essential":
            reason = "strict_essential"
        elif per_category.get(category, 0) >= p.max_items_per_category:
            prune.append((it, "category_full"))
            continue
        elif adjusted >= p.prune_threshold:
            reason = "score_threshold"
        elif len(keep) < p.target_context_items:
            reason = "under_target"
        else:
            prune.append((it, "below_threshold_target_reached"))
            continue
        keep.append((it, reason))
        per_category[category] = per_category.get(category, 0) + 1
    end = _js_slice_end(len(keep), float(p.max_context_items))
    cut = [(it, f"hard_cap({reason})") for it, reason in keep[end:]]
    keep, prune = keep[:end], prune + cut
    position = {r[0].id: i for i, r in enumerate(walk)}
    info = {r[0].id: r for r in rows}
    decisions = {
        it.id: PrunerDecision(
            it.id,
            info[it.id][1],
            info[it.id][2],
            _category(it),
            kept,
            reason,
            position[it.id],
        )
        for kept, group in ((True, keep), (False, prune))
        for it, reason in group
    }
    return PrunerResult(
        [r[0].id for r in walk], [i.id for i, _ in keep], [i.id for i, _ in prune], decisions
    )


# Clarity's pruner tiers, by packproof importance (the data README's request mapping).
