"""Clarity v2's semantic matcher (SCORER.md, "Matcher")."""

from __future__ import annotations

from packproof.packer.clarity2.extract import Entity
from packproof.packer.clarity2.matcher import deduplicate, similarity, vector


def make(id_: str, name: str, mentions: int = 1) -> Entity:
    kind, normalized = id_.split(":", 1)
    e = Entity(id_, kind, name, normalized, 1, 1)
    for _ in range(mentions):
        e.add_mention(1)
    return e


def test_vectors_are_unit_length() -> None:
    assert abs(sum(w * w for w in vector("Focus Engine focus_engine").values()) - 1) < 1e-12


def test_equal_normalized_names_are_identical_whatever_the_types() -> None:
    assert similarity(make("plugin:reflect", "Reflect"), make("tool:reflect", "reflect"), {}) == 1.0


def test_the_recorded_cross_type_similarity() -> None:
    a = make("project:openclaw", "Openclaw")
    b = make("file:openclaw_json", "openclaw.json")
    # SCORER.md's recorded value, to the last bits its relationship strengths show
    assert abs(similarity(a, b, {}) - 0.5407590198866753) < 1e-15


def test_a_merge_keeps_the_entity_with_more_mentions_and_gains_its_turns() -> None:
    few = make("project:focus_engine", "Focus Engine", 1)
    many = make("project:focusengine", "FocusEngine", 2)
    kept, related = deduplicate([few, many])
    assert [e.id for e in kept] == ["project:focusengine"]
    assert many.mention_count == 3 and many.history == [1, 1, 1]
    assert related == []


def test_unlike_names_are_left_alone() -> None:
    kept, related = deduplicate([make("tool:exec", "exec"), make("person:alice", "Alice")])
    assert [e.id for e in kept] == ["tool:exec", "person:alice"] and related == []
