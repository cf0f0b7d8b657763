"""The openclaw-mem importer: a case's request (from its ``input`` alone), a case
file or openclaw-mem's golden fixture lane as scenarios, and ``packproof import
openclaw-mem``. The golden file is read from ../shared when it is there."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from packproof.cli import main
from packproof.evals.scenarios.compile import load_sources
from packproof.evals.scenarios.format import (
    expectation_failures,
    load_compiled,
    pack_turn,
)
from packproof.evals.scenarios.importers.openclaw_mem import (
    case_request,
    import_openclaw_mem,
    suite,
)
from packproof.packer import InputError, pack
from packproof.packer.strategies import parse_spec
from tests.paths import ROOT

GOLDENS = (
    ROOT.parent
    / "shared"
    / "data"
    / "openclaw-mem"
    / "goldens"
    / "CONTEXT_PACK_GOLDEN_SCENARIOS.v0.jsonl"
)

# ---------------------------------------------------------------- a case's request

CASE: dict[str, Any] = {
    "id": "hand-1",
    "input": {
        "args": [
            "pack",
            "--query",
            "deploy plan",
            "--limit",
            "3",
            "--budget-tokens",
            "50",
            "--tail-text",
            "recent turn",
            "--tail-file=-",
            "--tail-budget-tokens",
            "10",
            "--pack-trust-policy",
            "exclude_quarantined_fail_open",
            "--trace",
        ],
        "env": {"OPENCLAW_MEM_SCORING_PROFILE": "relevance", "OPENCLAW_MEM_QUOTA_ENABLED": "0"},
        "now": "2026-07-19T12:00:00+00:00",
        "stdin": '["from stdin"]',
        "observations": [
            {
                "id": 7,
                "ts": "2026-07-01T00:00:00Z",
                "kind": "decision",
                "tool_name": "memory_store",
                "summary": "deploy\nplan",
                "summary_en": None,
                "lang": "en",
                "detail_json": '{"importance": 0.9, "trust": "trusted", '
                '"lifecycle": {"used_count": "3"}, "provenance": {"supersedes": "obs:5"}}',
            },
            {
                "id": 5,
                "ts": "2026-06-01",
                "kind": None,
                "tool_name": None,
                "summary": "  ",
                "summary_en": None,
                "lang": None,
                "detail_json": None,
            },
            {
                "id": 9,
                "ts": "2026-07-02T00:00:00Z",
                "kind": "note",
                "tool_name": "graph.synth-compile",
                "summary": "card",
                "summary_en": None,
                "lang": None,
                "detail_json": '{"graph_synthesis": {"source_refs": ["obs:7", "obs:5"]}}',
            },
        ],
        "retrieval": {"fts": [7, 5, 12], "vector": [5], "vector_en": []},
    },
    # what openclaw-mem selects (by hand: obs:5 is superseded by obs:7, obs:12 has no
    # row, the card covers one candidate only; the tail reserves 10 tokens and 2 slots)
    "expected": {"selected_record_refs": ["obs:7", "tail:1", "tail:2"]},
    "diagnostics": {"tail_texts": ["recent turn", "from stdin"]},
}


def test_a_case_becomes_a_request_for_the_openclaw_mem_strategy() -> None:
    req = case_request(CASE)
    assert (req["prompt"], req["budget_tokens"], req["max_items"]) == ("deploy plan", 50, 3)
    assert (req["token_counter"], req["trust_policy"]) == ("chars4", "exclude_quarantined")
    assert (req["ts"], req["fresh_tail"]) == ("2026-07-19T12:00:00+00:00", {"count": 2})
    assert req["retrieval"] == {
        "fts": ["obs:7", "obs:5", "obs:12"],
        "vector": ["obs:5"],
        "vector_en": [],
    }
    assert req["strategy"]["name"] == "openclaw-mem"
    params = req["strategy"]["params"]
    assert (params["profile"], params["quotas"], params["tail_budget_tokens"]) == (
        "relevance",
        "off",
        10,
    )
    items = {it["id"]: it for it in req["items"]}
    assert items["obs:7"] == {
        "id": "obs:7",
        "text": "deploy plan",
        "ordinal": 7,
        "kind": "memory",
        "trust": "trusted",
        "importance": "must_remember",
        "importance_score": 1.0,
        "lifecycle": "active",
        "used_count": 3,
        "ts": "2026-07-01T00:00:00Z",
        "record_kind": "decision",
        "supersedes": ["obs:5"],
    }
    assert items["obs:5"]["tokens"] == 0 and items["obs:5"]["text"] == ""
    assert "record_kind" not in items["obs:5"] and "importance_score" not in items["obs:5"]
    assert items["obs:9"]["synthesis"] == {"sources": ["obs:7", "obs:5"], "fresh": True}
    tail = [(it["id"], it["ordinal"], it["text"], it["kind"]) for it in req["items"][3:]]
    assert tail == [
        ("tail:1", 10, "recent turn", "message"),
        ("tail:2", 11, "from stdin", "message"),
    ]
    pack(req)  # a request packproof takes


class _Sealed(dict[str, Any]):
    """A case whose recorded outputs cannot be read: reading one fails the test."""

    def __getitem__(self, key: str) -> Any:
        assert key not in ("expected", "diagnostics"), f"the importer read {key}"
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        assert key not in ("expected", "diagnostics"), f"the importer read {key}"
        return super().get(key, default)


def test_the_request_is_made_from_the_input_alone() -> None:
    bare = {k: v for k, v in copy.deepcopy(CASE).items() if k not in ("expected", "diagnostics")}
    assert case_request(bare) == case_request(CASE)
    assert case_request(_Sealed(copy.deepcopy(CASE))) == case_request(CASE)


def _with(**changes: Any) -> dict[str, Any]:
    case = copy.deepcopy(CASE)
    case["input"].update(changes)
    return case


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ({"id": "x"}, "missing required field 'input'"),
        (_with(now=5), "/input/now: wrong type"),
        (_with(observations={}), "/input/observations: wrong type"),
        (_with(observations=[{"id": "7"}]), "/input/observations/0/id: wrong type"),
        (_with(observations=[{"id": 1}, {"id": 1}]), "/input/observations/1/id: row id 1"),
        (_with(observations=[{"id": 1, "summary": 3}]), "/input/observations/0/summary"),
        (_with(retrieval={"fts": [1, 1]}), "/input/retrieval/fts: an id is listed twice"),
        (_with(retrieval={"fts": ["1"]}), "/input/retrieval/fts: wrong type"),
        (_with(stdin=None), "/input/stdin: wrong type"),
        (_with(args=["pack", "--query", "q", "--tail-file", "t.txt"]), "--tail-file names a file"),
    ],
)
def test_a_case_packproof_cannot_read_is_bad_input(case: dict[str, Any], says: str) -> None:
    with pytest.raises(InputError, match=says):
        case_request(case)


def test_a_case_without_a_clock_gets_the_default_ts() -> None:
    case = copy.deepcopy(CASE)
    del case["input"]["now"]
    assert "ts" not in case_request(case)


# ---------------------------------------------------------------- files as scenarios


def _file(tmp: Path, rows: list[Any], name: str = "cases.jsonl") -> Path:
    path = tmp / name
    text = "\n".join(json.dumps(r) for r in rows) + "\n"
    path.write_bytes(
        gzip.compress(text.encode(), mtime=0) if name.endswith(".gz") else text.encode()
    )
    return path


def _met(path: Path) -> list[str]:
    """Every unmet expectation of a compiled file, each packed with its key's spec."""
    failures = []
    for sc in load_compiled(path):
        for turn in sc.turns:
            for key in turn.expect:
                name, params = parse_spec(key)
                result = pack_turn(turn, {"name": name, "params": params})
                failures += [f"{sc.id}: {f}" for f in expectation_failures(turn, key, result)]
    return failures


def test_a_case_file_becomes_one_scenario_per_case(tmp_path: Path) -> None:
    other = copy.deepcopy(CASE)
    other["id"] = "Hand 2"
    other["input"]["env"] = {}
    other["input"]["args"] = ["pack", "--query", "deploy", "--limit", "1"]
    other["expected"] = {"selected_record_refs": ["obs:7"]}
    scenarios, report = import_openclaw_mem(_file(tmp_path, [CASE, other], "c.jsonl.gz"))
    assert [sc.id for sc in scenarios] == ["hand-1", "hand-2"]
    assert report == {"file": "c.jsonl.gz", "rows": 2, "cases": 2, "judged": 2} | {
        "not_judged": 0,
        "notes": {},
    }
    first, second = (sc.turns[0] for sc in scenarios)
    key = "openclaw-mem(profile=relevance,quotas=off,tail_budget_tokens=10)"
    assert first.expect == {
        key: {"order": ["obs:7", "tail:1", "tail:2"], "selected": ["obs:7", "tail:1", "tail:2"]}
    }
    assert list(second.expect) == ["openclaw-mem"]  # the defaults: the strategy's name
    assert "strategy" not in first.request and first.request["retrieval"]["fts"][0] == "obs:7"
    assert scenarios[0].tags == ("openclaw-mem", "case")


def test_a_case_without_a_recorded_selection_is_a_scenario_without_expectations(
    tmp_path: Path,
) -> None:
    bare = {k: v for k, v in CASE.items() if k != "expected"}
    (sc,), report = import_openclaw_mem(_file(tmp_path, [bare]))
    assert sc.turns[0].expect == {} and report["judged"] == 0
    assert sc.why.startswith("openclaw-mem case hand-1, with no recorded selection to expect")


def test_imported_expectations_are_met_by_the_openclaw_mem_strategy(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert main(["import", "openclaw-mem", str(_file(tmp_path, [CASE])), "-o", str(out)]) == 0
    assert _met(out) == []


def test_a_yaml_output_is_a_valid_scenario_file_of_the_same_scenarios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _file(tmp_path, [CASE])
    assert main(["import", "openclaw-mem", str(source), "--out", str(tmp_path / "s.yaml")]) == 0
    assert main(["import", "openclaw-mem", str(source), "-o", str(tmp_path / "s.jsonl")]) == 0
    (from_yaml,) = load_sources([tmp_path / "s.yaml"])[tmp_path / "s.yaml"]
    (compiled,) = load_compiled(tmp_path / "s.jsonl")
    assert from_yaml.sha256 == compiled.sha256
    out = capsys.readouterr().out
    assert "wrote 1 scenarios (1 with expectations)" in out and "judged=1" in out


def test_a_yaml_past_the_scenario_file_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(suite, "MAX_BYTES", 1000)
    with pytest.raises(InputError, match="write the compiled mirror instead"):
        suite.scenarios_yaml(import_openclaw_mem(_file(tmp_path, [CASE]))[0])


@pytest.mark.parametrize(
    ("rows", "says"),
    [
        ([[1]], "c.jsonl: line 1: /: neither an openclaw-mem case nor a golden row"),
        (
            [CASE, {**CASE, "input": {**CASE["input"], "args": ["pack", "--query", " "]}}],
            "c.jsonl: line 2: /input/args: empty query",
        ),
        ([CASE, CASE], "c.jsonl: line 2: case 'hand-1' is already the scenario of line 1"),
        (
            [{**CASE, "expected": {"selected_record_refs": ["obs:99"]}}],
            "line 1: /expected/selected_record_refs: not refs of the case",
        ),
        ([{**CASE, "id": 7}], "line 1: /id: a case needs its id"),
    ],
)
def test_a_bad_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rows: list[Any], says: str
) -> None:
    out = tmp_path / "out.jsonl"
    assert (
        main(["import", "openclaw-mem", str(_file(tmp_path, rows, "c.jsonl")), "-o", str(out)]) == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err
    assert not out.exists()


def test_an_empty_or_unreadable_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no case or golden row"):
        import_openclaw_mem(_file(tmp_path, []))
    (tmp_path / "bad.gz").write_bytes(b"not gzip")
    with pytest.raises(InputError, match="cannot read file"):
        import_openclaw_mem(tmp_path / "bad.gz")
    (tmp_path / "x.jsonl").write_text('{"input": \n')
    with pytest.raises(InputError, match=r"x\.jsonl: line 1: invalid JSON"):
        import_openclaw_mem(tmp_path / "x.jsonl")


# ---------------------------------------------------------------- the golden fixture lane

GOLDEN: dict[str, Any] = {
    "version": "v0",
    "id": "tail-slot",
    "why": "reserve a tail slot",
    "args": [
        *("pack", "--query", "q", "--json", "--trace", "--limit", "2", "--budget-tokens", "120"),
        *("--tail-budget-tokens", "20", "--tail-text", "recent turn"),
    ],
    "pack_state": {
        "ordered_ids": [1, 2],
        "fts_ids": [1, 2],
        "vec_ids": [],
        "vec_en_ids": [],
        "rrf_scores": {"1": 0.9, "2": 0.8},
        "obs_map": {
            "1": {"summary": "first memory", "kind": "fact", "tool_name": "memory_store"},
            "2": {"summary": "second memory", "kind": "fact", "tool_name": "memory_store"},
        },
        "candidate_limit": 12,
    },
    "expect": {
        "selected_record_refs": ["obs:1", "tail:1"],
        "policy": {"tail_reserved_slots": 1},
        "graph": {"triggered": False},
    },
}


def test_a_golden_row_judges_its_selection_and_lists_the_rest(tmp_path: Path) -> None:
    (sc,), report = import_openclaw_mem(_file(tmp_path, [GOLDEN]))
    assert report["goldens"] == 1 and report["judged"] == 1 and report["not_judged"] == 2
    assert report["notes"]["tail-slot"][1] == (
        "graph.triggered",
        "a graph-lane receipt (not modelled)",
    )
    assert sc.tags == (
        "openclaw-mem",
        "golden",
        "not-judged:graph.triggered",
        "not-judged:policy.tail_reserved_slots",
    )
    assert sc.why.endswith("Not judged: 2 of its assertions and inputs (see its tags).")
    (key,) = sc.turns[0].expect
    assert key == "openclaw-mem(profile=relevance,tail_budget_tokens=20)"
    assert sc.turns[0].expect[key]["order"] == ["obs:1", "tail:1"]


def test_a_golden_whose_mocked_scores_disagree_with_its_ranks_is_not_judged(
    tmp_path: Path,
) -> None:
    row = copy.deepcopy(GOLDEN)
    row["pack_state"]["rrf_scores"] = {"1": 0.5, "2": 0.8}
    (sc,), report = import_openclaw_mem(_file(tmp_path, [row]))
    assert sc.turns[0].expect == {} and report["judged"] == 0
    assert "not-judged:selected_record_refs" in sc.tags


@pytest.mark.skipif(not GOLDENS.exists(), reason=f"openclaw-mem's goldens are not at {GOLDENS}")
def test_openclaw_mems_own_goldens(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "g.jsonl"
    assert main(["import", "openclaw-mem", str(GOLDENS), "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert "rows=10 goldens=10 judged=2 not_judged=88" in captured.out
    said = captured.err.splitlines()
    assert len(said) == 10 and all(": not judged: " in line for line in said)
    assert "a graph-lane receipt (not modelled): graph.triggered" in said[2]
    assert _met(out) == []  # both selections it asserts, under openclaw-mem
    judged = [sc.id for sc in load_compiled(out) if sc.turns[0].expect]
    assert judged == ["pack-golden-synthesis-preferred", "pack-golden-protected-tail-slot"]
