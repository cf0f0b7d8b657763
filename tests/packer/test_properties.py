"""Properties of every registered strategy, on random requests (hypothesis).

Parametrised over the whole registry, so a new strategy is tested for free.
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from packproof.packer import pack
from packproof.packer.jsonio import dumps
from packproof.packer.model import QUARANTINED
from packproof.packer.strategies import REGISTRY, is_policy_name

WORDS = [
    "deploy",
    "rollback",
    "plan",
    "the",
    "a",
    "数据库",
    "迁移",
    "😀",
    "naïve",
    "x1",
    "login-flow",
    "",
    "Plan",
]

item_st = st.fixed_dictionaries(
    {
        "text": st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join),
        "role": st.sampled_from(["user", "assistant", "tool", "system"]),
        "kind": st.sampled_from(["message", "message", "summary", "memory"]),
        "trust": st.sampled_from(["trusted", "unknown", "untrusted", "quarantined"]),
        "importance": st.sampled_from(["must_remember", "nice_to_have", "unknown", "ignore"]),
        "anchored": st.booleans(),
        "mentions": st.integers(0, 5),
        "references": st.integers(0, 3),
    },
    optional={
        "tokens": st.integers(0, 40),
        "category": st.sampled_from(["event", "decision", "fact"]),
        "turn": st.integers(0, 20),
    },
)


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    raw = draw(st.lists(item_st, max_size=20))
    ordinals = draw(st.permutations(range(len(raw))))
    items = [{**it, "id": f"i{k}", "ordinal": ordinals[k] * 3 - 7} for k, it in enumerate(raw)]
    for it in items:  # anchoring stays rare so budgets matter
        it["anchored"] = it["anchored"] and draw(st.integers(0, 4)) == 0
    request: dict[str, Any] = {
        "items": items,
        "budget_tokens": draw(st.integers(1, 150)),
        "prompt": draw(st.none() | st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join)),
        "fresh_tail": {
            "count": draw(st.integers(0, 4)),
            "max_tokens": draw(st.none() | st.integers(0, 40)),
        },
        "trust_policy": draw(st.sampled_from(["off", "exclude_quarantined"])),
    }
    if draw(st.booleans()):
        request["max_items"] = draw(st.integers(1, 10))
    if draw(st.booleans()):
        request["category_caps"] = {"event": draw(st.integers(0, 3))}
    if draw(st.booleans()):
        memory_records(draw, request)
    return request


TS = ["2026-07-18T09:00:00Z", "2025-01-01", "2026-07-19 08:00:00", "yesterday", ""]
RECORD_KINDS = [None, "preference", "decision", "event", "fact", " Note "]
LIFECYCLES = ["captured", "categorized", "active", "consolidated", "stale", "soft-archived"]


def memory_records(draw: st.DrawFn, request: dict[str, Any]) -> None:
    """Give some items a memory store's record fields, and the request a retrieval
    (naming ids that are items and some that are not)."""
    ids = [it["id"] for it in request["items"]]
    refs = st.sampled_from([*ids, "gone:1", "gone:2"])
    for it in request["items"]:
        if draw(st.booleans()):
            continue
        it["ts"] = draw(st.sampled_from(TS))
        it["record_kind"] = draw(st.sampled_from(RECORD_KINDS))
        it["lifecycle"] = draw(st.sampled_from(LIFECYCLES))
        it["used_count"] = draw(st.integers(0, 30))
        it["importance_score"] = draw(st.none() | st.floats(0, 1))
        it["supersedes"] = draw(st.lists(refs, max_size=2))
        if draw(st.integers(0, 3)) == 0:
            sources = draw(st.lists(refs, max_size=4, unique=True))
            it["synthesis"] = {"sources": sources, "fresh": draw(st.booleans())}
    lanes = {lane: draw(st.lists(refs, max_size=8, unique=True)) for lane in ("fts", "vector")}
    request["retrieval"] = lanes
    request["ts"] = "2026-07-19T12:00:00Z"


def with_strategy(request: dict[str, Any], name: str) -> dict[str, Any]:
    return {**request, "strategy": name}


@pytest.mark.parametrize("name", sorted(REGISTRY))
@given(request=requests(), seed=st.integers(0, 2**16))
def test_pack_invariants(name: str, request: dict[str, Any], seed: int) -> None:
    result = pack(with_strategy(request, name))  # schema-validated by conftest
    out = result.to_json()
    assert out == dumps(result.to_dict())  # the prepared fast path is the canonical walk
    # determinism and input-order independence (ordinals are explicit)
    shuffled = request["items"][:]
    random.Random(seed).shuffle(shuffled)
    assert pack(with_strategy({**request, "items": shuffled}, name)).to_json() == out

    items = result.items
    ids = result.selected_ids
    assert len(set(ids)) == len(ids)
    assert set(ids) <= {it["id"] for it in request["items"]}
    kept_ordinals = items.ordinals[result.included]
    assert np.all(np.diff(kept_ordinals) > 0)  # ordinal order
    # evictable tokens within what the tail and anchors left
    assert result.evictable_tokens_used <= result.remaining_tokens
    if "max_items" in request:
        evictable_kept = int(result.included[result.evictable].sum())
        assert evictable_kept <= (result.evictable_slots or 0)
    pack_obj = json.loads(out)
    assert sorted(i["citations"]["recordRef"] for i in pack_obj["items"]) == sorted(ids)
    assert [it["recordRef"] for it in pack_obj["items"]] == [items.ids[i] for i in result.order]
    if name == "openclaw-mem":
        # openclaw-mem keeps its own tail budget: the whole pack stays within the budget
        assert result.used_tokens <= request["budget_tokens"]
        return
    assert [i["citations"]["recordRef"] for i in pack_obj["items"]] == ids  # ordinal order
    # the shared pipeline: tail and anchored items always kept
    assert bool(np.all(result.included[result.in_tail | result.anchored]))
    if request["trust_policy"] == "exclude_quarantined":
        assert not any(items.trust[result.included] == QUARANTINED)


@pytest.mark.parametrize("name", sorted(n for n in REGISTRY if not is_policy_name(n)))
@given(request=requests())
def test_ranking_strategies_do_not_read_record_fields(name: str, request: dict[str, Any]) -> None:
    """The record fields and the retrieval are for the strategies that read them:
    without them a ranking strategy's pack is the same, byte for byte."""
    plain = {k: v for k, v in request.items() if k not in ("retrieval", "ts")}
    plain["items"] = [
        {k: v for k, v in it.items() if k not in RECORD_KEYS} for it in request["items"]
    ]
    stripped = pack(with_strategy(plain, name)).to_dict(trace="decisions")
    given_ = pack(with_strategy(request, name)).to_dict(trace="decisions")
    given_["meta"]["ts"] = stripped["meta"]["ts"]
    assert dumps(given_) == dumps(stripped)


RECORD_KEYS = frozenset(
    ["ts", "record_kind", "lifecycle", "used_count", "importance_score", "supersedes", "synthesis"]
)


@given(request=requests())
def test_unsearchable_prompt_means_chronological_for_bm25_and_bm25lite(
    request: dict[str, Any],
) -> None:
    request = {**request, "prompt": draw_unsearchable(request)}
    chrono = pack(with_strategy(request, "chronological")).selected_ids
    assert pack(with_strategy(request, "bm25lite")).selected_ids == chrono
    assert pack(with_strategy(request, "bm25")).selected_ids == chrono


def draw_unsearchable(request: dict[str, Any]) -> str | None:
    """A prompt with no searchable term for either tokenizer."""
    return random.Random(len(request["items"])).choice([None, "", "  ", "?!", "- _ ."])


@given(request=requests(), extra=st.integers(1, 60))
def test_chronological_selection_only_grows_with_the_budget(
    request: dict[str, Any], extra: int
) -> None:
    """Stop-at-misfit makes chronological monotone: more budget never drops an item."""
    small = set(pack(with_strategy(request, "chronological")).selected_ids)
    bigger = {**request, "budget_tokens": request["budget_tokens"] + extra}
    assert small <= set(pack(with_strategy(bigger, "chronological")).selected_ids)


RANKED = sorted(n for n in REGISTRY if n != "chronological" and not is_policy_name(n))


@pytest.mark.parametrize("name", RANKED)
def test_skip_not_stop_is_not_budget_monotone(name: str) -> None:
    """The invariant that does NOT hold, pinned: with greedy skip-not-stop filling,
    one more token of budget can drop an item. Ranked A > B > C by every ranked
    strategy; at 10 tokens A (6) fits, B (5) is skipped, C (4) fills; at 11, B
    fits after A and C no longer does."""
    items = [
        {"id": "C", "text": "alpha beta gamma", "tokens": 4, "ordinal": 0, "mentions": 1},
        {"id": "B", "text": "alpha alpha beta", "tokens": 5, "ordinal": 1, "mentions": 3},
        {"id": "A", "text": "alpha alpha alpha", "tokens": 6, "ordinal": 2, "mentions": 5},
    ]
    base = {"items": items, "prompt": "alpha", "current_turn": 2, "strategy": name}
    for it in items:
        it["last_mention_turn"] = 2
    assert pack({**base, "budget_tokens": 10}).selected_ids == ["C", "A"]
    assert pack({**base, "budget_tokens": 11}).selected_ids == ["B", "A"]
