"""The sort keys of the memory candidates, one rule at a time."""

from __future__ import annotations

from packproof.packer.openclaw.order import sort_candidates

from .builders import cand


def order(*candidates):  # type: ignore[no-untyped-def]
    return [c.ref for c in sort_candidates(candidates)]


def test_relevance_key_card_then_trust_then_importance_then_rrf_lanes_time_index() -> None:
    assert order(
        cand("plain", 0, trust="trusted", importance="must_remember", rrf=0.9),
        cand("card", 1, synthesis=True, trust="quarantined", importance="ignore"),
    ) == ["card", "plain"]
    assert order(
        cand("untrusted", 0, trust="untrusted"),
        cand("unknown", 1),
        cand("trusted", 2, trust="trusted"),
    ) == ["trusted", "unknown", "untrusted"]
    assert order(
        cand("ignore", 0, importance="ignore"),
        cand("nice", 1, importance="nice_to_have"),
        cand("must", 2, importance="must_remember"),
        cand("unknown", 3),
    ) == ["must", "nice", "unknown", "ignore"]
    assert order(cand("low", 0, rrf=0.01), cand("high", 1, rrf=0.02)) == ["high", "low"]
    assert order(cand("one", 0, fts=True), cand("two", 1, fts=True, semantic=True)) == [
        "two",
        "one",
    ]
    assert order(cand("old", 0, ts_value=1.0), cand("new", 1, ts_value=2.0)) == ["new", "old"]
    assert order(cand("second", 1), cand("first", 0)) == ["first", "second"]


def test_composite_key_card_then_trust_then_final_score_then_index() -> None:
    # importance and rrf act only through the final score
    assert order(
        cand("must", 0, importance="must_remember", rrf=0.9, final=0.01),
        cand("ignore", 1, importance="ignore", rrf=0.1, final=0.02),
    ) == ["ignore", "must"]
    assert order(
        cand("untrusted", 0, trust="untrusted", final=0.9),
        cand("trusted", 1, trust="trusted", final=0.1),
    ) == [
        "trusted",
        "untrusted",
    ]
    assert order(cand("b", 1, final=0.5), cand("a", 0, final=0.5)) == ["a", "b"]


def test_mixed_key_shapes_compare_element_by_element_as_numbers() -> None:
    """A preferred card that was not retrieved keeps the relevance key among
    composite keys: (0, 1, 2, -0.0, ...) against (0, 1, -final, index). Its third
    element is its importance rank (2, unknown), above any -final (<= 0), so a
    retrieved card with a composite key goes first; against a plain record the
    card flag decides."""
    pulled_in = cand("pulled-in", 0, synthesis=True)  # no final score: relevance key
    retrieved = cand("retrieved", 1, synthesis=True, final=0.03)
    plain = cand("plain", 2, trust="trusted", final=0.9)
    assert pulled_in.sort_key() == (0, 1, 2, -0.0, 0, -0.0, 0)
    assert retrieved.sort_key() == (0, 1, -0.03, 1)
    assert order(pulled_in, retrieved, plain) == ["retrieved", "pulled-in", "plain"]
    # a composite key whose final score is 0 still ranks its -0.0 below 2
    zero = cand("zero", 3, synthesis=True, final=0.0)
    assert order(pulled_in, zero) == ["zero", "pulled-in"]
