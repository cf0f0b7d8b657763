"""Bad requests: one error naming the JSON pointer; the schema agrees with the code."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from packproof.packer import InputError, parse_request
from packproof.packer.request import Request, replaced
from packproof.packer.schema import validate
from packproof.packer.strategies import build_strategy

GOOD: dict[str, Any] = {
    "items": [{"id": "a", "text": "hello"}, {"id": "b", "text": "world", "role": "assistant"}],
    "budget_tokens": 10,
}


def with_(path: list[str | int], value: Any) -> dict[str, Any]:
    req = copy.deepcopy(GOOD)
    node: Any = req
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return req


BAD = [
    (with_(["budget_tokens"], 0), "/budget_tokens", "out of range"),
    (with_(["budget_tokens"], "10"), "/budget_tokens", "wrong type"),
    (with_(["budget_tokens"], True), "/budget_tokens", "wrong type"),
    (with_(["budget_tokens"], 1.5), "/budget_tokens", "wrong type"),
    (with_(["items", 0, "tokens"], -1), "/items/0/tokens", "out of range"),
    (with_(["items", 1, "id"], "a"), "/items/1/id", "duplicate id"),
    (with_(["items", 1, "id"], ""), "/items/1/id", "empty string"),
    (with_(["items", 1, "ordinal"], 0), "/items/1/ordinal", "duplicate ordinal"),
    (with_(["items", 0, "role"], "bot"), "/items/0/role", "unknown value"),
    (with_(["items", 0, "kind"], 3), "/items/0/kind", "unknown value"),
    (with_(["items", 0, "anchored"], "yes"), "/items/0/anchored", "wrong type"),
    (with_(["items", 0, "color"], "red"), "/items/0/color", "unknown field"),
    (with_(["items", 0, "mentions"], -2), "/items/0/mentions", "out of range"),
    (with_(["items", 0, "url"], 5), "/items/0/url", "wrong type"),
    (with_(["items", 1], "text"), "/items/1", "wrong type"),
    (with_(["items"], {}), "/items", "wrong type"),
    (with_(["token_counter"], "gpt9"), "/token_counter", "unknown value"),
    (with_(["trust_policy"], "strict"), "/trust_policy", "unknown value"),
    (with_(["fresh_tail"], {"count": 1.5}), "/fresh_tail/count", "wrong type"),
    (with_(["fresh_tail"], {"max_tokens": "8"}), "/fresh_tail/max_tokens", "wrong type"),
    (with_(["fresh_tail"], {"size": 1}), "/fresh_tail/size", "unknown field"),
    (with_(["max_items"], 0), "/max_items", "out of range"),
    (with_(["category_caps"], {"event": -1}), "/category_caps/event", "out of range"),
    (with_(["schema"], "packproof.request.v9"), "/schema", "unsupported"),
    (with_(["extra"], 1), "/extra", "unknown field"),
    (with_(["strategy"], {"name": "nope"}), "/strategy/name", "unknown strategy"),
    (
        with_(["strategy"], {"name": "bm25", "params": {"k9": 1}}),
        "/strategy/params/k9",
        "unknown parameter",
    ),
    (
        with_(["strategy"], {"name": "bm25", "params": {"k1": "big"}}),
        "/strategy/params/k1",
        "wrong type",
    ),
    (
        with_(["strategy"], {"name": "bm25", "params": {"stem": "latin"}}),
        "/strategy/params/stem",
        "unknown value",
    ),
    (with_(["strategy"], "bm25(k1=-3)"), "/strategy/params/k1", "out of range"),
    # a memory store's record fields and retrieval (packer/records.py)
    (with_(["items", 0, "ts"], 20260719), "/items/0/ts", "wrong type"),
    (with_(["items", 0, "record_kind"], ["fact"]), "/items/0/record_kind", "wrong type"),
    (with_(["items", 0, "lifecycle"], "archived"), "/items/0/lifecycle", "unknown value"),
    (with_(["items", 1, "used_count"], -1), "/items/1/used_count", "out of range"),
    (with_(["items", 1, "used_count"], 2.5), "/items/1/used_count", "wrong type"),
    (with_(["items", 0, "importance_score"], 1.5), "/items/0/importance_score", "out of range"),
    (with_(["items", 0, "importance_score"], "0.5"), "/items/0/importance_score", "wrong type"),
    (with_(["items", 0, "importance_score"], True), "/items/0/importance_score", "wrong type"),
    (with_(["items", 0, "supersedes"], "b"), "/items/0/supersedes", "wrong type"),
    (with_(["items", 0, "supersedes"], ["b", 3]), "/items/0/supersedes/1", "wrong type"),
    (with_(["items", 0, "supersedes"], [""]), "/items/0/supersedes/0", "empty string"),
    (with_(["items", 0, "synthesis"], ["b"]), "/items/0/synthesis", "wrong type"),
    (with_(["items", 0, "synthesis"], {"fresh": True}), "/items/0/synthesis", "missing required"),
    (
        with_(["items", 0, "synthesis"], {"sources": ["b", "b"]}),
        "/items/0/synthesis/sources/1",
        "repeated id",
    ),
    (
        with_(["items", 0, "synthesis"], {"sources": ["b"], "fresh": "yes"}),
        "/items/0/synthesis/fresh",
        "wrong type",
    ),
    (
        with_(["items", 0, "synthesis"], {"sources": ["b"], "digest": "x"}),
        "/items/0/synthesis/digest",
        "unknown field",
    ),
    (with_(["retrieval"], ["a"]), "/retrieval", "wrong type"),
    (with_(["retrieval"], {"bm25": ["a"]}), "/retrieval/bm25", "unknown field"),
    (with_(["retrieval"], {"fts": ["a", "a"]}), "/retrieval/fts/1", "repeated id"),
    (with_(["retrieval"], {"vector": [7]}), "/retrieval/vector/0", "wrong type"),
]


def test_budget_zero_is_refused_saying_what_lossless_claw_would_do() -> None:
    with pytest.raises(InputError) as info:
        parse_request(with_(["budget_tokens"], 0))
    assert "ContextPack v1 needs budgetTokens > 0" in str(info.value)
    assert "lossless-claw would accept 0 and keep only the fresh tail" in str(info.value)


@pytest.mark.parametrize(
    ("given", "cap"),
    [(None, None), (0, 0), (12, 12), (7.9, 7), (-1, None), (-0.5, None), (1e300, None)],
)
def test_tail_cap_is_read_as_lossless_claw_reads_it(given: Any, cap: int | None) -> None:
    """freshTailMaxTokens: negative or non-finite means no cap, a fraction is floored."""
    req = parse_request(with_(["fresh_tail"], {"count": 2, "max_tokens": given}))
    assert req.fresh_tail.max_tokens == cap
    assert validate("request", with_(["fresh_tail"], {"count": 2, "max_tokens": given})) == []


def test_non_finite_tail_cap_from_python_means_no_cap() -> None:
    req = parse_request(with_(["fresh_tail"], {"count": 2, "max_tokens": float("inf")}))
    assert req.fresh_tail.max_tokens is None


def test_tail_count_at_or_below_zero_protects_nothing() -> None:
    from packproof.packer import pack

    for count in (0, -3):
        result = pack(with_(["fresh_tail"], {"count": count}))
        assert result.tail_start is None


@pytest.mark.parametrize(("request_", "where", "message"), BAD, ids=[f"{w}:{m}" for _, w, m in BAD])
def test_bad_request_names_its_pointer(request_: dict[str, Any], where: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        parse_request(request_)
    assert info.value.where == where
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_fields() -> None:
    with pytest.raises(InputError, match="missing required field 'budget_tokens'"):
        parse_request({"items": []})
    with pytest.raises(InputError, match="/items/0: missing required field 'text'"):
        parse_request({"items": [{"id": "a"}], "budget_tokens": 1})


# Values the schema cannot see (uniqueness, the strategy registry) are checked in code.
SEMANTIC_ONLY = {"duplicate id", "duplicate ordinal", "unknown strategy", "unknown parameter"}


@pytest.mark.parametrize(("request_", "where", "message"), BAD, ids=[f"{w}:{m}" for _, w, m in BAD])
def test_schema_rejects_what_the_code_rejects(
    request_: dict[str, Any], where: str, message: str
) -> None:
    if any(s in message for s in SEMANTIC_ONLY) or where.startswith("/strategy/params"):
        assert validate("request", request_) == []
    else:
        assert validate("request", request_) != []


def test_schema_accepts_what_the_code_accepts() -> None:
    full = {
        "schema": "packproof.request.v1",
        "prompt": None,
        "budget_tokens": 5,
        "max_items": None,
        "fresh_tail": {"count": 2, "max_tokens": None},
        "current_turn": 3,
        "token_counter": "chars4",
        "trust_policy": "exclude_quarantined",
        "strategy": "bm25(k1=1.5)",
        "ts": "2026-01-01T00:00:00Z",
        "scope": None,
        "category_caps": {"*": 3},
        "retrieval": {"fts": ["a", "gone"], "vector": [], "vector_en": ["a"]},
        "items": [
            {
                "id": "a",
                "text": "t",
                "ordinal": 4,
                "role": "tool",
                "kind": "memory",
                "tokens": 0,
                "trust": "trusted",
                "importance": "ignore",
                "anchored": False,
                "category": None,
                "turn": 2,
                "mentions": 1,
                "references": 0,
                "last_mention_turn": 1,
                "url": None,
                "ts": "2026-07-19T00:00:00Z",
                "record_kind": "decision",
                "lifecycle": "soft-archived",
                "used_count": 3,
                "importance_score": 0.5,
                "supersedes": ["gone", "gone"],
                "synthesis": {"sources": ["a", "gone"], "fresh": False},
            }
        ],
    }
    assert validate("request", full) == []
    assert parse_request(full).budget_tokens == 5
    assert parse_request({**GOOD, "budget_tokens": 3.0}).budget_tokens == 3  # JSON Schema integer


def test_defaults() -> None:
    req = parse_request(GOOD)
    assert req.strategy.name == "chronological"
    assert req.token_counter == "lcm" and req.trust_policy == "off"
    assert req.items.ordinals.tolist() == [0, 1]
    assert req.items.turns.tolist() == [0, 1]  # turn defaults to the ordinal
    assert req.current_turn == 1


def test_replaced_is_dataclasses_replace() -> None:
    """The runner's copy of a request with some fields changed sets every field
    as ``dataclasses.replace`` does, and refuses a field a request has not."""
    base = parse_request(GOOD)
    changes = {"budget_tokens": 7, "strategy": build_strategy("bm25", {}), "prompt": "hello"}
    made, reference = replaced(base, **changes), dataclasses.replace(base, **changes)
    assert type(made) is Request
    assert {f.name: getattr(made, f.name) for f in dataclasses.fields(Request)} == {
        f.name: getattr(reference, f.name) for f in dataclasses.fields(Request)
    }
    assert made.__dict__.keys() == reference.__dict__.keys()
    assert base.budget_tokens == 10 and base.prompt is None  # the original is untouched
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.budget_tokens = 3  # type: ignore[misc]
    with pytest.raises(TypeError, match="no field 'budget'"):
        replaced(base, budget=3)
