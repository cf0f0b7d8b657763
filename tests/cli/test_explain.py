"""The explanation table: ``packproof pack --explain`` and ``packproof explain SCENARIO``.

Every row is checked against the JSON trace of the same request (rank, score,
decision, reasons, kept ids), so the table cannot drift from the pack."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from packproof.cli import main
from packproof.evals.scenarios.compile import load_sources
from packproof.evals.scenarios.format import pack_turn
from packproof.packer import PackResult, pack
from packproof.packer.explain import DECISION_WORDS, explain_rows, explain_table, visible
from tests.paths import ROOT

REQUEST = {
    "items": [
        {"id": "m1", "role": "user", "text": "Users get logged out after five minutes."},
        {"id": "m2", "role": "assistant", "text": "JWT_EXPIRY_SECONDS is 300 in auth/config.py."},
        {"id": "m3", "role": "user", "text": "Fix the card\nCSS first.", "anchored": True},
        {"id": "m4", "role": "assistant", "text": "Changed height to min-height on .card."},
        {"id": "数据", "role": "user", "text": "数据库 migration\t\x1b[31m done"},
        {"id": "m5", "role": "user", "text": "Where was the expiry setting again?"},
    ],
    "prompt": "Where was the expiry setting again?",
    "budget_tokens": 40,
    "fresh_tail": {"count": 1},
}
SPECS = ["chronological", "bm25", "bm25lite", "hybrid", "clarity", "bm25+cache(recall_share=0.3)"]


def expected_rows(result: PackResult) -> list[dict[str, Any]]:
    """The JSON trace's candidates in the table's order: by rank, then unranked
    ones in ordinal order."""
    candidates = result.to_dict()["trace"]["candidates"]
    return sorted(candidates, key=lambda c: (c["rank"] is None, c["rank"] or 0, c["ordinal"]))


def packed(spec: str) -> PackResult:
    name, _, cache = spec.partition("+")
    request: dict[str, Any] = {**REQUEST, "strategy": name}
    if cache:
        request["cache_aware"] = {"recall_share": 0.3}
    return pack(request)


@pytest.mark.parametrize("spec", SPECS)
def test_rows_are_the_json_trace_by_rank(spec: str) -> None:
    result = packed(spec)
    header, rows, kept = explain_rows(result)
    cells = [dict(zip(header, row, strict=True)) for row in rows]
    want = expected_rows(result)
    assert [c["id"] for c in cells] == [c["id"] for c in want]
    for cell, cand in zip(cells, want, strict=True):
        assert cell["rank"] == (str(cand["rank"]) if cand["rank"] else "-")
        assert cell["score"] == ("-" if cand["score"] is None else f"{cand['score']:.4g}")
        for name, value in cand["components"].items():
            assert cell[name] == f"{value:.4g}"
        assert cell["tokens"] == str(cand["tokens"])
        reasons = cand["decision"]["reason"]
        verdict = "kept" if cand["decision"]["included"] else "dropped"
        assert cell["decision"] == f"{verdict} ({DECISION_WORDS[reasons[0]]})"
        assert cell["reasons"] == ",".join(reasons)
    assert {c["id"] for c, k in zip(cells, kept, strict=True) if k} == set(result.selected_ids)


def test_pack_explain_prints_the_header_and_an_aligned_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "req.json"
    path.write_text(json.dumps(REQUEST), "utf-8")
    assert main(["pack", str(path), "--strategy", "hybrid", "--explain"]) == 0
    out = capsys.readouterr().out
    result = packed("hybrid")
    assert out == explain_table(result)
    lines = out.splitlines()
    assert lines[0].startswith("strategy hybrid   budget 40 tokens")
    assert f"used {result.used_tokens} " in lines[0] and f"mode {result.mode}" in lines[0]
    assert lines[1] == f"prompt: {REQUEST['prompt']}"
    table = lines[lines.index("") + 1 :]
    assert table[0].split() == [
        "rank",
        "score",
        *sorted(result.ranking.components),
        "tokens",
        "decision",
        "reasons",
        "id",
        "text",
    ]
    # the decision column starts at the same place in every row (ids are
    # after it, so even a wide id keeps it aligned)
    starts = {line.index("kept" if "kept" in line else "dropped") for line in table[1:]}
    assert starts == {table[0].index("decision")}
    assert len(table) == 1 + len(REQUEST["items"])
    # a text is one line: no tab, newline or escape sequence reaches the terminal
    assert "Fix the card CSS first." in out and "\x1b" not in out and "\t" not in out


def test_limit_shows_the_top_n_and_every_kept_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = packed("bm25")
    _, rows, kept = explain_rows(result)
    table = explain_table(result, limit=1).splitlines()
    shown = table[table.index("") + 2 :]
    assert shown[-1].startswith("... and ")
    expected = [r for k, r in enumerate(rows) if k < 1 or kept[k]]
    assert len(shown) - 1 == len(expected)
    assert f"and {len(rows) - len(expected)} more dropped" in shown[-1]
    path = tmp_path / "req.json"
    path.write_text(json.dumps(REQUEST), "utf-8")
    assert main(["pack", str(path), "--limit", "2"]) == 2  # a table option without a table
    assert capsys.readouterr().err.count("\n") == 1


GOLDEN = "hybrid-rescues-important-referenced-item"


def golden_turn(scenario_id: str) -> Any:
    loaded = load_sources(ROOT.joinpath("scenarios").glob("*.yaml"))
    return next(sc for scs in loaded.values() for sc in scs if sc.id == scenario_id)


def test_explain_a_golden_scenario(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)  # the default scenarios/*.yaml
    assert main(["explain", GOLDEN, "--strategy", "hybrid"]) == 0
    out = capsys.readouterr().out
    scenario = golden_turn(GOLDEN)
    turn = scenario.turns[0]
    result = pack_turn(turn, "hybrid")
    assert out.splitlines()[0].startswith(f"scenario {GOLDEN} (")
    assert f"why: {scenario.why}" in out
    assert "expectations for hybrid and *: met" in out
    assert explain_table(result, relevant=set(turn.relevant)) in out
    header, rows, _ = explain_rows(result, set(turn.relevant))
    starred = [row[header.index("id")] for row in rows if row[0] == "★"]
    assert starred == [c["id"] for c in expected_rows(result) if c["id"] in turn.relevant]
    assert [row[header.index("id")] for row in rows] == [c["id"] for c in expected_rows(result)]


def test_explain_reads_a_compiled_suite_and_shows_failed_expectations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compiled = ROOT / "scenarios" / "compiled" / "hybrid-signals.jsonl"
    assert main(["explain", GOLDEN, "--strategy", "hybrid", "--scenarios", str(compiled)]) == 0
    assert "expectations for hybrid and *: met" in capsys.readouterr().out
    source = tmp_path / "mine.yaml"
    source.write_text(
        "schema: packproof.scenarios.v1\n"
        "scenarios:\n"
        "  - id: wrong-on-purpose\n"
        "    why: An expectation that bm25 cannot meet, to see it reported.\n"
        "    tags: [test]\n"
        "    request:\n"
        "      budget_tokens: 10\n"
        "      prompt: redis\n"
        "      items:\n"
        "        - [a, user, 10, redis cache]\n"
        "        - [b, user, 10, lunch]\n"
        "    relevant: [a]\n"
        "    expect:\n"
        "      bm25: {selected: [b]}\n",
        "utf-8",
    )
    args = ["explain", "wrong-on-purpose", "--scenarios", str(source), "--strategy"]
    assert main([*args, "bm25"]) == 0
    out = capsys.readouterr().out
    assert "expectations for bm25 and *: NOT MET" in out
    assert "  - selected ['a'], expected ['b']" in out
    assert main([*args, "bm25(k1=2)"]) == 0  # named expectations hold for the defaults only
    assert "expectations: none for bm25(k1=2) and *" in capsys.readouterr().out
    assert main([*args, "bm25", "--budget", "20"]) == 0
    assert "expectations: not judged" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["hybrid-rescues-important", "--strategy", "hybrid"], f"closest: {GOLDEN}"),
        (["no-such-thing-at-all", "--strategy", "hybrid"], "none close among"),
        ([GOLDEN, "--strategy", "hybrid", "--budget", "0"], "--budget"),
        ([GOLDEN, "--strategy", "hybrid", "--budget", "many"], "--budget"),
        ([GOLDEN, "--strategy", "hybrid", "--turn", "3"], "has 1 turn"),
        ([GOLDEN, "--strategy", "nope"], "unknown strategy"),
        ([GOLDEN], "--strategy"),
        ([GOLDEN, "--strategy", "bm25", "--scenarios", "missing.yaml"], "cannot read"),
    ],
)
def test_bad_input_is_one_line_exit_2(
    args: list[str],
    needle: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["explain", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and needle in captured.err, captured.err


# A terminal acts on these: clear the screen, a hidden OSC 8 link, a carriage
# return that overwrites the line, DEL, a C1 CSI.
CONTROLS = "\x1b[2J\x1b]8;;http://evil.example\x07click\x1b]8;;\x07\rDEL\x7fC1\x9b31m"
SHOWN = "\\x1b[2J\\x1b]8;;http://evil.example\\x07click\\x1b]8;;\\x07\\rDEL\\x7fC1\\x9b31m"


def assert_no_controls(out: str) -> None:
    """Nothing a terminal acts on but the line ends and tabs of the table."""
    assert not [c for c in out if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (CONTROLS, SHOWN),
        ("tab\tkept", "tab\tkept"),
        ("line\nend", "line\\nend"),
        ("back\\slash \\x1b", "back\\slash \\x1b"),  # already visible: unchanged
        ("数据 ünïcode", "数据 ünïcode"),
    ],
)
def test_visible_shows_every_control_character_but_tab_as_an_escape(raw: str, shown: str) -> None:
    assert visible(raw) == shown
    assert visible(visible(raw)) == visible(raw)


def test_explain_shows_a_scenarios_control_characters_as_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "evil.yaml"
    scenario = {
        "id": "controls",
        "why": f"A why that tries to drive the terminal: {CONTROLS}",
        "request": {
            "budget_tokens": 20,
            "prompt": f"deploy {CONTROLS}",
            "items": [[f"id{CONTROLS}", "user", 5, f"deploy {CONTROLS}"], ["q", "user", 2, "x"]],
        },
        "relevant": [f"id{CONTROLS}"],
        "expect": {"*": {"selected": [f"id{CONTROLS}"]}},  # wrong: its failure names the id
    }
    source.write_text(json.dumps({"schema": "packproof.scenarios.v1", "scenarios": [scenario]}))
    assert main(["explain", "controls", "--scenarios", str(source), "--strategy", "bm25"]) == 0
    out = capsys.readouterr().out
    assert_no_controls(out)
    assert f"why: A why that tries to drive the terminal: {SHOWN}" in out
    assert f"gold relevant (★): id{SHOWN}" in out
    assert "NOT MET" in out and f"id{SHOWN}" in out.split("NOT MET", 1)[1]


def test_pack_explain_shows_ids_prompts_and_labels_control_characters_as_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    request = {
        "items": [{"id": f"m{CONTROLS}", "role": "user", "text": f"deploy {CONTROLS}"}],
        "prompt": f"deploy {CONTROLS}",
        "budget_tokens": 40,
    }
    path = tmp_path / "req.json"
    path.write_text(json.dumps(request), "utf-8")
    assert main(["pack", str(path), "--strategy", "bm25", "--explain"]) == 0
    out = capsys.readouterr().out
    assert_no_controls(out)
    assert out.splitlines()[1].startswith("prompt: deploy \\x1b[2J")
    assert "m\\x1b[2J" in out  # the id's cell, cut to the column's width
