"""Clarity v1 as the plugin's code computes it: one hand case per rule of SCORER.md
(``../shared/data/clarity/SCORER.md``; kbarbel640-del/openclaw, commit 88bb3988)."""

from __future__ import annotations

import math

import pytest

from packproof.packer.clarity_pruner import PrunerItem, PrunerSettings, category_of, v1_prune
from packproof.packer.strategies.clarity import ScorerSettings, js_round1, or_default, v1_score
from packproof.packer.v8pow import pow as v8pow

DEFAULTS = ScorerSettings.of({})


@pytest.mark.parametrize("falsy", [0, -0.0, math.nan, None, "", False])
def test_every_falsy_setting_is_the_default(falsy: object) -> None:
    assert ScorerSettings.of({"halfLife": falsy, "anchorBonus": falsy}) == DEFAULTS
    assert or_default(falsy, 7) == 7


def test_fractional_and_huge_settings_are_kept() -> None:
    s = ScorerSettings.of({"recencyWindow": 2.5, "frequencyScale": 1e9})
    assert (s.recency_window, s.frequency_scale) == (2.5, 1e9)


def test_zeros_honour_keeps_the_zero() -> None:
    assert ScorerSettings.of({"recencyBonus": 0}, "honour").recency_bonus == 0.0


def test_a_fresh_mention_by_hand() -> None:
    # log2(4)*10 = 20, recency 20 at t = 0, utility 2*15 = 30
    score = v1_score(3, 2, 10, False, 10, DEFAULTS)
    assert score.final == 70.0 and score.components["staleness"] == 0.0


def test_recency_at_the_window_edge_is_bonus_over_window_plus_one_then_zero() -> None:
    assert v1_score(0, 0, 7, False, 10, DEFAULTS).components["recency"] == 5.0  # t = W = 3
    assert v1_score(0, 0, 6, False, 10, DEFAULTS).components["recency"] == 0.0  # t = 4


def test_a_fractional_window_is_compared_as_is() -> None:
    s = ScorerSettings.of({"recencyWindow": 2.5})
    assert v1_score(0, 0, 8, False, 10, s).components["recency"] == pytest.approx(20 / 3.5 * 1.5)
    assert v1_score(0, 0, 7, False, 10, s).components["recency"] == 0.0  # t = 3 > 2.5


def test_a_future_mention_counts_as_t_zero() -> None:
    assert v1_score(1, 0, 12, False, 10, DEFAULTS).turns_since_last_mention == 0.0


def test_staleness_counts_turns_past_the_window_and_eats_only_frequency() -> None:
    # t = 8: turnsStale 5 = one half-life: half of frequency 20 goes; utility stays
    score = v1_score(3, 1, 2, False, 10, DEFAULTS)
    assert score.components["staleness"] == pytest.approx(10.0)
    assert score.final == pytest.approx(10.0 + 15.0)


def test_the_decay_is_the_once_computed_decay_factor_to_the_power_turns_stale() -> None:
    s = ScorerSettings.of({"halfLife": 7, "frequencyScale": 1e9})
    assert s.decay_factor == v8pow(0.5, 1 / 7)
    score = v1_score(1, 0, 0, False, 103, s)
    assert score.components["staleness"] == (1 - v8pow(s.decay_factor, 100)) * 1e9


def test_powers_are_v8s_not_the_host_libms() -> None:
    # SCORER.md: V8's Math.pow(0.5, 0.25) is 0.8408964152537146; halfLife 4, frequency
    # 20, turnsStale 4 gives 10.000000000000004 in the plugin
    assert ScorerSettings.of({"halfLife": 4}).decay_factor == 0.8408964152537146
    score = v1_score(3, 0, 0, False, 7, ScorerSettings.of({"halfLife": 4}))
    assert score.final == 10.000000000000004


def test_anchor_is_a_setting_added_unrounded() -> None:
    s = ScorerSettings.of({"anchorBonus": 77.25})
    score = v1_score(0, 0, 0, True, 50, s)
    assert score.final == 77.25 and score.breakdown["anchor"] == 77.25


def test_the_clamp_at_zero_needs_a_negative_input() -> None:
    score = v1_score(0, -2, 0, False, 50, DEFAULTS)
    assert (score.raw, score.final) == (-30.0, 0.0)


def test_breakdown_rounds_halves_up_at_one_decimal() -> None:
    assert (js_round1(0.25), js_round1(-0.25), js_round1(15.849625007211563)) == (0.3, -0.2, 15.8)


@pytest.mark.parametrize(
    ("item_id", "category"),
    [
        ("project:x", "project"),
        ("tool:web_search", "project"),  # an underscore anywhere makes a project
        ("tool:exec", "tool"),
        ("file:a", "file"),
        ("notes.md", "file"),
        ("keyword:deploy", "topic"),
        ("claracore", "other"),
    ],
)
def test_category_comes_from_the_id_first_match_wins(item_id: str, category: str) -> None:
    assert category_of(item_id) == category


def test_pruner_config_keeps_zeros_top_level_options_default_them() -> None:
    assert PrunerSettings.of({"maxContextItems": 0}, "config").max_context_items == 0
    assert PrunerSettings.of({"maxContextItems": 0}, "top-level").max_context_items == 50
    off = PrunerSettings.of({"useTierMultipliers": 0}, "top-level")
    assert off.use_tier_multipliers  # only an exact false turns them off there


def test_a_missing_zero_or_unknown_tier_multiplies_by_one() -> None:
    p = PrunerSettings.of({"tierMultipliers": {"essential": 3, "low": 0}})
    assert (p.multiplier("essential"), p.multiplier("high"), p.multiplier("low")) == (3, 1, 1)
    assert p.multiplier("critical") == 1.0
    assert PrunerSettings.of({"useTierMultipliers": False}).multiplier("essential") is None


def it(
    key: str, score: float, mentions: float = 0, anchored: bool = False, tier: str = "normal"
) -> PrunerItem:
    return PrunerItem(key, score, mentions, anchored, tier)


def test_the_rules_in_their_order() -> None:
    p = PrunerSettings.of({"maxItemsPerCategory": 1, "targetContextItems": 5})
    result = v1_prune(
        [
            it("a", 100),  # other: score 100, kept by the threshold, fills "other"
            it("b", 50),  # other is full: pruned before the score test
            it("c", 1, anchored=True),  # anchored bypasses the category limit
            it("d", 2, mentions=3),  # min mentions bypasses it too
            it("tool:x", 1),  # below threshold, fewer than 5 kept: under target
        ],
        p,
        strict=False,
    )
    reasons = {k: d.reason for k, d in result.decisions.items()}
    assert reasons == {
        "a": "score_threshold",
        "b": "category_full",
        "c": "anchored",
        "d": "min_mentions",
        "tool:x": "under_target",
    }
    assert result.keep == ["a", "d", "c", "tool:x"] and result.prune == ["b"]


def test_strict_mode_keeps_high_scores_and_essentials() -> None:
    p = PrunerSettings.of({"maxItemsPerCategory": 0, "targetContextItems": 0})
    result = v1_prune([it("a", 30), it("b", 1, tier="essential"), it("c", 1)], p, strict=True)
    reasons = [result.decisions[k].reason for k in ("a", "b", "c")]
    assert reasons == ["strict_score", "strict_essential", "category_full"]


def test_target_reached_then_prune() -> None:
    p = PrunerSettings.of({"targetContextItems": 1})
    result = v1_prune([it("a", 1), it("b", 1)], p, strict=False)
    assert [result.decisions[k].reason for k in "ab"] == [
        "under_target",
        "below_threshold_target_reached",
    ]


def test_adjusted_score_sorts_stably_and_the_hard_cap_cuts_the_lowest_kept() -> None:
    p = PrunerSettings.of({"maxContextItems": 2.9})  # slice(0, 2.9): two items
    result = v1_prune(
        [it("a", 10), it("b", 10, tier="essential"), it("c", 10, anchored=True)], p, strict=False
    )
    assert result.order == ["b", "a", "c"]
    assert result.keep == ["b", "a"] and result.prune == ["c"]
    assert result.decisions["c"].reason == "hard_cap(anchored)"
    assert result.decisions["b"].adjusted_score == 20.0


def test_a_negative_cap_counts_from_the_end() -> None:
    p = PrunerSettings.of({"maxContextItems": -1})
    result = v1_prune([it("a", 10), it("b", 9), it("c", 8)], p, strict=False)
    assert result.keep == ["a", "b"] and result.prune == ["c"]
