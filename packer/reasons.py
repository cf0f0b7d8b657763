"""Reason codes of the pack trace: why each candidate is in or out.

Each candidate gets one outcome (below) plus, where they apply, ``anchored`` and
a trust reason. The list is the trace schema's enum; a test keeps them equal.
"""

from __future__ import annotations

from typing import Final

__all__ = ["OUTCOMES", "REASONS"]

PROTECTED_TAIL: Final = "protected_tail"  # in lossless-claw's fresh tail: always kept
ANCHORED: Final = "anchored"  # anchored item: always kept
WITHIN_BUDGET: Final = "within_budget"  # evictable item that fit the remaining budget
WITHIN_ITEM_LIMIT: Final = "within_item_limit"  # ... and a free max_items slot (when set)
BUDGET_EXCEEDED: Final = "budget_tokens_exceeded"  # did not fit what was left
MAX_ITEMS: Final = "max_items_reached"  # no max_items slot left
CATEGORY_CAP: Final = "category_cap"  # its category already holds its cap
CHRONOLOGICAL_STOP: Final = "chronological_stop"  # older than the chronological stop
QUARANTINED: Final = "trust_quarantined_excluded"  # excluded by trust_policy
FAIL_OPEN: Final = "trust_unknown_fail_open"  # unknown trust, allowed (fail-open)
TRUST_ALLOWED: Final = "trust_allowed"  # trusted or untrusted, allowed by trust_policy
# Cache-aware packing (packer/cacheaware.py):
KEPT_PREVIOUS: Final = "kept_from_previous_pack"  # in the previous pack, kept in place
APPENDED: Final = "appended_since_previous_pack"  # arrived since, appended
RECALL: Final = "recall_block"  # a top-ranked item the stable part lacks
APPEND_ONLY: Final = "append_only"  # an older item not in the previous pack: no re-selection
IN_PREVIOUS: Final = "in_previous_pack"  # the previous pack held it (kept on re-selection)
DROPPED_PREVIOUS: Final = "dropped_from_previous_pack"  # the previous pack held it; now out
# A policy strategy's own outcomes (openclaw-mem's pack, packer/openclaw/):
MISSING_SUMMARY: Final = "missing_summary"  # empty text: never packed
QUOTA_CAPPED: Final = "quota_event_capped"  # an event beyond the soft quota's event cap
TAIL_BUDGET_EXCEEDED: Final = "tail_budget_tokens_exceeded"  # tail line over the tail budget
WITHIN_TAIL_BUDGET: Final = "within_tail_budget"  # tail line that fit the tail budget
NOT_RETRIEVED: Final = "not_retrieved"  # no retrieval lane returned it (within the cut)
ARCHIVED: Final = "archived"  # a soft-archived record, filtered out of retrieval
SUPERSEDED: Final = "superseded"  # a retrieved record supersedes it
COVERED: Final = "covered_by_synthesis"  # a preferred synthesis card covers it
TAIL_CUT: Final = "beyond_tail_max_items"  # an older tail line beyond the tail's item cap
# Clarity's pruner (clarity-prune, packer/strategies/clarity_prune.py), in the plugin's words:
CATEGORY_FULL: Final = "category_full"  # its category already held maxItemsPerCategory
BELOW_THRESHOLD: Final = "below_threshold_target_reached"  # under pruneThreshold, target met
HARD_CAP: Final = "hard_cap"  # kept by a rule, then cut at maxContextItems

# Outcome codes, stored per candidate as int8 (index into OUTCOMES).
OUTCOMES: Final = (
    QUARANTINED,
    PROTECTED_TAIL,
    ANCHORED,
    WITHIN_BUDGET,
    BUDGET_EXCEEDED,
    MAX_ITEMS,
    CATEGORY_CAP,
    CHRONOLOGICAL_STOP,
    KEPT_PREVIOUS,
    APPENDED,
    RECALL,
    APPEND_ONLY,
    MISSING_SUMMARY,
    QUOTA_CAPPED,
    TAIL_BUDGET_EXCEEDED,
    NOT_RETRIEVED,
    ARCHIVED,
    SUPERSEDED,
    COVERED,
    TAIL_CUT,
    CATEGORY_FULL,
    BELOW_THRESHOLD,
    HARD_CAP,
)
(
    O_QUARANTINED,
    O_TAIL,
    O_ANCHORED,
    O_INCLUDED,
    O_BUDGET,
    O_MAX_ITEMS,
    O_CATEGORY,
    O_STOP,
    O_KEPT,
    O_APPENDED,
    O_RECALL,
    O_APPEND_ONLY,
    O_MISSING_SUMMARY,
    O_QUOTA_CAPPED,
    O_TAIL_BUDGET,
    O_NOT_RETRIEVED,
    O_ARCHIVED,
    O_SUPERSEDED,
    O_COVERED,
    O_TAIL_CUT,
    O_CATEGORY_FULL,
    O_BELOW_THRESHOLD,
    O_HARD_CAP,
) = range(len(OUTCOMES))
REASONS: Final = (
    *OUTCOMES,
    WITHIN_ITEM_LIMIT,
    FAIL_OPEN,
    TRUST_ALLOWED,
    IN_PREVIOUS,
    DROPPED_PREVIOUS,
    WITHIN_TAIL_BUDGET,
)
