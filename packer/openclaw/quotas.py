"""Soft quotas (``openclaw_mem/core/quotas.py``, ``apply_soft_quotas``,
``finalize_quota_hits``; POLICY.md 10).

Over the sorted candidates, with ``L`` the memory item limit: reserve the first
``min(minimum, slots left)`` eligible candidates of kind ``preference``, then of
``decision``, and move them to the front; then mark the eligible ``event``
candidates beyond ``floor(L * ratio)`` as capped. A candidate is eligible if it
has a text and the trust policy did not exclude it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .order import Candidate

__all__ = ["QuotaPlan", "Quotas", "apply_soft_quotas", "finalize_quota_hits"]


@dataclass(frozen=True)
class Quotas:
    """openclaw-mem's quota settings (``OPENCLAW_MEM_QUOTA_*``)."""

    preference_min: int = 1
    decision_min: int = 1
    event_max_ratio: float = 0.4


@dataclass(frozen=True)
class QuotaPlan:
    order: list[Candidate]  # reserved candidates first, then the rest in sorted order
    capped: frozenset[str]  # refs of the capped events
    hits: list[dict[str, Any]]  # quota_hits before selection


def _eligible(c: Candidate) -> bool:
    return bool(c.text) and not c.trust_excluded


def apply_soft_quotas(candidates: Sequence[Candidate], limit: int, quotas: Quotas) -> QuotaPlan:
    """Reserve, reorder and cap ``candidates`` (sorted) for a memory item limit ``limit``."""
    slots = limit
    reserved: dict[str, list[Candidate]] = {}
    taken: set[str] = set()
    for kind, minimum in (("preference", quotas.preference_min), ("decision", quotas.decision_min)):
        want = min(minimum, slots)
        picked: list[Candidate] = []
        for c in candidates:
            if len(picked) >= want:
                break
            if c.kind == kind and c.ref not in taken and _eligible(c):
                picked.append(c)
        taken.update(c.ref for c in picked)
        slots -= len(picked)
        reserved[kind] = picked
    front = [*reserved["preference"], *reserved["decision"]]
    order = [*front, *(c for c in candidates if c.ref not in taken)]

    ratio = min(1.0, max(0.0, quotas.event_max_ratio))
    event_limit = math.floor(limit * ratio)
    events = [c.ref for c in order if c.kind == "event" and _eligible(c)]
    capped = events[event_limit:]

    hits: list[dict[str, Any]] = [
        {"kind": kind, "action": "reserved", "refs": [c.ref for c in picked]}
        for kind, picked in reserved.items()
        if picked
    ]
    if capped:
        hits.append({"kind": "event", "action": "capped", "refs": capped})
    return QuotaPlan(order, frozenset(capped), hits)


def finalize_quota_hits(hits: Sequence[dict[str, Any]], selected: set[str]) -> list[dict[str, Any]]:
    """The hits after selection: reserved refs not selected are removed and
    empty reservations dropped; capped refs stay."""
    out = []
    for hit in hits:
        if hit["action"] == "reserved":
            refs = [ref for ref in hit["refs"] if ref in selected]
            if refs:
                out.append({**hit, "refs": refs})
        else:
            out.append(dict(hit))
    return out
