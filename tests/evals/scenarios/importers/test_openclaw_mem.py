"""The openclaw-mem importer, field by field: each value openclaw-mem derives from
its argv, settings, rows and tail is computed as its code does (POLICY.md in
../shared/data/openclaw-mem), checked here on hand-written inputs. A case's request,
files and the CLI: test_openclaw_mem_case.py."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import pytest

from packproof.evals.scenarios.importers.openclaw_mem import records as r
from packproof.evals.scenarios.importers.openclaw_mem.options import (
    Settings,
    parse_args,
    parse_env,
    strategy_params,
)
from packproof.evals.scenarios.importers.openclaw_mem.synthesis import (
    card_sources,
    is_fresh,
    scope_token,
    source_digest,
)
from packproof.evals.scenarios.importers.openclaw_mem.tail import normalise_line, tail_lines
from packproof.packer import InputError

# ---------------------------------------------------------------- argv and settings


def test_argv_is_read_as_argparse_reads_it_with_the_clamps() -> None:
    args = [
        "pack",
        "--query",
        "  deploy  ",
        "--limit=-2",
        "--budget-tokens",
        "-5",  # argparse takes a negative number as a value
        "--tail-text",
        "a",
        "--tail-text=-b",
        "--tail-text",
        "- c",  # with a space: a value, not an option
        "--tail-max-items=-1",
        "--pack-trust-policy",
        "exclude_quarantined_fail_open",
        "--include-archived",
        "--trace",
        "--json",
    ]
    o = parse_args(args, Settings())
    assert (o.query, o.limit, o.budget) == ("deploy", 1, 1)
    assert o.tail_texts == ("a", "-b", "- c")
    assert (o.tail_max_items, o.tail_budget_tokens) == (-1, 0)
    assert o.trust_policy == "exclude_quarantined_fail_open" and o.include_archived


def test_argv_defaults_and_the_last_repeated_option_wins() -> None:
    o = parse_args(["pack", "--query", "q", "--limit", "3", "--limit", "5"], Settings())
    assert (o.limit, o.budget, o.tail_max_items, o.tail_budget_tokens) == (5, 1200, 4, 0)
    assert (o.trust_policy, o.include_archived, o.query_en, o.graph) == ("off", False, None, ())
    assert parse_args(["pack", "--query", "q"], Settings(budget_tokens=90)).budget == 90


def test_graph_options_are_read_and_noted_not_modelled() -> None:
    args = ["pack", "--query", "q", "--use-graph", "auto", "--graph-scope", "p", "--graph-aware"]
    assert parse_args(args, Settings()).graph == (
        "--use-graph=auto",
        "--graph-scope=p",
        "--graph-aware",
    )
    assert parse_args(["pack", "--query", "q", "--use-graph=off"], Settings()).graph == ()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["pack", "--query", " \u3000 "], "/input/args: empty query"),
        (["pack", "--limit", "3"], "--query is required"),
        (["pack", "--query", "q", "--bogus", "1"], "/input/args/3: not an option"),
        (["pack", "--query", "q", "--limit", "ten"], "/input/args/3: --limit: not an integer"),
        (["pack", "--query", "q", "--trace=1"], "--trace takes no value"),
        (["pack", "--query", "q", "--tail-text", "-x"], "--tail-text expects one value"),
        (["pack", "--query"], "--query expects one value"),
        (["pack", "--query", "q", "--pack-trust-policy", "on"], "--pack-trust-policy"),
        (["search", "--query", "q"], "not an openclaw-mem argv"),
        ("pack --query q", "not an openclaw-mem argv"),
    ],
)
def test_what_argparse_or_pack_refuses_is_bad_input(args: Any, says: str) -> None:
    with pytest.raises(InputError, match=says):
        parse_args(args, Settings())


def test_settings_invalid_values_fall_back_to_the_defaults() -> None:
    assert parse_env({}) == Settings()
    s = parse_env(
        {
            "OPENCLAW_MEM_SCORING_PROFILE": " relevance ",
            "OPENCLAW_MEM_QUOTA_ENABLED": "off",
            "OPENCLAW_MEM_QUOTA_PREFERENCE_MIN": "0",
            "OPENCLAW_MEM_QUOTA_DECISION_MIN": "3",
            "OPENCLAW_MEM_QUOTA_EVENT_MAX_RATIO": "0.0",
            "OPENCLAW_MEM_PACK_BUDGET_TOKENS": "90",
            "OPENCLAW_MEM_SCORING_USE_ENABLED": "no",
        }
    )
    assert (s.profile, s.quotas, s.preference_min, s.decision_min) == ("relevance", False, 0, 3)
    assert (s.event_max_ratio, s.budget_tokens) == (0.0, 90)
    assert s.factors == {
        "relevance": True,
        "importance": True,
        "recency": True,
        "use": False,
        "state": True,
    }
    bad = parse_env(
        {
            "OPENCLAW_MEM_SCORING_PROFILE": "bogus",
            "OPENCLAW_MEM_QUOTA_ENABLED": "maybe",
            "OPENCLAW_MEM_QUOTA_PREFERENCE_MIN": "-1",
            "OPENCLAW_MEM_QUOTA_DECISION_MIN": "2.5",
            "OPENCLAW_MEM_QUOTA_EVENT_MAX_RATIO": "1.5",
            "OPENCLAW_MEM_PACK_BUDGET_TOKENS": "0",
        }
    )
    assert bad == Settings()
    assert parse_env({"OPENCLAW_MEM_QUOTA_ENABLED": "TRUE"}).quotas
    # the profile is stripped but not lower-cased: "Relevance" is not a profile
    assert parse_env({"OPENCLAW_MEM_SCORING_PROFILE": "Relevance"}).profile == "composite"
    assert parse_env({"OPENCLAW_MEM_QUOTA_EVENT_MAX_RATIO": "nan"}).event_max_ratio == 0.4
    with pytest.raises(InputError, match="/input/env/OPENCLAW_MEM_QUOTA_ENABLED: wrong type"):
        parse_env({"OPENCLAW_MEM_QUOTA_ENABLED": 0})


def test_the_strategy_parameters_come_from_argv_and_settings() -> None:
    o = parse_args(
        ["pack", "--query", "q", "--tail-budget-tokens=-3", "--tail-max-items=-1"], Settings()
    )
    params = strategy_params(o, parse_env({"OPENCLAW_MEM_SCORING_STATE_ENABLED": "0"}))
    assert params["tail_budget_tokens"] == 0 and params["tail_max_items"] == 0
    assert params["state_factor"] == "off" and params["use_factor"] == "on"
    assert (params["profile"], params["quotas"], params["include_archived"]) == (
        "composite",
        "on",
        "off",
    )


# ---------------------------------------------------------------- one row


def test_detail_json_is_read_with_pythons_json() -> None:
    assert math.isnan(r.parse_detail('{"importance": NaN}')["importance"])
    assert r.parse_detail('{"a": Infinity}') == {"a": math.inf}
    for raw in ("[1, 2]", '"text"', "not json", "", None, 7):
        assert r.parse_detail(raw) == {}


def test_candidate_text() -> None:
    receipt = {"schema": " openclaw-mem.artifact.compaction-receipt.v1 ", "compact": {}}
    row = {"summary": "raw\nsummary ", "summary_en": None}
    assert r.item_text(row, {}) == "raw summary"
    assert r.item_text({**row, "summary_en": "en\r\ntext"}, {}) == "en\r text"
    assert r.item_text({**row, "summary_en": "  "}, {}) == ""  # hides the summary
    assert r.item_text({"summary": None, "summary_en": None}, {}) == ""
    compact = {**receipt, "compact": {"text": "3 failed\nFAILED x "}}
    assert r.item_text(row, compact) == "3 failed FAILED x"
    assert r.item_text(row, {**receipt, "compact": {"text": " \n "}}) == "raw summary"
    v0 = {**compact, "schema": "openclaw-mem.artifact.compaction-receipt.v0"}
    assert r.item_text(row, v0) == "raw summary"


def test_trust_tier_takes_the_first_named_tier() -> None:
    assert r.trust_tier({"trust": 5, "trust_tier": " Quarantine "}) == "quarantined"
    assert r.trust_tier({"trust": "unknown", "provenance": {"trustTier": "Trusted"}}) == "trusted"
    assert r.trust_tier({"trust": "untrusted", "provenance": {"trust": "trusted"}}) == "untrusted"
    assert r.trust_tier({"trustTier": "un-trusted"}) == "unknown"
    assert r.trust_tier({"provenance": "trusted"}) == "unknown"


@pytest.mark.parametrize(
    ("importance", "pack_label", "composite"),
    [
        ({"label": "Must Remember"}, "must_remember", "must_remember"),
        ({"label": "unknown", "score": 0.9}, "unknown", "must_remember"),
        ({"label": "nice-to-have"}, "nice_to_have", "nice_to_have"),
        ({"label": "must  remember"}, "unknown", "ignore"),
        ({"score": 0.9}, "must_remember", "must_remember"),
        ({"score": "0.6"}, "unknown", "nice_to_have"),
        ({"score": True}, "unknown", "ignore"),
        ({}, "unknown", "ignore"),
        ({"label": "critical"}, "unknown", "ignore"),
        (0.5, "nice_to_have", "nice_to_have"),
        (50, "must_remember", "nice_to_have"),  # a percentage for the composite scorer
        (2, "must_remember", "ignore"),
        ("must_remember", "unknown", "must_remember"),
        ("\uff28\uff29\uff27\uff28", "unknown", "must_remember"),  # full-width HIGH, NFKC
        ("86%", "unknown", "must_remember"),
        ("43/50", "unknown", "must_remember"),
        ("1/0", "unknown", "ignore"),
        ("garbage", "unknown", "ignore"),
        (True, "unknown", "ignore"),
        ([1], "unknown", "ignore"),
        (math.nan, "ignore", "ignore"),
        (None, "unknown", "unknown"),
    ],
)
def test_the_two_importance_labels(importance: Any, pack_label: str, composite: str) -> None:
    detail = {"importance": importance}
    assert r.pack_importance(detail) == pack_label
    assert r.composite_label(detail) == composite
    assert (
        r.importance_score(detail)
        == {
            "must_remember": 1.0,
            "nice_to_have": 0.5,
            "ignore": 0.0,
            "unknown": None,
        }[composite]
    )
    score = r.importance_score(detail)
    assert score is None or r.label_from_score(score) == composite  # the score gives it back


def test_no_importance_is_unknown_for_both() -> None:
    assert (r.pack_importance({}), r.composite_label({}), r.importance_score({})) == (
        "unknown",
        "unknown",
        None,
    )


@pytest.mark.parametrize(
    ("lifecycle", "state"),
    [
        ({"state": " Stale "}, "stale"),
        ({"state": "soft-archived"}, "soft-archived"),
        ({"state": "archived"}, "active"),  # not a state openclaw-mem knows
        ({"state": "archived", "archived_at": "2026-06-01"}, "soft-archived"),
        ({"state": None, "archived_at": "  "}, "active"),
        ({"state": "deleted"}, "active"),
        ("stale", "active"),
    ],
)
def test_lifecycle_state(lifecycle: Any, state: str) -> None:
    assert r.lifecycle_state({"lifecycle": lifecycle}) == state


@pytest.mark.parametrize(
    ("used", "count"),
    [
        ("7", 7),
        ("3.5", 0),
        (2.9, 2),
        (True, 1),
        (-3, 0),
        (None, 0),
        ([1], 0),
        ("x", 0),
        (math.inf, 0),
        (math.nan, 0),
    ],
)
def test_used_count_follows_pythons_int(used: Any, count: int) -> None:
    assert r.used_count({"lifecycle": {"used_count": used}}) == count


def test_supersedes_names_positive_ids() -> None:
    claims = ["obs:3", "OBS:4", " 5 ", 6, 0, -1, True, "obs:0", "obs:\u0663", 2.0, "x"]
    assert r.superseded_ids({"provenance": {"supersedes": claims}}) == [3, 4, 5, 6]
    assert r.superseded_ids({"provenance": {"supersedes": "obs:9"}}) == [9]
    assert r.superseded_ids({"provenance": {"supersedes": 7}}) == [7]
    assert r.superseded_ids({"provenance": {"supersedes": True}}) == []
    assert r.superseded_ids({"provenance": ["obs:1"], "supersedes": "obs:1"}) == []


# ---------------------------------------------------------------- synthesis cards


def test_card_sources_as_written_and_refs_that_crash_openclaw_mem() -> None:
    detail = {"graph_synthesis": {"source_refs": [" obs:1 ", "obs:1", "2", ""]}}
    assert card_sources(detail, "/x") == ["obs:1", "2"]
    assert card_sources({}, "/x") == []
    with pytest.raises(InputError, match="source ref that is not an id"):
        card_sources({"graph_synthesis": {"source_refs": ["foo"]}}, "/x")
    with pytest.raises(InputError, match="/x: a synthesis card's source_refs"):
        card_sources({"graph_synthesis": {"source_refs": "12"}}, "/x")


def test_scope_token() -> None:
    assert [scope_token(s) for s in ("Proj A", "proj-a", " Foo_Bar ", "", None, 3)] == [
        "proj-a",
        "proj-a",
        "foo-bar",
        "",
        "",
        "",
    ]


ROWS: dict[int, dict[str, Any]] = {
    1: {
        "id": 1,
        "ts": "2026-01-01T00:00:00Z",
        "kind": None,
        "tool_name": "memory_store",
        "summary": "a\nb ",
        "detail_json": '{"scope": "Proj A"}',
    },
    2: {"id": 2, "ts": "", "kind": "fact", "tool_name": None, "summary": None},
}


def test_source_digest_hashes_compact_sorted_json_of_the_sources() -> None:
    snapshots = [
        {
            "kind": "",
            "recordRef": "obs:1",
            "scope": "proj-a",
            "summary": "a b",
            "tool_name": "memory_store",
            "ts": "2026-01-01T00:00:00Z",
        },
        {
            "kind": "fact",
            "recordRef": "obs:2",
            "scope": "",
            "summary": "",
            "tool_name": "",
            "ts": "",
        },
    ]
    text = json.dumps(snapshots, separators=(",", ":"), ensure_ascii=False)
    assert source_digest([ROWS[1], ROWS[2]]) == hashlib.sha256(text.encode()).hexdigest()


def test_a_card_is_fresh_until_its_sources_change_or_it_is_withdrawn() -> None:
    digest = source_digest([ROWS[1], ROWS[2]])

    def fresh(**synthesis: Any) -> bool:
        detail = {"graph_synthesis": {"source_refs": ["obs:1", "2"], **synthesis}}
        return is_fresh(detail, card_sources(detail, "/x"), ROWS)

    assert fresh() and fresh(source_digest=digest) and fresh(status="fresh")
    assert not fresh(source_digest="0" * 64)
    assert not fresh(status=" Rolled_Back ")
    assert not fresh(status="Superseded")
    assert not fresh(superseded_by="obs:9")
    assert not fresh(lifecycle={"supersededBy": "obs:9"})
    assert not is_fresh({}, [], ROWS)  # no sources
    assert not is_fresh({}, ["obs:1", "obs:3"], ROWS)  # a source without a row


# ---------------------------------------------------------------- the tail


def test_tail_lines_are_collected_and_normalised() -> None:
    assert normalise_line("a \n b") == "a   b"
    assert normalise_line("x\r\ny") == "x y"
    assert normalise_line("p\u2028q\x0cr") == "p q r"
    assert normalise_line(" \r\n ") == ""
    content = '["j", 7, true, null, {"k": "v"}, "z\\u2028w"]'
    got = tail_lines(("a \n b", "  ", "x\r\ny"), content, 0)
    assert got == ["a   b", "x y", "j", "7", "True", "{'k': 'v'}", "z w"]
    assert tail_lines((), "l1\r\nl2\n\nl3", -1) == ["l1", "l2", "l3"]
    assert tail_lines((), '{"a": 1}', 4) == ['{"a": 1}']  # JSON but not a list: lines
    assert tail_lines(("a", "b", "c"), None, 2) == ["b", "c"]
