"""Soft quotas: preference and decision reserved to the front, events capped."""

from __future__ import annotations

from packproof.packer.openclaw.quotas import Quotas, apply_soft_quotas, finalize_quota_hits
from packproof.packer.openclaw.trust import TrustDecision

from .builders import cand

QUARANTINED = TrustDecision("x", "quarantined", False, "trust_quarantined_excluded")


def test_reserved_kinds_move_to_the_front_in_sorted_order() -> None:
    sorted_ = [
        cand("e1", kind="event"),
        cand("d1", kind="decision"),
        cand("p1", kind="preference"),
        cand("d2", kind="decision"),
        cand("p2", kind="preference"),
    ]
    plan = apply_soft_quotas(sorted_, 10, Quotas(preference_min=1, decision_min=2))
    assert [c.ref for c in plan.order] == ["p1", "d1", "d2", "e1", "p2"]
    assert plan.hits == [
        {"kind": "preference", "action": "reserved", "refs": ["p1"]},
        {"kind": "decision", "action": "reserved", "refs": ["d1", "d2"]},
    ]


def test_reservations_stop_at_the_slots_and_skip_ineligible_candidates() -> None:
    sorted_ = [
        cand("p0", kind="preference", text=""),  # no text: not eligible
        cand("p1", kind="preference", decision=QUARANTINED),  # excluded by trust
        cand("p2", kind="preference"),
        cand("p3", kind="preference"),
        cand("d1", kind="decision"),
    ]
    plan = apply_soft_quotas(sorted_, 2, Quotas(preference_min=5, decision_min=5))
    # two slots: both go to preferences, none is left for the decision
    assert [c.ref for c in plan.order] == ["p2", "p3", "p0", "p1", "d1"]
    assert [h["kind"] for h in plan.hits] == ["preference"]


def test_events_beyond_floor_of_limit_times_ratio_are_capped() -> None:
    """limit 5 x 0.4 = 2 events; eligible ones are counted whether or not they
    would fit, an ineligible one is not counted."""
    sorted_ = [
        cand("e1", kind="event", tokens=999),
        cand("e0", kind="event", text=""),
        cand("e2", kind="event"),
        cand("f1", kind="fact"),
        cand("e3", kind="Event"),  # kinds are compared lower-cased upstream: this is not one
        cand("e4", kind="event"),
    ]
    plan = apply_soft_quotas(sorted_, 5, Quotas(preference_min=0, decision_min=0))
    assert plan.capped == {"e4"}
    assert plan.hits == [{"kind": "event", "action": "capped", "refs": ["e4"]}]
    ratio_clamped = apply_soft_quotas(sorted_, 5, Quotas(0, 0, event_max_ratio=-3.0))
    assert ratio_clamped.capped == {"e1", "e2", "e4"}


def test_finalize_keeps_selected_reservations_and_every_capped_ref() -> None:
    hits = [
        {"kind": "preference", "action": "reserved", "refs": ["p1", "p2"]},
        {"kind": "decision", "action": "reserved", "refs": ["d1"]},
        {"kind": "event", "action": "capped", "refs": ["e1"]},
    ]
    assert finalize_quota_hits(hits, {"p2"}) == [
        {"kind": "preference", "action": "reserved", "refs": ["p2"]},
        {"kind": "event", "action": "capped", "refs": ["e1"]},
    ]
