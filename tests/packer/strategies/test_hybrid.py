"""hybrid: the documented mixture, by hand, and the cases it exists for."""

from __future__ import annotations

import pytest

from ..helpers import msg, run


def test_components_and_score_by_hand() -> None:
    items = [
        msg("a", "kafka lag", tokens=1, ordinal=0, turn=0),
        msg(
            "b",
            "weather",
            tokens=1,
            ordinal=1,
            turn=8,
            importance="must_remember",
            trust="untrusted",
        ),
    ]
    result = run(items, 1, "hybrid", prompt="kafka", current_turn=8)
    comp = {k: v.tolist() for k, v in result.ranking.components.items()}
    assert comp["relevance"] == [1.0, 0.0]
    assert comp["recency"] == pytest.approx([0.5, 1.0])  # age 8, half-life 8
    # usage: Clarity with no mentions; b is mentioned now (t=0 -> recency bonus 20)
    assert comp["usage"] == pytest.approx([0.0, 1.0])
    assert comp["importance_weight"] == [1.0, 1.2]
    assert comp["trust_weight"] == [1.0, 0.8]
    a = 0.7 * 1.0 + 0.2 * 0.5 + 0.1 * 0.0
    b = (0.7 * 0.0 + 0.2 * 1.0 + 0.1 * 1.0) * 1.2 * 0.8
    assert result.ranking.scores.tolist() == pytest.approx([a, b])  # type: ignore[union-attr]


def test_rescues_an_old_important_frequently_referenced_item_that_bm25_drops() -> None:
    # Every item matches the prompt equally (same terms matched, same length), so
    # bm25 ties and keeps the newest. hybrid's usage and importance parts keep the
    # old decision that is referenced over and over.
    items = [
        msg(
            "decision",
            "ledger ui colors are navy",
            tokens=10,
            ordinal=0,
            turn=0,
            importance="must_remember",
            mentions=12,
            references=6,
            last_mention_turn=39,
        ),
        *[
            msg(f"chat{i}", f"ledger ui colors look off{i}", tokens=10, ordinal=1 + i, turn=30 + i)
            for i in range(10)
        ],
    ]
    prompt = "what ledger ui colors did we pick"
    bm25 = run(items, 20, "bm25", prompt=prompt, current_turn=40)
    hybrid = run(items, 20, "hybrid", prompt=prompt, current_turn=40)
    assert bm25.selected_ids == ["chat8", "chat9"]
    assert hybrid.selected_ids == ["decision", "chat9"]


def test_no_prompt_still_ranks_by_recency_and_usage() -> None:
    items = [msg(f"m{i}", "x", tokens=1, ordinal=i, turn=i) for i in range(5)]
    result = run(items, 2, "hybrid")
    assert result.mode == "ranked"
    assert result.selected_ids == ["m3", "m4"]


def test_every_weight_is_a_parameter() -> None:
    items = [
        msg("a", "alpha", tokens=1, ordinal=0, turn=0),
        msg("b", "beta", tokens=1, ordinal=1, turn=9),
    ]
    only_recency = {"w_relevance": 0, "w_usage": 0, "w_recency": 1}
    r = run(items, 1, "hybrid", only_recency, prompt="alpha")
    assert r.selected_ids == ["b"]
    only_relevance = {"w_relevance": 1, "w_usage": 0, "w_recency": 0}
    r = run(items, 1, "hybrid", only_relevance, prompt="alpha")
    assert r.selected_ids == ["a"]
