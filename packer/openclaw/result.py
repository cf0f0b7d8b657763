"""openclaw-mem's selection as a packproof :class:`~packproof.packer.policy.PolicyDecision`.

Every item gets a packproof outcome, and its reasons (the outcome's token first,
then openclaw-mem's own, in its order, each once):

- a packed memory candidate: ``within_budget``; a packed tail line: ``protected_tail``;
- a candidate or tail line left out: the token of the rule that decided it
  (``missing_summary``, ``trust_quarantined_excluded``, ``quota_event_capped``,
  ``max_items_reached``, ``budget_tokens_exceeded``, ``tail_budget_tokens_exceeded``);
- an item openclaw-mem never lists: ``not_retrieved`` (no lane returned it within
  ``candidate_limit``), ``archived``, ``superseded``, ``covered_by_synthesis``, or
  ``beyond_tail_max_items`` (a tail line cut before numbering).

The memory items are the evictable ones: those openclaw-mem lists rank in its
order (the trace's), the others after them, newest first. Each listed one's
score is its final composite score, else its fused score. ``remaining_tokens``
and ``evictable_slots`` are the memory lane's budget and slots; ``tail_tokens``
what the tail lines used."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import numpy as np

from ..policy import PolicyDecision, PolicyOutcome
from ..reasons import (
    ARCHIVED,
    COVERED,
    NOT_RETRIEVED,
    OUTCOMES,
    PROTECTED_TAIL,
    SUPERSEDED,
    TAIL_CUT,
    WITHIN_BUDGET,
)
from ..strategies.base import Ranking

if TYPE_CHECKING:
    from ..pipeline import Reserved
    from ..request import Request
    from .pack import Selection

__all__ = ["EXTENSION", "policy_decision"]

# The trace's extensions key of openclaw-mem's receipts.
EXTENSION: Final = "openclaw_mem"
_CODE: Final = {token: code for code, token in enumerate(OUTCOMES)}
# An outcome's reasons when openclaw-mem gives none of its own: its token alone.
_ALONE: Final = tuple((token,) for token in OUTCOMES)


def _reasons(outcome: str, listed: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The outcome's token, then openclaw-mem's own, each once (a quarantined
    record's twice-listed reason is listed once)."""
    return (outcome, *(r for r in dict.fromkeys(listed) if r != outcome))


def policy_decision(req: Request, reserved: Reserved, selection: Selection) -> PolicyDecision:
    """``selection`` as outcomes, reasons, ranks and scores over every item of
    ``req`` (the memory items are those outside ``reserved``'s fresh tail)."""
    items = req.items
    n = len(items)
    outcome = np.zeros(n, dtype=np.int8)
    # an item's own reasons when openclaw-mem gave it some; else its outcome's token
    listed: dict[int, tuple[str, ...]] = {}
    decided = np.zeros(n, dtype=bool)

    def put(i: int, token: str, reasons: tuple[str, ...]) -> None:
        outcome[i] = _CODE[token]
        listed[i] = _reasons(token, reasons)
        decided[i] = True

    evictable = np.flatnonzero(~reserved.in_tail)
    rank = np.zeros(n, dtype=np.int64)
    score = np.full(n, np.nan)
    rrf = np.full(n, np.nan)
    final = np.full(n, np.nan)
    for k, (c, d) in enumerate(selection.memory, start=1):
        put(c.position, WITHIN_BUDGET if d.included else d.reasons[-1], d.reasons)
        rank[c.position] = k
        rrf[c.position] = c.rrf
        if c.final is not None:
            final[c.position] = c.final
        score[c.position] = c.rrf if c.final is None else c.final
    newest_first = evictable[::-1]
    unlisted = newest_first[rank[newest_first] == 0]
    rank[unlisted] = np.arange(len(selection.memory) + 1, len(evictable) + 1)
    is_unlisted = np.zeros(n, dtype=bool)
    is_unlisted[unlisted] = True
    outcome[unlisted] = _CODE[NOT_RETRIEVED]
    decided[unlisted] = True
    # an unlisted item's rule: covered, else superseded, else archived (ids are
    # unique: each ref is at most one item), else not retrieved
    position = items.position
    for refs, token in (
        (selection.archived, ARCHIVED),
        (selection.superseded, SUPERSEDED),
        (selection.covered, COVERED),
    ):
        for ref in refs:
            i = position.get(ref)
            if i is not None and is_unlisted[i]:
                outcome[i] = _CODE[token]
    in_tail = np.zeros(n, dtype=bool)
    tail_used = 0
    for line, d in selection.tail:
        in_tail[line.position] = True
        put(line.position, PROTECTED_TAIL if d.included else d.reasons[-1], d.reasons)
        tail_used += line.tokens if d.included else 0
    for i in selection.cut_tail:
        put(i, TAIL_CUT, ())
    reasons: list[tuple[str, ...]] = list(map(_ALONE.__getitem__, outcome.tolist()))
    for i in np.flatnonzero(~decided).tolist():
        reasons[i] = ()
    for i, own in listed.items():
        reasons[i] = own

    components = {"rrf": rrf[evictable]}
    if selection.receipt["scoring_profile"] == "composite":
        components["final"] = final[evictable]
    ranking = Ranking(scores=score[evictable], components=components, terms=selection.lanes.terms)
    policy = selection.receipt["policy"]
    tail_at = np.flatnonzero(in_tail)
    return PolicyDecision(
        ranking=ranking,
        evictable=evictable,
        outcome=outcome,
        in_tail=in_tail,
        rank=rank,
        tail_start=int(tail_at[0]) if len(tail_at) else None,
        tail_tokens=tail_used,
        remaining_tokens=policy["primary_budget_tokens"],
        evictable_slots=policy["primary_item_limit"],
        pack_order=np.array(selection.selected, dtype=np.int64),
        explained=PolicyOutcome(
            reasons=reasons,
            bundle_text=selection.bundle_text(),
            extensions={EXTENSION: selection.receipt},
        ),
    )
