"""Clarity v2's tracker, scorer and turn-by-turn replay, one rule of SCORER.md each
("Tracking", "Score", "How index.js uses it"), with hand-computed values."""

from __future__ import annotations

import math

import pytest

from packproof.packer.clarity2.extract import Entity, Relationship
from packproof.packer.clarity2.tracker import (
    DEFAULT_WEIGHTS,
    Conversation,
    Tracker,
    js_round,
    replay,
    score_entity,
)


def entity(
    history: list[int], *, anchored: bool = False, strengths: tuple[float, ...] = ()
) -> Entity:
    e = Entity("tool:exec", "tool", "exec", "exec", history[0] if history else 0, 0)
    for turn in history:
        e.add_mention(turn)
    e.relationships = [Relationship(f"x:{i}", "related", s) for i, s in enumerate(strengths)]
    e.is_anchor = anchored
    return e


def test_the_score_is_the_weighted_sum_of_its_parts() -> None:
    e = entity([2, 4], strengths=(0.3, 0.7))
    s = score_entity(e, 6, 1, 3, DEFAULT_WEIGHTS)
    assert s.tf == pytest.approx(math.log(3))
    assert s.idf == pytest.approx(math.log(4 / 2) + 1)
    assert s.recency == pytest.approx(math.exp(-2 / 5))
    assert s.relationship_boost == pytest.approx(5.0)
    want = 1.5 * math.log(3) + 2.5 * (math.log(2) + 1) + 30 * math.exp(-0.4) + 50
    assert s.total == pytest.approx(want, abs=1e-12)


def test_tf_counts_mentions_within_ten_turns_of_the_entitys_own_last_mention() -> None:
    e = entity([2, 3, 13])  # 13 - 3 = 10 is inside (inclusive), 13 - 2 = 11 is not
    assert score_entity(e, 40, 1, 1, DEFAULT_WEIGHTS).tf == pytest.approx(math.log(1 + 2))


def test_a_missing_or_zero_document_frequency_counts_as_one() -> None:
    e = entity([1])
    assert score_entity(e, 1, 0, 5, DEFAULT_WEIGHTS).idf == pytest.approx(math.log(6 / 2) + 1)


def test_recency_is_an_e_folding_of_five_turns() -> None:
    assert score_entity(entity([5]), 10, 1, 1, DEFAULT_WEIGHTS).recency == pytest.approx(
        math.exp(-1)
    )


def test_an_anchor_adds_five_whatever_the_weights() -> None:
    zero = {"tf": 0, "idf": 0, "recency": 0, "relationship": 0}
    assert score_entity(entity([1], anchored=True), 1, 1, 1, zero).total == 5.0


def test_the_total_is_capped_at_100_and_the_uncapped_sum_kept() -> None:
    s = score_entity(entity([1], strengths=(1.0,)), 1, 1, 1, DEFAULT_WEIGHTS)
    assert s.uncapped > 100
    assert s.total == 100.0


def test_given_weights_replace_the_defaults_key_by_key() -> None:
    conv = Conversation.from_input({"turns": [], "scoring": {"weights": {"tf": 0}}})
    assert dict(conv.weights) == {"tf": 0, "idf": 25, "recency": 30, "relationship": 10}


def test_every_non_empty_user_message_is_a_document() -> None:
    t = Tracker()
    t.track_mentions("hi")
    t.track_mentions("MoltBot MoltBot runs")
    assert t.documents == 2
    assert t.document_frequency == {"moltbot": 1}


def test_a_known_entity_gains_each_new_turn_once_and_keeps_its_relationships() -> None:
    t = Tracker()
    t.current_turn = 1
    t.track_mentions("MoltBot talks to SOUL.md")
    t.current_turn = 2
    t.track_mentions("MoltBot MoltBot and awareness")
    moltbot = t.entities["project:moltbot"]
    assert moltbot.history == [1, 2]
    assert [r.target for r in moltbot.relationships] == ["file:soul_md", "file:soul_md"]


def test_the_history_keeps_twenty_turns_but_the_count_keeps_every_mention() -> None:
    e = entity(list(range(1, 26)))
    assert e.history == list(range(6, 26))
    assert e.mention_count == 25


def test_injection_takes_scores_of_at_least_15_and_at_most_eight() -> None:
    t = Tracker()
    t.current_turn = 1
    t.track_mentions("exec read write edit process nodes canvas tts browser")
    assert len(t.entities) == 9
    assert [e.id for e, _ in t.injected()] == [e.id for e, _ in t.scored()][:8]
    solo = Tracker()
    solo.current_turn = 1
    solo.track_mentions("run exec now please")  # 1.5 ln 2 + 2.5 + 30 = 33.54
    assert [e.id for e, _ in solo.injected()] == ["tool:exec"]
    solo.current_turn = 7  # 30 exp(-6/5) = 9.04: 13.08 in all
    assert solo.injected() == []


def test_an_answer_references_ids_less_the_project_tool_file_prefix() -> None:
    t = Tracker()
    t.current_turn = 1
    t.track_mentions("awareness with exec and MoltBot")
    assert t.referenced_in("use EXEC in moltbot; awareness") == ["project:moltbot", "tool:exec"]
    t.track_reference("tool:exec")
    assert t.entities["tool:exec"].history == [1, 1]
    assert t.references == {"tool:exec": 1}


def test_the_replay_follows_the_hooks_turn_by_turn() -> None:
    conv = Conversation.from_input(
        {
            "turns": [
                {"user": "MoltBot and exec are ready", "assistant": "", "anchor": ["tool:exec"]},
                {"user": "", "assistant": "exec it"},
                {"user": "anything new today?", "assistant": "nothing"},
            ]
        }
    )
    tracker, records = replay(conv)
    assert [r.mentioned for r in records] == [("project:moltbot", "tool:exec"), (), ()]
    assert records[0].referenced is None  # an empty answer
    assert records[1].injected == ()  # an empty user message skips the injection
    assert records[1].referenced == ("tool:exec",)
    assert [i.id for i in records[2].injected] == ["tool:exec", "project:moltbot"]
    assert tracker.current_turn == 3
    assert tracker.documents == 2


def test_shown_scores_round_halves_up() -> None:
    assert (js_round(2.5), js_round(-2.5), js_round(65.49)) == (3, -2, 65)
