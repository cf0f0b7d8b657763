"""openclaw-mem's pack is the same whether a request's budgets share one
reservation (the retrieval and the candidate order are then made once) or each
budget reserves anew, and its decision's outcomes and reasons are those of the
item-by-item construction (the former code, kept here as the reference), on
drawn stores: archived, superseded and covered records, cards, trust tiers,
tails, retrieval lanes or the prompt's bm25 lane."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from packproof.packer.openclaw.pack import Selection, select
from packproof.packer.openclaw.result import _CODE, _reasons, policy_decision
from packproof.packer.pipeline import reserve
from packproof.packer.reasons import (
    ARCHIVED,
    COVERED,
    NOT_RETRIEVED,
    PROTECTED_TAIL,
    SUPERSEDED,
    TAIL_CUT,
    WITHIN_BUDGET,
)
from packproof.packer.request import Request, parse_request, replaced
from packproof.packer.strategies.base import build_strategy, parse_spec

WORDS = ("alpha", "beta", "gamma", "delta", "omega")
LIFECYCLE = ("active", "stale", "consolidated", "soft-archived")
KINDS = (None, "preference", "decision", "event", "note", "fact")


def _reference_outcomes(req: Request, selection: Selection) -> tuple[list[int], list[Any]]:
    """Outcomes and reasons as ``policy_decision`` computed them item by item."""
    items = req.items
    n = len(items)
    outcome = np.zeros(n, dtype=np.int8)
    reasons: list[tuple[str, ...]] = [()] * n

    def put(i: int, token: str, listed: tuple[str, ...] = ()) -> None:
        outcome[i] = _CODE[token]
        reasons[i] = _reasons(token, listed)

    in_tail = np.zeros(n, dtype=bool)
    for line, _ in selection.tail:
        in_tail[line.position] = True
    in_tail[selection.cut_tail] = True
    evictable = np.flatnonzero(~in_tail)
    rank = np.zeros(n, dtype=np.int64)
    for k, (c, d) in enumerate(selection.memory, start=1):
        put(c.position, WITHIN_BUDGET if d.included else d.reasons[-1], d.reasons)
        rank[c.position] = k
    unlisted = [i for i in evictable[::-1].tolist() if not rank[i]]
    for i in unlisted:
        ref = items.ids[i]
        if ref in selection.covered:
            put(i, COVERED)
        elif ref in selection.superseded:
            put(i, SUPERSEDED)
        elif ref in selection.archived:
            put(i, ARCHIVED)
        else:
            put(i, NOT_RETRIEVED)
    for line, d in selection.tail:
        put(line.position, PROTECTED_TAIL if d.included else d.reasons[-1], d.reasons)
    for i in selection.cut_tail:
        put(i, TAIL_CUT)
    return outcome.tolist(), reasons


@st.composite
def stores(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 14))
    ids = [f"obs:{k}" for k in range(1, n + 1)]
    items: list[dict[str, Any]] = []
    for k, ref in enumerate(ids, start=1):
        item: dict[str, Any] = {
            "id": ref,
            "ordinal": k,
            "kind": "memory",
            "text": " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=4))),
            "trust": draw(st.sampled_from(["trusted", "unknown", "untrusted", "quarantined"])),
            "lifecycle": draw(st.sampled_from(LIFECYCLE)),
            "ts": draw(st.sampled_from(["2026-07-01T00:00:00Z", "2026-05-01", "", "bad"])),
        }
        kind = draw(st.sampled_from(KINDS))
        if kind is not None:
            item["record_kind"] = kind
        if draw(st.booleans()):
            item["supersedes"] = draw(st.lists(st.sampled_from(ids), max_size=2, unique=True))
        if draw(st.integers(0, 3)) == 0:
            sources = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=4, unique=True))
            item["synthesis"] = {"sources": sources, "fresh": draw(st.booleans())}
        items.append(item)
    tail = draw(st.integers(0, 4))
    for k in range(tail):
        items.append(
            {"id": f"tail:{k}", "ordinal": n + 1 + k, "kind": "message", "text": "alpha " * k}
        )
    request: dict[str, Any] = {
        "items": items,
        "budget_tokens": 10,
        "token_counter": "chars4",
        "ts": "2026-07-19T12:00:00+00:00",
        "fresh_tail": {"count": tail},
        "prompt": draw(st.sampled_from(["alpha", "beta gamma", "zeta", ""])),
        "trust_policy": draw(st.sampled_from(["off", "exclude_quarantined"])),
    }
    if draw(st.booleans()):
        lane = st.lists(st.sampled_from([*ids, "obs:99", "tail:0"]), max_size=8, unique=True)
        request["retrieval"] = {"fts": draw(lane), "vector": draw(lane)}
    if draw(st.booleans()):
        request["max_items"] = draw(st.integers(1, 6))
    return request


SPECS = st.sampled_from(
    [
        "openclaw-mem",
        "openclaw-mem(tail_budget=fit)",
        "openclaw-mem(profile=relevance,tail_max_items=0)",
        "openclaw-mem(include_archived=on,quotas=off,tail_budget_tokens=6)",
        "openclaw-mem(tail_max_items=1,recency_factor=off,event_max_ratio=0)",
    ]
)


@settings(max_examples=120, deadline=None)
@given(request=stores(), spec=SPECS, budgets=st.lists(st.integers(1, 40), min_size=1, max_size=4))
def test_a_shared_reservation_packs_as_fresh_ones(
    request: dict[str, Any], spec: str, budgets: list[int]
) -> None:
    name, params = parse_spec(spec)
    request = {**request, "strategy": {"name": name, "params": params}}
    strategy = build_strategy(name, params)
    base = parse_request(request)
    shared = reserve(base)
    for budget in [*budgets, *budgets]:  # each twice: the second reads what the first made
        req = replaced(base, budget_tokens=budget)
        got = strategy.decide(req, shared)  # type: ignore[attr-defined]
        fresh = parse_request({**request, "budget_tokens": budget})
        want = strategy.decide(fresh, reserve(fresh))  # type: ignore[attr-defined]
        for name in ("outcome", "in_tail", "rank", "pack_order", "evictable"):
            assert getattr(got, name).tolist() == getattr(want, name).tolist(), name
        assert got.ranking.scores is not None and want.ranking.scores is not None
        assert got.ranking.scores.tobytes() == want.ranking.scores.tobytes()
        assert got.explained.reasons == want.explained.reasons
        assert got.explained.bundle_text == want.explained.bundle_text
        assert got.explained.extensions == want.explained.extensions
        assert (got.tail_start, got.tail_tokens, got.remaining_tokens, got.evictable_slots) == (
            want.tail_start,
            want.tail_tokens,
            want.remaining_tokens,
            want.evictable_slots,
        )
        selection = select(strategy, req, shared)  # type: ignore[arg-type]
        decision = policy_decision(req, shared, selection)
        outcome, reasons = _reference_outcomes(req, selection)
        assert decision.outcome.tolist() == outcome
        assert list(decision.explained.reasons) == reasons
