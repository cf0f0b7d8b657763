"""A memory store's record fields and retrieval: parsed, aligned, written back."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from packproof.packer import parse_request
from packproof.packer.records import LIFECYCLE, Synthesis
from packproof.packer.request import request_to_json

REQUEST: dict[str, Any] = {
    "budget_tokens": 10,
    "items": [
        {
            "id": "b",
            "text": "newer",
            "ordinal": 5,
            "ts": "2026-07-19T10:00:00Z",
            "record_kind": " Decision ",
            "lifecycle": "stale",
            "used_count": 4,
            "importance_score": 0.25,
            "supersedes": ["a", "gone"],
        },
        {"id": "a", "text": "older", "ordinal": 2, "synthesis": {"sources": ["x", "y"]}},
    ],
    "retrieval": {"fts": ["b", "gone"], "vector_en": ["a"]},
}


def test_fields_are_read_in_ordinal_order_with_their_defaults() -> None:
    req = parse_request(REQUEST)
    records = req.items.records
    assert records is not None and req.items.ids == ["a", "b"]
    assert records.ts == [None, "2026-07-19T10:00:00Z"]
    assert records.kinds == [None, " Decision "]  # as the store holds it
    assert [LIFECYCLE[c] for c in records.lifecycle] == ["active", "stale"]
    assert records.used_counts.tolist() == [0, 4]
    assert math.isnan(records.importance_scores[0]) and records.importance_scores[1] == 0.25
    assert records.supersedes == [(), ("a", "gone")]
    assert records.synthesis == [Synthesis(("x", "y"), True), None]


def test_retrieval_lanes_default_to_empty() -> None:
    retrieval = parse_request(REQUEST).retrieval
    assert retrieval is not None
    assert retrieval.lanes() == (("b", "gone"), (), ("a",))


def test_a_request_without_them_has_none_and_writes_none() -> None:
    plain = {"budget_tokens": 10, "items": [{"id": "a", "text": "t"}]}
    req = parse_request(plain)
    assert req.items.records is None and req.retrieval is None
    assert req.items.record_fields.lifecycle.tolist() == [LIFECYCLE.index("active")]
    written = request_to_json(req)
    assert "retrieval" not in written and "lifecycle" not in written["items"][0]


def test_the_normal_form_fills_every_field_and_round_trips() -> None:
    written = request_to_json(parse_request(REQUEST))
    assert written["retrieval"] == {"fts": ["b", "gone"], "vector": [], "vector_en": ["a"]}
    older = written["items"][0]
    assert {k: older[k] for k in ("ts", "lifecycle", "used_count", "supersedes")} == {
        "ts": None,
        "lifecycle": "active",
        "used_count": 0,
        "supersedes": [],
    }
    assert older["synthesis"] == {"sources": ["x", "y"], "fresh": True}
    assert older["importance_score"] is None
    assert request_to_json(parse_request(written)) == written


def test_a_subset_of_the_table_takes_its_records() -> None:
    items = parse_request(REQUEST).items
    first = items.take(np.array([1]))
    assert first.records is not None and first.records.used_counts.tolist() == [4]
    assert first.record_fields.supersedes == [("a", "gone")]
