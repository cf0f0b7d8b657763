"""openclaw-mem's composite score and the timestamps it reads
(``openclaw_mem/core/scoring.py``, ``score_components``; POLICY.md 3.4, 7).

The composite multiplies, left to right:

    final = relevance * importance_weight * recency * use_boost * state_gate

- relevance: the fused score (RRF), or ``1/(60 + index + 1)`` were it not positive;
- importance weight by the label ``label_from_score(importance_score)`` gives
  (must_remember 1.2, nice_to_have 1.0, ignore 0.8; no score: unknown, 1.0);
- recency ``0.5 ** (age_days / half_life)`` (``math.pow``), the half-life in days
  by the record's kind; ages are counted from midnight UTC of the clock's day;
- use boost ``min(1.3, 1 + 0.1 * log1p(used_count))``;
- state gate by lifecycle state (stale 0.5, consolidated 0.9, soft-archived 0).

A factor switched off is 1.0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Final

from ..records import LIFECYCLE, RecordFields
from .fusion import RRF_K

__all__ = [
    "Factors",
    "composite_scores",
    "half_life_days",
    "importance_weight",
    "reference_time",
    "row_age_days",
    "ts_sort_value",
    "use_boost",
]

HALF_LIFE_DAYS: Final = {
    "preference": 365.0,
    "decision": 180.0,
    "learning": 180.0,
    "fact": 120.0,
    "entity": 120.0,
    "plan": 60.0,
    "note": 30.0,
    "tool": 30.0,
    "event": 14.0,
}
DEFAULT_HALF_LIFE: Final = 30.0
STATE_GATE: Final = {
    "active": 1.0,
    "captured": 1.0,
    "categorized": 1.0,
    "consolidated": 0.9,
    "stale": 0.5,
    "soft-archived": 0.0,
}
GATES: Final = tuple(STATE_GATE[state] for state in LIFECYCLE)
_DAY: Final = 86400.0
# Naive timestamps on this date fail ``datetime.timestamp()`` in a UTC process
# (the local-time conversion steps into year 0): openclaw-mem reads them as 0.0.
_FIRST_DAY: Final = date(1, 1, 1)


@dataclass(frozen=True)
class Factors:
    """Which composite factors are on (openclaw-mem's
    ``OPENCLAW_MEM_SCORING_*_ENABLED`` settings)."""

    relevance: bool = True
    importance: bool = True
    recency: bool = True
    use: bool = True
    state: bool = True


def _parse(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def reference_time(clock: str) -> datetime | None:
    """Midnight UTC of the clock's UTC day (a naive clock reads as UTC); None
    when the clock does not parse (then every age is 0)."""
    now = _parse(clock.replace("Z", "+00:00"))
    if now is None:
        return None
    now = now.replace(tzinfo=UTC) if now.tzinfo is None else now.astimezone(UTC)
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def row_age_days(ts: str | None, reference: datetime | None) -> float:
    """``max(0, (reference - observed) seconds / 86400)``: the observed time is
    ``ts`` with every ``Z`` made ``+00:00``, parsed by ``datetime.fromisoformat``
    (naive = UTC); an empty or unparseable ``ts`` (or clock) is age 0."""
    if not ts or reference is None:
        return 0.0
    observed = _parse(ts.replace("Z", "+00:00"))
    if observed is None:
        return 0.0
    if observed.tzinfo is None:
        observed = observed.replace(tzinfo=UTC)
    return max(0.0, (reference - observed).total_seconds() / _DAY)


def half_life_days(kind: str | None) -> float:
    """The recency half-life of a record kind (stripped, lower-cased; none is ``note``)."""
    key = (kind or "").strip().lower() or "note"
    return HALF_LIFE_DAYS.get(key, DEFAULT_HALF_LIFE)


def importance_weight(score: float) -> float:
    """The weight of ``label_from_score(score)`` (NaN: no score, ``unknown``)."""
    if math.isnan(score):
        return 1.0
    if score >= 0.80:
        return 1.2
    return 1.0 if score >= 0.50 else 0.8


def use_boost(used: int) -> float:
    return min(1.3, 1.0 + 0.1 * math.log1p(used))


def composite_scores(
    refs: Sequence[str],
    fused: Mapping[str, float],
    positions: Mapping[str, int],
    records: RecordFields,
    reference: datetime | None,
    factors: Factors,
) -> dict[str, float]:
    """Each ref's final composite score (``refs`` in fused order; ``positions``
    their rows in ``records``)."""
    out: dict[str, float] = {}
    for index, ref in enumerate(refs):
        i = positions[ref]
        relevance = weight = recency = boost = gate = 1.0
        if factors.relevance:
            score = max(0.0, fused[ref])
            relevance = score if score > 0 else 1.0 / (RRF_K + index + 1)
        if factors.importance:
            weight = importance_weight(float(records.importance_scores[i]))
        if factors.recency:
            age = row_age_days(records.ts[i], reference)
            recency = math.pow(0.5, age / half_life_days(records.kinds[i]))
        if factors.use:
            boost = use_boost(int(records.used_counts[i]))
        if factors.state:
            gate = GATES[records.lifecycle[i]]
        out[ref] = relevance * weight * recency * boost * gate
    return out


def ts_sort_value(ts: str | None) -> float:
    """The relevance order's time (``_pack_ts_sort_value``): the stripped ``ts``,
    a trailing ``Z`` made ``+00:00``, as a POSIX timestamp; naive values are
    local time of a UTC process; empty or unparseable is 0.0 (the oldest)."""
    text = (ts or "").strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    when = _parse(text)
    if when is None:
        return 0.0
    if when.tzinfo is None:
        if when.date() == _FIRST_DAY:
            return 0.0
        when = when.replace(tzinfo=UTC)
    return when.timestamp()
