"""The protected tail's reservation and the two first-fit fills (the memory and
tail loops of ``cmd_pack``; POLICY.md 9, 11, 12).

Reservation, for ``n`` tail lines: ``tail_reserved_tokens = min(budget,
max(0, tail_budget))`` when ``n > 0``; ``tail_reserved_slots = min(limit, n)``
when those tokens are > 0 (a slot for every line, whether or not it fits); the
memory candidates fill ``budget - tail_reserved_tokens`` tokens and ``limit -
tail_reserved_slots`` slots. Both fills are first fit with no early exit: an
item that does not fit is skipped and later, smaller ones may still fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..reasons import (
    BUDGET_EXCEEDED,
    MAX_ITEMS,
    MISSING_SUMMARY,
    PROTECTED_TAIL,
    QUOTA_CAPPED,
    TAIL_BUDGET_EXCEEDED,
    WITHIN_BUDGET,
    WITHIN_ITEM_LIMIT,
    WITHIN_TAIL_BUDGET,
)
from .order import Candidate

__all__ = ["Decision", "Reservation", "TailLine", "fill_memory", "fill_tail", "reserve_tail"]


@dataclass(frozen=True)
class Reservation:
    tail_tokens: int
    tail_slots: int
    primary_budget: int
    primary_limit: int


def reserve_tail(budget: int, limit: int, lines: int, tail_budget: int) -> Reservation:
    tokens = min(budget, max(0, tail_budget)) if lines > 0 else 0
    slots = min(limit, lines) if tokens > 0 else 0
    return Reservation(tokens, slots, budget - tokens, limit - slots)


@dataclass(frozen=True)
class Decision:
    """One candidate's or tail line's fate: included, and every reason token in order."""

    ref: str
    included: bool
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class TailLine:
    ref: str
    position: int
    text: str
    tokens: int


def fill_memory(
    candidates: Sequence[Candidate], capped: frozenset[str], budget: int, limit: int
) -> tuple[list[Decision], int]:
    """Each candidate's decision, in order, and the tokens used. The trust
    decision's reason comes first; then the first rule that applies: empty
    text, excluded by trust (its reason again), quota-capped, no slot left, no
    budget, does not fit; else included."""
    used = count = 0
    out = []
    for c in candidates:
        reasons = [c.decision.reason] if c.decision is not None else []
        included = False
        if not c.text:
            reasons.append(MISSING_SUMMARY)
        elif c.trust_excluded:
            assert c.decision is not None
            reasons.append(c.decision.reason)
        elif c.ref in capped:
            reasons.append(QUOTA_CAPPED)
        elif count >= limit:
            reasons.append(MAX_ITEMS)
        elif budget <= 0 or used + c.tokens > budget:
            reasons.append(BUDGET_EXCEEDED)
        else:
            reasons += [WITHIN_ITEM_LIMIT, WITHIN_BUDGET]
            included = True
            used += c.tokens
            count += 1
        out.append(Decision(c.ref, included, tuple(reasons)))
    return out, used


def fill_tail(lines: Sequence[TailLine], reservation: Reservation) -> tuple[list[Decision], int]:
    """Each tail line's decision, in order, and the tokens used: no reserved
    slot left, else over the reserved tokens, else included. (openclaw-mem's
    ``tail_budget_disabled`` is never reached: a zero reservation reserves no
    slot, so a disabled tail reads ``max_items_reached``.)"""
    used = count = 0
    out = []
    for line in lines:
        reasons = [PROTECTED_TAIL]
        included = False
        if count >= reservation.tail_slots:
            reasons.append(MAX_ITEMS)
        elif used + line.tokens > reservation.tail_tokens:
            reasons.append(TAIL_BUDGET_EXCEEDED)
        else:
            reasons += [WITHIN_ITEM_LIMIT, WITHIN_TAIL_BUDGET]
            included = True
            used += line.tokens
            count += 1
        out.append(Decision(line.ref, included, tuple(reasons)))
    return out, used
