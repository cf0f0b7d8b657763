"""Synthesis cards preferred over the raw records they cover."""

from __future__ import annotations

from packproof.packer.openclaw.synthesis import Card, prefer_cards
from packproof.packer.records import Synthesis


def card(ref: str, *sources: str, fresh: bool = True) -> Card:
    return Card(ref, Synthesis(tuple(sources), fresh))


REFS = ["obs:1", "obs:2", "obs:3", "obs:4", "obs:5"]


def test_a_fresh_card_covering_two_refs_replaces_them_and_goes_first() -> None:
    got = prefer_cards(REFS, [card("obs:50", "obs:2", "obs:4", "obs:99")], 20)
    assert got.refs == ["obs:50", "obs:1", "obs:3", "obs:5"]
    assert (got.preferred, got.covered) == (["obs:50"], ["obs:2", "obs:4"])


def test_a_card_needs_two_covered_refs_and_must_be_fresh() -> None:
    cards = [card("obs:50", "obs:2", "obs:77"), card("obs:60", "obs:1", "obs:3", fresh=False)]
    got = prefer_cards(REFS, cards, 20)
    assert got.refs == REFS and got.preferred == [] and got.covered == []


def test_cards_by_covered_count_then_source_count_then_ref_as_a_string() -> None:
    """All three cover two refs; obs:60 has the fewest sources; of the two with
    three, "obs:100" < "obs:70" as strings. obs:60 takes obs:1 and obs:2, so
    obs:100 (obs:1, obs:3) has one uncovered ref left and is not preferred;
    obs:70 (obs:4, obs:5) is."""
    cards = [
        card("obs:70", "obs:4", "obs:5", "obs:98"),
        card("obs:100", "obs:1", "obs:3", "obs:97"),
        card("obs:60", "obs:1", "obs:2"),
    ]
    got = prefer_cards(REFS, cards, 20)
    assert got.preferred == ["obs:60", "obs:70"]
    assert got.covered == ["obs:1", "obs:2", "obs:4", "obs:5"]
    assert got.refs == ["obs:60", "obs:70", "obs:3"]


def test_covered_refs_are_taken_in_candidate_order_not_source_order() -> None:
    got = prefer_cards(REFS, [card("obs:50", "obs:5", "obs:1")], 20)
    assert got.covered == ["obs:1", "obs:5"]


def test_a_retrieved_card_appears_once_and_the_list_is_cut() -> None:
    refs = ["obs:1", "obs:50", "obs:2", "obs:3"]
    got = prefer_cards(refs, [card("obs:50", "obs:1", "obs:2")], 20)
    assert got.refs == ["obs:50", "obs:3"]
    assert prefer_cards(REFS, [], 2).refs == ["obs:1", "obs:2"]
