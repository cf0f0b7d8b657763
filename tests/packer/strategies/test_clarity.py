"""clarity: Clarity v1 scorer formulas with hand values; explicit zeros honoured."""

from __future__ import annotations

import math

import pytest

from ..helpers import msg, run


def scores_of(
    items: list[dict[str, object]], current_turn: int, **params: object
) -> dict[str, float]:
    result = run(items, 1, "clarity", params, current_turn=current_turn)
    ids = [result.items.ids[i] for i in result.evictable]
    return dict(zip(ids, result.ranking.scores.tolist(), strict=True))  # type: ignore[union-attr]


def item(item_id: str, mentions: int, refs: int, last: int, **extra: object) -> dict[str, object]:
    return msg(
        item_id, "x", tokens=1, mentions=mentions, references=refs, last_mention_turn=last, **extra
    )


def test_fresh_mention_by_hand() -> None:
    # t = 0: frequency log2(4)*10 = 20, recency 20, utility 2*15 = 30 -> 70
    assert scores_of([item("a", 3, 2, 10), item("pad", 0, 0, 0)], 10)["a"] == pytest.approx(70.0)


def test_recency_falls_linearly_inside_the_window() -> None:
    # t = 2: recency (1 - 2/4) * 20 = 10; frequency log2(2)*10 = 10
    assert scores_of([item("a", 1, 0, 8), item("pad", 0, 0, 0)], 10)["a"] == pytest.approx(20.0)


def test_staleness_decays_frequency_after_the_window() -> None:
    # t = 13: no recency; staleness (1 - 0.5^((13-3)/5)) * 20 = 0.75 * 20 = 15
    assert scores_of([item("a", 3, 0, 0), item("pad", 0, 0, 0)], 13)["a"] == pytest.approx(5.0)


def test_anchor_bonus_and_tier() -> None:
    # anchored items are kept by policy, so compare the tier: must_remember x2.0
    s = scores_of([item("a", 1, 0, 10, importance="must_remember"), item("b", 1, 0, 10)], 10)
    assert s["a"] == pytest.approx(2 * s["b"]) and s["b"] == pytest.approx(30.0)


def test_score_is_never_negative() -> None:
    s = scores_of([item("a", 0, 0, 0), item("b", 0, 0, 0)], 50)
    assert s["a"] == 0.0


@pytest.mark.parametrize(
    "params",
    [
        {"frequency_scale": 0},
        {"recency_bonus": 0},
        {"reference_weight": 0},
        {"recency_window": 0},
        {"half_life": 0},
        {"anchor_bonus": 0},
    ],
)
def test_explicit_zero_is_the_default_as_the_plugins_or_reads_it(params: dict[str, float]) -> None:
    # the plugin reads config.X || default: 0 is falsy, so the default applies
    items = [item("a", 3, 2, 10), item("b", 3, 0, 0), item("p", 0, 0, 0)]
    assert scores_of(items, 13, **params) == scores_of(items, 13)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"frequency_scale": 0}, 20.0 + 30.0),  # no frequency part at all
        ({"recency_bonus": 0}, 20.0 + 30.0),
        ({"reference_weight": 0}, 40.0),
        ({"recency_window": 0}, 70.0),  # t = 0 is still inside a 0-turn window
    ],
)
def test_zeros_honour_keeps_an_explicit_zero(params: dict[str, float], expected: float) -> None:
    assert scores_of([item("a", 3, 2, 10), item("p", 0, 0, 0)], 10, zeros="honour", **params)[
        "a"
    ] == pytest.approx(expected)


def test_half_life_zero_honoured_means_immediate_full_decay() -> None:
    s = scores_of([item("a", 3, 0, 0), item("p", 0, 0, 0)], 13, half_life=0, zeros="honour")
    assert s["a"] == 0.0
    s = scores_of([item("a", 3, 0, 0), item("p", 0, 0, 0)], 13, half_life=10)
    assert s["a"] == pytest.approx(20 * 0.5 ** ((13 - 3) / 10))
    assert math.isfinite(s["a"])


def test_a_zero_tier_factor_is_one_as_the_plugin_reads_it_and_zero_when_honoured() -> None:
    items = [item("a", 1, 0, 10, importance="ignore"), item("b", 1, 0, 10)]
    assert scores_of(items, 10, tier_low=0)["a"] == pytest.approx(30.0)
    assert scores_of(items, 10, tier_low=0, zeros="honour")["a"] == 0.0


def test_tier_multipliers_off_is_the_bare_scorer() -> None:
    items = [item("a", 1, 0, 10, importance="must_remember"), item("b", 1, 0, 10)]
    s = scores_of(items, 10, use_tier_multipliers="off")
    assert s["a"] == s["b"] == pytest.approx(30.0)


def test_decay_is_the_rounded_decay_factor_raised_to_turns_stale() -> None:
    # SCORER.md: decayFactor = 0.5 ** (1 / halfLife) once, then decayFactor ** turnsStale
    s = scores_of([item("a", 3, 0, 0), item("p", 0, 0, 0)], 3 + 7, half_life=3)
    assert s["a"] == 20 - (1 - (0.5 ** (1 / 3)) ** 7) * 20
