"""The composite score, factor by factor, and how timestamps are read."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import pytest

from packproof.packer.openclaw.scoring import (
    Factors,
    composite_scores,
    half_life_days,
    importance_weight,
    reference_time,
    row_age_days,
    ts_sort_value,
    use_boost,
)
from packproof.packer.records import LIFECYCLE, RecordFields

CLOCK = "2026-07-19T23:59:59.999999+00:00"
MIDNIGHT = datetime(2026, 7, 19, tzinfo=UTC)


def records(**columns: list) -> RecordFields:  # type: ignore[type-arg]
    base = RecordFields.defaults(len(next(iter(columns.values()))))
    fields = {
        "ts": base.ts,
        "kinds": base.kinds,
        "lifecycle": base.lifecycle,
        "used_counts": base.used_counts,
        "importance_scores": base.importance_scores,
        "supersedes": base.supersedes,
        "synthesis": base.synthesis,
    }
    for key, values in columns.items():
        fields[key] = values
    if "lifecycle" in columns:
        fields["lifecycle"] = np.array([LIFECYCLE.index(s) for s in columns["lifecycle"]])
    for key in ("used_counts", "importance_scores"):
        if key in columns:
            fields[key] = np.array(columns[key])
    return RecordFields(**fields)


def test_the_reference_is_midnight_utc_of_the_clocks_utc_day() -> None:
    assert reference_time(CLOCK) == MIDNIGHT
    # 01:30 at +02:00 is 23:30 UTC the day before
    assert reference_time("2026-07-20T01:30:00+02:00") == MIDNIGHT
    assert reference_time("2026-07-19T12:00:00Z") == MIDNIGHT
    assert reference_time("2026-07-19T12:00:00") == MIDNIGHT  # naive: UTC
    assert reference_time("yesterday") is None


@pytest.mark.parametrize(
    ("ts", "age"),
    [
        ("2026-07-18T00:00:00Z", 1.0),  # Z read as +00:00
        ("2026-07-18T00:00:00", 1.0),  # naive: UTC
        ("2026-07-18T02:00:00+02:00", 1.0),  # an offset
        ("2026-07-12", 7.0),  # a date alone
        ("2026-07-18T12:00:00Z", 0.5),
        ("2026-07-19T00:00:01Z", 0.0),  # the clock's own day: age 0
        ("2027-01-01T00:00:00Z", 0.0),  # the future: age 0
        ("yesterday", 0.0),  # unparseable: age 0 (the freshest)
        ("", 0.0),
        (None, 0.0),
        (" 2026-07-18T00:00:00Z", 0.0),  # not stripped: unparseable
    ],
)
def test_age_in_days_from_midnight(ts: str | None, age: float) -> None:
    assert row_age_days(ts, MIDNIGHT) == age


def test_an_unparseable_clock_ages_nothing() -> None:
    assert row_age_days("2020-01-01", None) == 0.0


@pytest.mark.parametrize(
    ("kind", "days"),
    [
        ("preference", 365.0),
        ("decision", 180.0),
        ("learning", 180.0),
        ("fact", 120.0),
        ("entity", 120.0),
        ("plan", 60.0),
        ("  Event ", 14.0),  # stripped and lower-cased
        ("tool", 30.0),
        (None, 30.0),  # none: note
        ("", 30.0),
        ("observation", 30.0),  # anything else
    ],
)
def test_half_life_by_kind(kind: str | None, days: float) -> None:
    assert half_life_days(kind) == days


@pytest.mark.parametrize(
    ("score", "weight"),
    [(math.nan, 1.0), (0.0, 0.8), (0.49, 0.8), (0.5, 1.0), (0.79, 1.0), (0.8, 1.2), (1.0, 1.2)],
)
def test_importance_weight_by_the_label_of_the_score(score: float, weight: float) -> None:
    assert importance_weight(score) == weight


def test_use_boost_grows_with_log1p_and_caps_at_1_3() -> None:
    assert use_boost(0) == 1.0
    assert use_boost(3) == 1 + 0.1 * math.log1p(3)
    assert use_boost(19) == 1 + 0.1 * math.log1p(19) < 1.3
    assert use_boost(20) == 1.3


def test_the_composite_multiplies_every_factor_left_to_right() -> None:
    """rrf 1/61; score 0.9 -> must_remember 1.2; an event 14 days before midnight
    -> 0.5; used 3 times -> 1 + 0.1 ln 4; stale -> 0.5."""
    recs = records(
        ts=["2026-07-05T00:00:00Z"],
        kinds=["event"],
        used_counts=[3],
        importance_scores=[0.9],
        lifecycle=["stale"],
    )
    final = composite_scores(["r"], {"r": 1 / 61}, {"r": 0}, recs, MIDNIGHT, Factors())
    expected = 1 / 61 * 1.2 * math.pow(0.5, 14 / 14) * (1 + 0.1 * math.log1p(3)) * 0.5
    assert final == {"r": expected}


@pytest.mark.parametrize(
    ("off", "expected"),
    [
        ("relevance", 1.2 * 0.5 * 1.3 * 0.9),
        ("importance", 0.25 * 0.5 * 1.3 * 0.9),
        ("recency", 0.25 * 1.2 * 1.3 * 0.9),
        ("use", 0.25 * 1.2 * 0.5 * 0.9),
        ("state", 0.25 * 1.2 * 0.5 * 1.3),
    ],
)
def test_a_factor_switched_off_is_one(off: str, expected: float) -> None:
    recs = records(
        ts=["2026-01-20T00:00:00Z"],  # 180 days: a decision's half-life
        kinds=["decision"],
        used_counts=[50],
        importance_scores=[0.95],
        lifecycle=["consolidated"],
    )
    factors = Factors(**{off: False})
    final = composite_scores(["r"], {"r": 0.25}, {"r": 0}, recs, MIDNIGHT, factors)
    assert final["r"] == pytest.approx(expected, rel=1e-15)


def test_a_soft_archived_record_scores_zero_and_unknown_state_words_are_active() -> None:
    recs = records(lifecycle=["soft-archived", "active"])
    final = composite_scores(
        ["a", "b"], {"a": 0.5, "b": 0.5}, {"a": 0, "b": 1}, recs, None, Factors()
    )
    assert final == {"a": 0.0, "b": 0.5}


@pytest.mark.parametrize(
    ("ts", "value"),
    [
        ("2026-07-19T00:00:00Z", MIDNIGHT.timestamp()),
        ("2026-07-19T00:00:00", MIDNIGHT.timestamp()),  # naive: the local time of a UTC process
        ("  2026-07-19T02:00:00+02:00 ", MIDNIGHT.timestamp()),  # stripped
        ("0001-01-01T00:00:00+00:00", -62135596800.0),
        ("0001-01-01T12:00:00", 0.0),  # naive on 0001-01-01: the local conversion fails
        ("0001-01-02", -62135510400.0),
        ("2026-07-19T00:00:00ZZ", 0.0),  # only a trailing Z is replaced
        ("yesterday", 0.0),
        ("", 0.0),
        (None, 0.0),
    ],
)
def test_the_relevance_orders_time(ts: str | None, value: float) -> None:
    assert ts_sort_value(ts) == value
