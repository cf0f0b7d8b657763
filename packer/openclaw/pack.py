"""openclaw-mem's ``pack`` selection, step by step (``cmd_pack``; POLICY.md 1-13).

lanes -> RRF fusion, cut to ``candidate_limit`` -> ids that are not memory
items dropped -> soft-archived dropped -> composite score and re-sort ->
superseded dropped -> trust decisions -> synthesis cards preferred -> memory
candidates, sorted -> tail reservation -> soft quotas -> first-fit memory fill
-> tail fill -> receipts. The memory candidates are the request's items outside
packproof's fresh tail; the tail lines are the items of that tail, in ordinal
order. :mod:`packproof.packer.openclaw.result` turns the outcome into a
:class:`~packproof.packer.policy.PolicyDecision`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

import numpy as np

from ..model import IMPORTANCE, TRUST
from ..strategies.base import ScoringView
from .fill import Decision, TailLine, fill_memory, fill_tail, reserve_tail
from .filters import drop_archived, drop_superseded
from .fusion import candidate_limit, rrf_fuse
from .lanes import Lanes, lexical_lane, retrieval_lanes
from .order import Candidate, sort_candidates
from .quotas import Quotas, apply_soft_quotas
from .receipts import pack_receipt
from .result import policy_decision
from .scoring import Factors, composite_scores, reference_time, ts_sort_value
from .synthesis import Card, Preference, prefer_cards
from .trust import TrustDecision, trust_decisions

if TYPE_CHECKING:
    from ..model import Items
    from ..pipeline import Reserved
    from ..policy import PolicyDecision
    from ..records import Retrieval
    from ..request import Request
    from ..strategies.openclaw_mem import OpenclawMem

__all__ = ["Retrieved", "Selection", "pack_openclaw", "retrieve", "select"]


@dataclass(frozen=True)
class Retrieved:
    """The retrieval step's outcome (POLICY.md 3, 4)."""

    lanes: Lanes
    rrf: dict[str, float]  # fused score per fused ref (within candidate_limit)
    visible: list[str]  # fused memory items, not archived, in scored order
    final: dict[str, float]  # composite score per visible ref (composite profile)
    kept: list[str]  # visible refs not superseded
    archived: set[str]
    superseded: set[str]


@dataclass(frozen=True)
class Selection:
    """Everything openclaw-mem's pack decided, by ref, and its receipts."""

    lanes: Lanes
    memory: list[tuple[Candidate, Decision]]  # fill order (the trace's)
    tail: list[tuple[TailLine, Decision]]
    cut_tail: list[int]  # positions of tail lines beyond tail_max_items
    archived: set[str]
    superseded: set[str]
    covered: set[str]
    receipt: dict[str, Any]

    @property
    def selected(self) -> list[int]:
        """Positions of the packed items in pack order: memory in fill order, then tail."""
        memory = [c.position for c, d in self.memory if d.included]
        return memory + [line.position for line, d in self.tail if d.included]

    def bundle_text(self) -> str:
        """One ``- [ref] text`` line per packed item, joined by ``\\n`` (the
        texts as they are: line breaks inside them stay)."""
        lines = [f"- [{c.ref}] {c.text}" for c, d in self.memory if d.included]
        lines += [f"- [{line.ref}] {line.text}" for line, d in self.tail if d.included]
        return "\n".join(lines)


def pack_openclaw(strategy: OpenclawMem, req: Request, reserved: Reserved) -> PolicyDecision:
    """The pack of ``req`` under ``strategy``, as a policy's decision."""
    return policy_decision(req, reserved, select(strategy, req, reserved))


def retrieve(
    strategy: OpenclawMem, req: Request, memory_at: np.ndarray, position: dict[str, int], most: int
) -> Retrieved:
    """Lanes, fusion cut to ``most``, non-items and soft-archived records dropped,
    the composite re-sort (stable: ties keep the fused order), superseded records
    dropped. ``position``: each memory item's position by id."""
    items = req.items
    records = items.record_fields
    if req.retrieval is not None:
        lanes = retrieval_lanes(req.retrieval, most)
    else:
        memory = items.take(memory_at)
        view = ScoringView(memory, req.prompt, req.current_turn)
        lanes = lexical_lane(memory, strategy.rank(view), most)
    rrf = dict(rrf_fuse(lanes.fused(), most))
    found = [ref for ref in rrf if ref in position]
    visible = found
    if strategy.include_archived == "off":
        visible = drop_archived(found, position, records)
    final: dict[str, float] = {}
    if strategy.profile == "composite":
        factors = Factors(
            relevance=strategy.relevance_factor == "on",
            importance=strategy.importance_factor == "on",
            recency=strategy.recency_factor == "on",
            use=strategy.use_factor == "on",
            state=strategy.state_factor == "on",
        )
        final = composite_scores(visible, rrf, position, records, reference_time(req.ts), factors)
        visible = sorted(visible, key=lambda ref: -final[ref])
    kept, superseded = drop_superseded(visible, position, records)
    return Retrieved(lanes, rrf, visible, final, kept, set(found) - set(visible), superseded)


@dataclass(frozen=True)
class _Memory:
    """What a reservation fixes for every pack of its request: the memory
    items' positions (those outside the fresh tail), each one's position by
    id, the tail's positions, and the store's synthesis cards (newest first)."""

    at: np.ndarray
    position: dict[str, int]
    tail_at: list[int]
    cards: list[Card]

    @classmethod
    def of(cls, items: Items, reserved: Reserved) -> _Memory:
        records = items.record_fields
        memory_at = np.flatnonzero(~reserved.in_tail)
        cards = [
            Card(items.ids[i], synthesis)
            for i in memory_at[::-1].tolist()
            if (synthesis := records.synthesis[i]) is not None
        ]
        return cls(
            memory_at,
            {items.ids[i]: i for i in memory_at.tolist()},
            np.flatnonzero(reserved.in_tail).tolist(),
            cards,
        )


@dataclass(frozen=True)
class _Ordered:
    """What openclaw-mem decides before the budget: the retrieval, the trust
    decisions, the card preference and the memory candidates in its order."""

    got: Retrieved
    decisions: dict[str, TrustDecision] | None
    preference: Preference
    candidates: list[Candidate]

    @classmethod
    def of(cls, strategy: OpenclawMem, req: Request, memory: _Memory, most: int) -> _Ordered:
        position = memory.position
        got = retrieve(strategy, req, memory.at, position, most)
        decisions: dict[str, TrustDecision] | None = None
        if req.trust_policy != "off":
            trust = req.items.trust
            decisions = trust_decisions(got.kept, {r: TRUST[trust[position[r]]] for r in got.kept})
        preference = prefer_cards(got.kept[:most], memory.cards, most)
        candidates = sort_candidates(
            [
                _candidate(req, ref, position[ref], index, got, (decisions or {}).get(ref))
                for index, ref in enumerate(preference.refs)
            ]
        )
        return cls(got, decisions, preference, candidates)


@dataclass
class _Shared:
    """A reservation's :class:`_Memory`, and its :class:`_Ordered` by what they
    read of the request besides its items (the budget is not among it: a budget
    sweep retrieves and orders once). Both are read, never changed."""

    memory: _Memory
    ordered: dict[tuple[Any, ...], tuple[Retrieval | None, _Ordered]]


# Per reservation, while it lives (one per request, shared by every budget).
_SHARED: WeakKeyDictionary[Reserved, _Shared] = WeakKeyDictionary()


def _before_budget(
    strategy: OpenclawMem, req: Request, reserved: Reserved, most: int
) -> tuple[_Memory, _Ordered]:
    """The memory and the ordered candidates, each made once per reservation
    (and the candidates per strategy, prompt, turn, clock, trust policy,
    retrieval lists and ``most``); a reservation of other items is not shared."""
    if reserved.items is not req.items:
        memory = _Memory.of(req.items, reserved)
        return memory, _Ordered.of(strategy, req, memory, most)
    shared = _SHARED.get(reserved)
    if shared is None:
        shared = _SHARED[reserved] = _Shared(_Memory.of(req.items, reserved), {})
    key = (
        strategy,
        req.prompt,
        req.current_turn,
        req.ts,
        req.trust_policy,
        most,
        id(req.retrieval),
    )
    known = shared.ordered.get(key)
    if known is None or known[0] is not req.retrieval:
        made = _Ordered.of(strategy, req, shared.memory, most)
        known = shared.ordered[key] = (req.retrieval, made)
    return shared.memory, known[1]


def select(strategy: OpenclawMem, req: Request, reserved: Reserved) -> Selection:
    """openclaw-mem's selection for ``req`` (see the module docstring)."""
    items = req.items
    limit = req.max_items if req.max_items is not None else strategy.limit
    most = candidate_limit(limit)

    table, before = _before_budget(strategy, req, reserved, most)
    got, decisions, preference, ordered = (
        before.got,
        before.decisions,
        before.preference,
        before.candidates,
    )
    tail_at = table.tail_at
    keep = len(tail_at) if strategy.tail_max_items <= 0 else strategy.tail_max_items
    cut_tail, tail_at = tail_at[: max(0, len(tail_at) - keep)], tail_at[-keep:] if keep else []

    lines = [TailLine(items.ids[i], i, items.texts[i], int(items.tokens[i])) for i in tail_at]
    tail_budget = strategy.tail_budget_tokens
    if strategy.tail_budget == "fit":  # the caller sizes --tail-budget-tokens to its tail
        tail_budget = sum(line.tokens for line in lines)
    reservation = reserve_tail(req.budget_tokens, limit, len(lines), tail_budget)
    capped: frozenset[str] = frozenset()
    hits: list[dict[str, Any]] | None = None
    if strategy.quotas == "on":
        quotas = Quotas(strategy.preference_min, strategy.decision_min, strategy.event_max_ratio)
        plan = apply_soft_quotas(ordered, reservation.primary_limit, quotas)
        ordered, capped, hits = plan.order, plan.capped, plan.hits
    filled, primary_used = fill_memory(
        ordered, capped, reservation.primary_budget, reservation.primary_limit
    )
    tail_filled, tail_used = fill_tail(lines, reservation)
    memory = list(zip(ordered, filled, strict=True))
    tail = list(zip(lines, tail_filled, strict=True))
    return Selection(
        lanes=got.lanes,
        memory=memory,
        tail=tail,
        cut_tail=cut_tail,
        archived=set(got.archived),
        superseded=set(got.superseded),
        covered=set(preference.covered),
        receipt=pack_receipt(
            memory,
            tail,
            reservation,
            (primary_used, tail_used),
            preference,
            decisions,
            hits,
            strategy.profile,
        ),
    )


def _candidate(
    req: Request,
    ref: str,
    i: int,
    index: int,
    got: Retrieved,
    decision: TrustDecision | None,
) -> Candidate:
    """Candidate ``index`` of the list, item ``i``. A record that was not
    retrieved (a preferred synthesis card read from the store) has no parsed
    detail: its importance and trust are unknown, and it has no final score or
    trust decision."""
    items = req.items
    records = items.record_fields
    text = items.texts[i]
    detailed = ref in got.visible
    return Candidate(
        ref=ref,
        position=i,
        index=index,
        text=text,
        tokens=int(items.tokens[i]) if text else 0,
        kind=(records.kinds[i] or "").strip().lower(),
        importance=IMPORTANCE[items.importance[i]] if detailed else "unknown",
        trust=TRUST[items.trust[i]] if detailed else "unknown",
        rrf=got.rrf.get(ref, 0.0),
        final=got.final.get(ref),
        fts=ref in got.lanes.fts,
        semantic=ref in got.lanes.vector or ref in got.lanes.vector_en,
        ts_value=ts_sort_value(records.ts[i]),
        synthesis=records.synthesis[i] is not None,
        decision=decision,
    )
