"""Clarity v2's extraction, one rule of SCORER.md ("Extraction in detail") each."""

from __future__ import annotations

import pytest

from packproof.packer.clarity2.extract import Entity, extract


def ids(text: str, turn: int = 1) -> list[str]:
    return [e.id for e in extract(text, turn)]


def by_id(text: str, turn: int = 1) -> dict[str, Entity]:
    return {e.id: e for e in extract(text, turn)}


def test_a_message_under_ten_characters_yields_nothing() -> None:
    assert ids("MoltBot") == []
    assert ids("ok MoltBot") == ["project:moltbot"]


def test_the_metadata_block_counts_before_the_length_test() -> None:
    text = 'Conversation info (untrusted metadata):\n```json\n{"a": 1}\n```\nUSER.md'
    assert ids(text) == []


def test_a_clarity_context_block_keeps_what_follows_tracked_mentions() -> None:
    text = "[CLARITY CONTEXT]\n  ● project:claracore (60)\nTracked mentions: x\nMoltBot"
    assert ids(text) == ["project:moltbot"]


def test_a_guide_block_runs_to_the_end_of_the_message() -> None:
    assert ids("[GUIDE — User Message] remember ClaraCore and SOUL.md") == []


def test_a_camel_case_name_with_a_suffix_counts_twice() -> None:
    found = by_id("we ship OpenClaw and MoltBot today")
    assert found["project:openclaw"].mention_count == 2
    assert found["project:moltbot"].mention_count == 1


def test_an_entity_first_seen_at_turn_zero_gets_no_mention_for_its_first_match() -> None:
    found = by_id("we ship ClaraCore and MoltBot today", turn=0)
    assert found["project:claracore"].mention_count == 1
    assert found["project:moltbot"].mention_count == 0
    assert found["project:moltbot"].history == []


def test_memory_docs_and_upper_md_files_also_match_the_generic_md_pattern() -> None:
    found = by_id("see memory/notes.md and SOUL.md and plan.md and openclaw.json")
    assert found["file:memory_notes_md"].mention_count == 2
    assert found["file:soul_md"].mention_count == 2
    assert found["file:plan_md"].mention_count == 1
    assert found["file:openclaw_json"].mention_count == 1


def test_a_json_name_also_yields_the_project_before_the_dot() -> None:
    assert ids("change openclaw.json now") == ["project:openclaw", "file:openclaw_json"]


def test_the_generic_md_match_is_the_word_run_before_md() -> None:
    assert ids("see http://x.io/a.md please") == ["file:io_a_md"]


@pytest.mark.parametrize("compound", ["real-time", "state-of-the-art"])
def test_common_compounds_are_not_projects(compound: str) -> None:
    assert ids(f"a {compound} pipeline with focus-engine") == ["project:focus_engine"]


def test_a_suffix_needs_a_letter_run_before_it() -> None:
    assert ids("the board and the engine are fine") == []
    assert ids("the DashBoard is fine today") == ["project:dashboard"]


def test_creation_order_is_projects_plugins_tools_files_persons_decisions() -> None:
    text = "Alice: subagent exec README.md awareness MoltBot, we decided to ship it. done"
    assert ids(text) == [
        "project:moltbot",
        "plugin:awareness",
        "tool:exec",
        "tool:subagents",
        "file:readme_md",
        "person:alice",
        "decision:ship_it",
    ]


def test_tools_are_case_sensitive_but_subagent_is_not() -> None:
    assert ids("run EXEC then Subagent now") == ["tool:subagents"]


def test_reflect_is_a_plugin_and_a_tool_merged_into_the_plugin() -> None:
    found = by_id("please reflect on it")
    assert list(found) == ["plugin:reflect"]
    assert found["plugin:reflect"].mention_count == 2
    rels = [(r.target, r.type, r.strength) for r in found["plugin:reflect"].relationships]
    assert rels == [("tool:reflect", "related", 0.3), ("tool:reflect", "uses", 0.7)]


def test_decisions_take_the_text_up_to_a_comma_or_full_stop() -> None:
    assert ids("so we are going with Plan B-2 now, thanks") == ["decision:plan_b_2_now"]


def test_every_pair_is_related_and_typed_pairs_add_their_relationship() -> None:
    found = by_id("MoltBot keeps SOUL.md while awareness uses exec")
    moltbot = [(r.target, r.type, r.strength) for r in found["project:moltbot"].relationships]
    assert moltbot == [
        ("plugin:awareness", "related", 0.3),
        ("tool:exec", "related", 0.3),
        ("file:soul_md", "related", 0.3),
        ("file:soul_md", "contains", 0.5),
    ]
    awareness = [(r.target, r.type) for r in found["plugin:awareness"].relationships]
    assert ("tool:exec", "uses") in awareness


def test_a_similar_pair_adds_a_tenth_of_its_similarity_from_the_earlier_entity() -> None:
    found = by_id("change openclaw.json now")
    first = found["project:openclaw"].relationships[0]
    assert first.target == "file:openclaw_json"
    assert first.strength == pytest.approx(0.3 + 0.5407590198866753 * 0.1, abs=1e-15)
    back = found["file:openclaw_json"].relationships[0]
    assert back.strength == 0.3


def test_near_duplicates_merge_into_the_one_with_more_mentions() -> None:
    found = by_id("FocusEngine or focus-engine, same thing")
    assert list(found) == ["project:focusengine"]
    assert found["project:focusengine"].mention_count == 3
