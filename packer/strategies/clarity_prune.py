"""Clarity's v1 pruner (``lib/pruner.js``, commit 88bb3988) as a selection mode of
``clarity``: a strategy that decides the whole pack
(:class:`~packproof.packer.strategies.base.Policy`).

Every evictable item and every anchor (not the fresh tail, not a quarantined
item) is scored by the ``clarity`` scorer, in the scorer's order (final score
descending, stable over the conversation's order), with its tier from its
importance and its category from its ``category`` field (the plugin's
``category_of(id)`` when it has none). :func:`~packproof.packer.clarity_pruner.v1_prune`
decides keep or prune with the plugin's rules, reasons and order. Then the token
budget: the fresh tail and the anchors as packproof always keeps them, then the
kept items in the pruner's order, first fit (a misfit is skipped:
``budget_tokens_exceeded``; past ``max_items``: ``max_items_reached``). A pruned
item's outcome is the plugin's reason (``category_full``,
``below_threshold_target_reached``, ``hard_cap``). An anchor stays packed even
when the pruner's hard cap cuts it (packproof's anchor policy; the receipt shows
the plugin's decision). Receipts in the trace's ``extensions.clarity_pruner``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final

import numpy as np

from ..clarity_pruner import TIERS, PrunerItem, PrunerSettings, category_of, v1_prune
from ..model import IMPORTANCE
from ..policy import PolicyDecision, PolicyOutcome
from ..reasons import (
    BELOW_THRESHOLD,
    CATEGORY_FULL,
    O_ANCHORED,
    O_BELOW_THRESHOLD,
    O_BUDGET,
    O_CATEGORY_FULL,
    O_HARD_CAP,
    O_INCLUDED,
    O_MAX_ITEMS,
    OUTCOMES,
    WITHIN_BUDGET,
)
from .base import ScoringView, param, register
from .clarity import _TIER_OF_IMPORTANCE, Clarity

if TYPE_CHECKING:
    from ..pipeline import Reserved
    from ..request import Request

__all__ = ["EXTENSION", "ClarityPrune"]

# The trace's extensions key of the pruner's receipts.
EXTENSION: Final = "clarity_pruner"
_PRUNED: Final = {CATEGORY_FULL: O_CATEGORY_FULL, BELOW_THRESHOLD: O_BELOW_THRESHOLD}


@register
@dataclass(frozen=True)
class ClarityPrune(Clarity):
    """Clarity v1's pruner (``lib/pruner.js``, commit 88bb3988) over the ``clarity``
    scores (same parameters): keep or prune by the plugin's rules in its order
    (anchored, strict score, minimum mentions, strict essential, category full,
    score threshold, under target, else prune; then the hard cap), then the
    budget: fresh tail and anchors first, the kept items in the pruner's order,
    first fit. Settings are the plugin's ``pruning`` keys as index.js passes
    them (verbatim: a 0 stays 0). Receipts in ``extensions.clarity_pruner``."""

    name: ClassVar[str] = "clarity-prune"
    formula: ClassVar[str] = (
        "keep = v1_prune(tier * clarity score; rules a-h, hard cap), then first fit in its order"
    )

    prune_threshold: float = param(8.0, "pruneThreshold: adjusted score kept outright")
    strict_mode_preserve_threshold: float = param(
        25.0, "strictModePreserveThreshold: adjusted score kept in strict mode"
    )
    max_items_per_category: float = param(
        20.0, "maxItemsPerCategory: kept items per category before pruning"
    )
    target_context_items: float = param(
        30.0, "targetContextItems: items kept below the threshold until this many"
    )
    max_context_items: float = param(50.0, "maxContextItems: the hard cap on kept items")
    min_mentions_preserve: float = param(3.0, "minMentionsPreserve: mentions kept outright")
    strict_mode: str = param("off", "strictMode (the plugin's strict mode)", choices=("off", "on"))

    def pruner_settings(self) -> PrunerSettings:
        """The pruner's settings as index.js passes ``pruning`` (verbatim)."""
        return PrunerSettings.of(
            {
                "pruneThreshold": self.prune_threshold,
                "strictModePreserveThreshold": self.strict_mode_preserve_threshold,
                "maxItemsPerCategory": self.max_items_per_category,
                "targetContextItems": self.target_context_items,
                "maxContextItems": self.max_context_items,
                "minMentionsPreserve": self.min_mentions_preserve,
                "tierMultipliers": {t: getattr(self, "tier_" + t) for t in TIERS},
                "useTierMultipliers": self.use_tier_multipliers == "on",
            }
        )

    def decide(self, req: Request, reserved: Reserved) -> PolicyDecision:
        return _decide(self, req, reserved)


def _decide(s: ClarityPrune, req: Request, reserved: Reserved) -> PolicyDecision:
    from ..render import _bundle_line  # the renderer loads the pipeline

    items = req.items
    n = len(items)
    # the pruner sees every item but the fresh tail and the quarantined ones
    seen = np.flatnonzero((reserved.outcome == O_INCLUDED) | (reserved.outcome == O_ANCHORED))
    view = ScoringView(items.take(seen), req.prompt, req.current_turn)
    ranking = s.rank(view)
    final = ranking.components["final"]
    tier_of = {int(i): _TIER_OF_IMPORTANCE[IMPORTANCE[items.importance[i]]] for i in seen.tolist()}
    scored = sorted(range(len(seen)), key=lambda k: -float(final[k]))  # stable: ordinal order
    by_id: dict[str, int] = {}
    walk = []
    for k in scored:
        i = int(seen[k])
        by_id[items.ids[i]] = i
        category = items.categories[i]
        walk.append(
            PrunerItem(
                items.ids[i],
                float(final[k]),
                float(items.mentions[i]),
                bool(items.anchored[i]),
                tier_of[i],
                category if category is not None else category_of(items.ids[i]),
            )
        )
    result = v1_prune(walk, s.pruner_settings(), s.strict_mode == "on", s.zeros)  # type: ignore[arg-type]

    outcome = reserved.outcome.copy()
    anchored = reserved.outcome == O_ANCHORED
    remaining = max(0, req.budget_tokens - reserved.tail_tokens - reserved.anchor_tokens)
    left = remaining
    slots = reserved.evictable_slots
    used_slots = 0
    budget: dict[str, str] = {}
    for ref in result.keep:
        i = by_id[ref]
        if anchored[i]:
            continue
        tokens = int(items.tokens[i])
        if slots is not None and used_slots >= slots:
            outcome[i] = O_MAX_ITEMS
        elif tokens <= left:
            outcome[i] = O_INCLUDED
            left -= tokens
            used_slots += 1
        else:
            outcome[i] = O_BUDGET
        budget[ref] = OUTCOMES[outcome[i]]
    for ref in result.prune:
        i = by_id[ref]
        if anchored[i]:
            continue  # packproof keeps its anchors (the plugin's hard cap may cut one)
        reason = result.decisions[ref].reason
        outcome[i] = O_HARD_CAP if reason.startswith("hard_cap(") else _PRUNED[reason]
    reasons = [(OUTCOMES[code],) for code in outcome.tolist()]

    # the evictable ones rank in the pruner's walk: kept first (its keep order), then pruned
    evictable = np.flatnonzero(reserved.outcome == O_INCLUDED)
    pruner_rank = {ref: r for r, ref in enumerate(result.keep + result.prune, start=1)}
    rank = np.zeros(n, dtype=np.int64)
    in_order = sorted(evictable.tolist(), key=lambda i: pruner_rank[items.ids[i]])
    rank[in_order] = np.arange(1, len(in_order) + 1)
    position = {int(i): k for k, i in enumerate(seen.tolist())}
    keep_evictable = np.array([position[int(i)] for i in evictable.tolist()], dtype=np.int64)
    sub_ranking = type(ranking)(
        scores=None if ranking.scores is None else ranking.scores[keep_evictable],
        components={k: v[keep_evictable] for k, v in ranking.components.items()},
    )
    packed = np.flatnonzero((outcome == O_INCLUDED) | (outcome == O_ANCHORED) | reserved.in_tail)
    receipt: dict[str, Any] = {
        "strict_mode": s.strict_mode == "on",
        "order": result.order,
        "keep": result.keep,
        "prune": result.prune,
        "decisions": {
            ref: {
                "adjusted_score": d.adjusted_score,
                "tier_multiplier": d.tier_multiplier,
                "category": d.category,
                "decision": "keep" if d.keep else "prune",
                "reason": d.reason,
                "position": d.position,
                **({"budget": budget[ref]} if ref in budget else {}),
            }
            for ref, d in result.decisions.items()
        },
        "stats": {
            "totalEvaluated": len(result.decisions),
            "keeping": len(result.keep),
            "pruning": len(result.prune),
            "anchoredKept": sum(1 for ref in result.keep if items.anchored[by_id[ref]]),
            "packed": sum(1 for token in budget.values() if token == WITHIN_BUDGET),
        },
        "budget": {"remaining_tokens": remaining, "unused_tokens": left},
    }
    return PolicyDecision(
        ranking=sub_ranking,
        evictable=evictable,
        outcome=outcome,
        in_tail=reserved.in_tail.copy(),
        rank=rank,
        tail_start=reserved.tail_start,
        tail_tokens=reserved.tail_tokens,
        remaining_tokens=remaining,
        evictable_slots=slots,
        pack_order=packed,
        explained=PolicyOutcome(
            reasons=reasons,
            bundle_text="\n".join(_bundle_line(items.ids[i], items.texts[i]) for i in packed),
            extensions={EXTENSION: receipt},
        ),
        anchored=reserved.anchored,
        anchor_tokens=reserved.anchor_tokens,
    )
