"""The tail reservation and the two first-fit fills, with their reason tokens."""

from __future__ import annotations

from packproof.packer.openclaw.fill import (
    Reservation,
    TailLine,
    fill_memory,
    fill_tail,
    reserve_tail,
)
from packproof.packer.openclaw.trust import TrustDecision

from .builders import cand

ALLOWED = TrustDecision("x", "trusted", True, "trust_allowed")
QUARANTINED = TrustDecision("x", "quarantined", False, "trust_quarantined_excluded")


def test_reservation_takes_tokens_and_a_slot_per_line() -> None:
    assert reserve_tail(100, 6, 3, 20) == Reservation(20, 3, 80, 3)
    assert reserve_tail(10, 6, 3, 50) == Reservation(10, 3, 0, 3)  # capped at the budget
    assert reserve_tail(100, 2, 5, 20) == Reservation(20, 2, 80, 0)  # capped at the limit


def test_a_zero_tail_budget_or_no_line_reserves_nothing() -> None:
    assert reserve_tail(100, 6, 3, 0) == Reservation(0, 0, 100, 6)
    assert reserve_tail(100, 6, 0, 20) == Reservation(0, 0, 100, 6)


def test_memory_fill_is_first_fit_and_skips_what_does_not_fit() -> None:
    candidates = [cand("a", tokens=6), cand("b", tokens=5), cand("c", tokens=4)]
    decisions, used = fill_memory(candidates, frozenset(), 10, 5)
    assert [(d.ref, d.included, d.reasons) for d in decisions] == [
        ("a", True, ("within_item_limit", "within_budget")),
        ("b", False, ("budget_tokens_exceeded",)),
        ("c", True, ("within_item_limit", "within_budget")),
    ]
    assert used == 10


def test_memory_fill_rules_in_their_order() -> None:
    candidates = [
        cand("empty", text="", tokens=0, decision=ALLOWED),
        cand("bad", decision=QUARANTINED),
        cand("capped", kind="event"),
        cand("ok", decision=ALLOWED),
        cand("full"),
    ]
    decisions, _ = fill_memory(candidates, frozenset({"capped"}), 100, 1)
    assert [d.reasons for d in decisions] == [
        ("trust_allowed", "missing_summary"),
        ("trust_quarantined_excluded", "trust_quarantined_excluded"),  # twice
        ("quota_event_capped",),
        ("trust_allowed", "within_item_limit", "within_budget"),
        ("max_items_reached",),
    ]


def test_no_budget_left_reads_budget_tokens_exceeded_even_for_zero_tokens() -> None:
    decisions, _ = fill_memory([cand("free", tokens=0)], frozenset(), 0, 5)
    assert decisions[0].reasons == ("budget_tokens_exceeded",)


def test_tail_fill_slots_then_tail_budget_then_included() -> None:
    lines = [TailLine(f"tail:{k}", k, "x", t) for k, t in enumerate([4, 9, 3, 1, 1], 1)]
    decisions, used = fill_tail(lines, reserve_tail(100, 3, 5, 8))  # 3 slots, 8 tokens
    assert [d.reasons for d in decisions] == [
        ("protected_tail", "within_item_limit", "within_tail_budget"),
        ("protected_tail", "tail_budget_tokens_exceeded"),  # skipped: later lines may fit
        ("protected_tail", "within_item_limit", "within_tail_budget"),
        ("protected_tail", "within_item_limit", "within_tail_budget"),
        ("protected_tail", "max_items_reached"),  # the three slots are taken
    ]
    assert used == 8


def test_a_disabled_tail_reads_max_items_reached_not_tail_budget_disabled() -> None:
    """POLICY.md 15.1: a zero reservation also reserves zero slots."""
    lines = [TailLine("tail:1", 0, "x", 1)]
    decisions, used = fill_tail(lines, reserve_tail(100, 3, 1, 0))
    assert decisions[0].reasons == ("protected_tail", "max_items_reached") and used == 0
