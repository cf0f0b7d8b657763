"""clarity scores every item at once (``v1_scores``, ``js_round1s``) bit for bit as
the scalar ``v1_score`` and ``js_round1`` do, whatever the settings (zeros,
negatives, infinities, NaN) and values; the ranking equals the one made item by
item (the strategy's former code, kept here as the reference)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packproof.packer.model import IMPORTANCE
from packproof.packer.request import parse_request
from packproof.packer.strategies.base import Ranking, ScoringView
from packproof.packer.strategies.clarity import (
    _TIER_OF_IMPORTANCE,
    Clarity,
    ScorerSettings,
    js_round1,
    js_round1s,
    v1_score,
    v1_scores,
)

SETTING = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 3.0, 5.0, 0.5, -1.0, 1e308, math.inf, -math.inf, math.nan]),
    st.floats(-50, 50),
    st.floats(allow_nan=True, allow_infinity=True),
)
COUNT = st.one_of(st.integers(0, 12), st.integers(0, 2**62))
TURN = st.one_of(st.integers(-5, 60), st.integers(-(2**62), 2**62))


def _bits(x: np.ndarray) -> bytes:
    return np.ascontiguousarray(x, dtype=np.float64).tobytes()


def _same(a: float, b: float) -> bool:
    return math.copysign(1.0, a) == math.copysign(1.0, b) and (
        a == b or (math.isnan(a) and math.isnan(b))
    )


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.tuples(COUNT, COUNT, TURN, st.booleans()), max_size=30),
    current_turn=TURN,
    given=st.lists(SETTING, min_size=6, max_size=6),
)
def test_v1_scores_are_v1_score_bit_for_bit(
    values: list[tuple[int, int, int, bool]], current_turn: int, given: list[float]
) -> None:
    s = ScorerSettings(*given)
    m, r, last, a = (np.array(c) for c in zip(*values, strict=True)) if values else [[]] * 4
    vector = v1_scores(
        np.asarray(m, dtype=np.int64),
        np.asarray(r, dtype=np.int64),
        np.asarray(last, dtype=np.int64),
        np.asarray(a, dtype=bool),
        current_turn,
        s,
    )
    for k, (mk, rk, lk, ak) in enumerate(values):
        one = v1_score(float(mk), float(rk), float(lk), ak, current_turn, s)
        for name, value in one.components.items():
            assert _same(float(vector[name][k]), value), (name, k)
        assert _same(float(vector["final"][k]), one.final)


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=20))
def test_js_round1s_is_js_round1(xs: list[float]) -> None:
    array = np.array(xs, dtype=np.float64)
    try:
        want = [js_round1(x) for x in xs]
    except (OverflowError, ValueError) as error:
        with pytest.raises(type(error)):
            js_round1s(array)
        return
    got = js_round1s(array).tolist()
    assert all(_same(g, w) for g, w in zip(got, want, strict=True))


def test_js_round1s_half_values_and_signed_zero() -> None:
    xs = [0.05, -0.05, 0.15, -0.15, 0.25, 2.675, -2.675, -0.04, -0.0, 0.0, 1e300, -1e-300]
    got = js_round1s(np.array(xs)).tolist()
    assert all(_same(g, js_round1(x)) for g, x in zip(got, xs, strict=True))


def _rank_item_by_item(strategy: Clarity, view: ScoringView) -> Ranking:
    """The ``clarity`` ranking as it was computed before, one item at a time."""
    items = view.items
    s = strategy.settings()
    tiers = strategy.tier_settings()
    scores = [
        v1_score(float(m), float(r), float(last), bool(a), view.current_turn, s)
        for m, r, last, a in zip(
            items.mentions.tolist(),
            items.references.tolist(),
            items.last_mention_turns.tolist(),
            items.anchored.tolist(),
            strict=True,
        )
    ]
    factor = [
        tiers.multiplier(_TIER_OF_IMPORTANCE[IMPORTANCE[i]], strategy.zeros)  # type: ignore[arg-type]
        for i in items.importance.tolist()
    ]
    tier = np.array([1.0 if f is None else f for f in factor], dtype=np.float64)
    final = np.array([x.final for x in scores], dtype=np.float64)
    parts = {
        name: np.array([x.components[name] for x in scores], dtype=np.float64)
        for name in ("frequency", "recency", "utility", "staleness", "anchor")
    }
    shown = {
        "breakdown_" + name: np.array([x.breakdown[name] for x in scores], dtype=np.float64)
        for name in ("frequency", "recency", "utility", "stalenessPenalty")
    }
    return Ranking(scores=final * tier, components={**parts, **shown, "final": final, "tier": tier})


PARAM = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, 5.0, 7.5, 10.0, 100.0])


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 9),
            st.integers(0, 4),
            st.integers(0, 40),
            st.booleans(),
            st.sampled_from(IMPORTANCE),
        ),
        min_size=1,
        max_size=40,
    ),
    current_turn=st.integers(0, 45),
    params=st.fixed_dictionaries(
        {},
        optional={
            "half_life": PARAM,
            "recency_window": PARAM,
            "recency_bonus": PARAM,
            "reference_weight": PARAM,
            "frequency_scale": PARAM,
            "anchor_bonus": PARAM,
            "tier_essential": PARAM,
            "tier_low": PARAM,
            "use_tier_multipliers": st.sampled_from(["on", "off"]),
            "zeros": st.sampled_from(["default", "honour"]),
        },
    ),
)
def test_rank_is_the_item_by_item_ranking(
    rows: list[tuple[int, int, int, bool, str]], current_turn: int, params: dict[str, object]
) -> None:
    items = [
        {
            "id": f"m{k}",
            "text": "x",
            "tokens": 1,
            "mentions": m,
            "references": r,
            "last_mention_turn": last,
            "anchored": anchored,
            "importance": importance,
        }
        for k, (m, r, last, anchored, importance) in enumerate(rows)
    ]
    req = parse_request({"items": items, "budget_tokens": 10, "current_turn": current_turn})
    view = ScoringView(req.items, None, req.current_turn)
    strategy = Clarity(**params)  # type: ignore[arg-type]
    got, want = strategy.rank(view), _rank_item_by_item(strategy, view)
    assert got.scores is not None and want.scores is not None
    assert _bits(got.scores) == _bits(want.scores)
    assert list(got.components) == list(want.components)
    for name, column in want.components.items():
        assert got.components[name].dtype == column.dtype
        assert _bits(got.components[name]) == _bits(column), name
