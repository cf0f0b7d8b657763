"""openclaw-mem's receipts, with its field names and shapes (``trace.candidates``,
``trace.extensions.policy``, ``trace.quota_hits``, the ``tail`` block and
``trace.output``; POLICY.md 13): what the trace's ``extensions.openclaw_mem``
holds, so that they compare directly with openclaw-mem's own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from .fill import Decision, Reservation, TailLine
from .order import Candidate
from .quotas import finalize_quota_hits
from .synthesis import Preference
from .trust import TrustDecision, trust_receipt

__all__ = [
    "POLICY_ID",
    "SELECTION_ORDER",
    "candidate_receipts",
    "pack_receipt",
    "policy_receipt",
    "tail_receipt",
]

POLICY_ID: Final = "pack-policy-v1.1"
# Listed as it is under both profiles (POLICY.md 15.13).
SELECTION_ORDER: Final = (
    "graph_synthesis_preference",
    "trust",
    "importance",
    "rrf",
    "match_count",
    "recency",
)


def candidate_receipts(
    memory: Sequence[tuple[Candidate, Decision]],
    tail: Sequence[tuple[TailLine, Decision]],
    composite: bool,
) -> list[dict[str, Any]]:
    """The trace candidates: memory candidates in fill order (L1, with their
    scores, and ``final_score`` under the composite profile when there is one),
    then the tail lines (L0)."""
    out: list[dict[str, Any]] = []
    for c, d in memory:
        entry: dict[str, Any] = {
            "id": c.ref,
            "layer": "L1",
            "importance": c.importance,
            "trust": c.trust,
            "included": d.included,
            "reason": list(d.reasons),
            "tokens": c.tokens,
            "scores": {"rrf": c.rrf, "fts": float(c.fts), "semantic": float(c.semantic)},
        }
        if composite and c.final is not None:
            entry["final_score"] = c.final
        out.append(entry)
    for line, d in tail:
        out.append(
            {
                "id": line.ref,
                "layer": "L0",
                "importance": "unknown",
                "trust": "unknown",
                "included": d.included,
                "reason": list(d.reasons),
                "tokens": line.tokens,
            }
        )
    return out


def policy_receipt(
    reservation: Reservation,
    primary_used: int,
    tail_used: int,
    tail_requested: int,
    tail_included: int,
    preferred: Sequence[str],
    covered: Sequence[str],
) -> dict[str, Any]:
    """``trace.extensions.policy`` (``id: pack-policy-v1.1``)."""
    return {
        "id": POLICY_ID,
        "selection_order": list(SELECTION_ORDER),
        "primary_budget_tokens": reservation.primary_budget,
        "primary_used_tokens": primary_used,
        "primary_item_limit": reservation.primary_limit,
        "tail_reserved_tokens": reservation.tail_tokens,
        "tail_used_tokens": tail_used,
        "tail_reserved_slots": reservation.tail_slots,
        "tail_requested_count": tail_requested,
        "tail_included_count": tail_included,
        "graph_preferred_card_refs": list(preferred),
        "graph_covered_raw_refs": list(covered),
    }


def tail_receipt(
    reservation: Reservation, requested: int, included: int, used: int
) -> dict[str, int]:
    """The ``tail`` block (present when there are tail lines)."""
    return {
        "requestedCount": requested,
        "includedCount": included,
        "budgetTokens": reservation.tail_tokens,
        "usedTokens": used,
    }


def pack_receipt(
    memory: Sequence[tuple[Candidate, Decision]],
    tail: Sequence[tuple[TailLine, Decision]],
    reservation: Reservation,
    used: tuple[int, int],
    preference: Preference,
    decisions: Mapping[str, TrustDecision] | None,
    hits: Sequence[dict[str, Any]] | None,
    profile: str,
) -> dict[str, Any]:
    """Every receipt of one pack: the candidates, the policy, the trust policy
    (when on: ``decisions``), the quota hits after selection (when on: ``hits``),
    the tail block (when there are tail lines) and the counts. ``used``: the
    tokens the memory and the tail lines used."""
    primary_used, tail_used = used
    chosen = {c.ref for c, d in memory if d.included}
    tail_included = sum(d.included for _, d in tail)
    receipt: dict[str, Any] = {
        "candidates": candidate_receipts(memory, tail, profile == "composite"),
        "policy": policy_receipt(
            reservation,
            primary_used,
            tail_used,
            len(tail),
            tail_included,
            preference.preferred,
            preference.covered,
        ),
    }
    if decisions is not None:
        receipt["trust_policy"] = trust_receipt(decisions)
    if hits is not None:
        receipt["quota_hits"] = finalize_quota_hits(hits, chosen)
    if tail:
        receipt["tail"] = tail_receipt(reservation, len(tail), tail_included, tail_used)
    included = len(chosen) + tail_included
    receipt["counts"] = {"included": included, "excluded": len(memory) + len(tail) - included}
    receipt["scoring_profile"] = profile
    return receipt
