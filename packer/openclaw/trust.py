"""The trust policy ``exclude_quarantined_fail_open`` (``_pack_trust_apply_policy``,
``_pack_trust_finalize_policy``; POLICY.md 5).

Every id left after supersedes filtering gets a decision by its trust tier:
quarantined is excluded; unknown is included, fail-open; trusted and untrusted
are included. The receipt counts them and lists the decisions in order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..reasons import FAIL_OPEN, QUARANTINED, TRUST_ALLOWED

__all__ = ["MODE", "TrustDecision", "trust_decisions", "trust_receipt"]

MODE: Final = "exclude_quarantined_fail_open"
RECEIPT_KIND: Final = "openclaw-mem.pack.trust-policy.v1"


@dataclass(frozen=True)
class TrustDecision:
    ref: str
    trust: str
    included: bool
    reason: str

    @property
    def fail_open(self) -> bool:
        return self.reason == FAIL_OPEN


def trust_decisions(refs: Sequence[str], tiers: Mapping[str, str]) -> dict[str, TrustDecision]:
    """One decision per ref (in order), from its trust tier."""
    out: dict[str, TrustDecision] = {}
    for ref in refs:
        tier = tiers[ref]
        if tier == "quarantined":
            out[ref] = TrustDecision(ref, tier, False, QUARANTINED)
        else:
            out[ref] = TrustDecision(
                ref, tier, True, FAIL_OPEN if tier == "unknown" else TRUST_ALLOWED
            )
    return out


def trust_receipt(decisions: Mapping[str, TrustDecision]) -> dict[str, Any]:
    """``trace.extensions.trust_policy``: counts, reason counts (keys sorted),
    the decisions in order and the included refs."""
    listed = list(decisions.values())
    selected = list(dict.fromkeys(d.ref for d in listed if d.included))
    reasons = Counter(d.reason for d in listed)
    return {
        "kind": RECEIPT_KIND,
        "mode": MODE,
        "checked_count": len(listed),
        "included_count": len(selected),
        "excluded_count": len(listed) - len(selected),
        "fail_open_count": sum(d.fail_open for d in listed),
        "decision_reason_counts": {k: reasons[k] for k in sorted(reasons)},
        "decisions": [
            {
                "recordRef": d.ref,
                "trust": d.trust,
                "included": d.included,
                "reason": d.reason,
                "fail_open": d.fail_open,
                "error_code": None,
            }
            for d in listed
        ],
        "selected_refs": selected,
    }
