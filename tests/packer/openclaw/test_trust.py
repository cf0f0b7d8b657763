"""The exclude_quarantined_fail_open trust policy and its receipt."""

from __future__ import annotations

from packproof.packer.openclaw.trust import trust_decisions, trust_receipt


def test_decisions_by_tier_and_the_receipt() -> None:
    tiers = {"obs:1": "trusted", "obs:2": "quarantined", "obs:3": "unknown", "obs:4": "untrusted"}
    decisions = trust_decisions(list(tiers), tiers)
    assert [(d.included, d.reason, d.fail_open) for d in decisions.values()] == [
        (True, "trust_allowed", False),
        (False, "trust_quarantined_excluded", False),
        (True, "trust_unknown_fail_open", True),
        (True, "trust_allowed", False),
    ]
    receipt = trust_receipt(decisions)
    assert receipt["kind"] == "openclaw-mem.pack.trust-policy.v1"
    assert receipt["mode"] == "exclude_quarantined_fail_open"
    assert (
        receipt["checked_count"],
        receipt["included_count"],
        receipt["excluded_count"],
        receipt["fail_open_count"],
    ) == (4, 3, 1, 1)
    assert list(receipt["decision_reason_counts"].items()) == [
        ("trust_allowed", 2),
        ("trust_quarantined_excluded", 1),
        ("trust_unknown_fail_open", 1),
    ]
    assert receipt["selected_refs"] == ["obs:1", "obs:3", "obs:4"]
    assert receipt["decisions"][1] == {
        "recordRef": "obs:2",
        "trust": "quarantined",
        "included": False,
        "reason": "trust_quarantined_excluded",
        "fail_open": False,
        "error_code": None,
    }


def test_no_ids_no_decisions() -> None:
    receipt = trust_receipt(trust_decisions([], {}))
    assert receipt["checked_count"] == 0 and receipt["decisions"] == []
    assert receipt["decision_reason_counts"] == {} and receipt["selected_refs"] == []
