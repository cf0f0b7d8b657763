"""A team's own packer, named in the config (a program) or passed to
``packproof.evaluate`` (a function), runs beside the built-in specs, is judged by
the same rules and is named in every report."""

from __future__ import annotations

import csv
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import packproof
from packproof.cli import main
from packproof.evals.run.config import load_config
from tests.journal import records as journal_records
from tests.paths import ROOT

SUITE = ROOT / "scenarios/compiled/lossless-claw.jsonl"
DOC = ROOT / "docs/external-packers.md"


def doc_example() -> str:
    """The complete example packer of docs/external-packers.md, as printed there."""
    text = DOC.read_text("utf-8")
    block = text.split("<!-- example: newest.py -->", 1)[1]
    match = re.search(r"```python\n(.*?)```", block, re.S)
    assert match is not None
    return match.group(1)


def write_config(tmp: Path, strategies: list[Any], **extra: Any) -> Path:
    config = {
        "schema": "packproof.eval.v1",
        "name": "named",
        "suites": [str(SUITE)],
        "strategies": strategies,
        "budgets": ["scenario", 64],
        "bootstrap": {"resamples": 200},
        **extra,
    }
    path = tmp / "cfg.yaml"
    path.write_text(json.dumps(config))
    return path


def newest(request: dict[str, Any]) -> dict[str, Any]:
    """The doc's Python packer: the newest items that fit."""
    kept: list[str] = []
    used = 0
    for item in reversed(request["items"]):
        if used + item["tokens"] <= request["budget_tokens"]:
            kept.insert(0, item["id"])
            used += item["tokens"]
    return packproof.make_pack(request, kept)


def test_the_documented_example_packer_runs_beside_built_in_specs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "newest.py").write_text(doc_example())
    command = f"cmd:{sys.executable} {tmp_path / 'newest.py'}"
    cfg = write_config(tmp_path, ["chronological", {"name": "newest", "packer": command}, "bm25"])
    out = tmp_path / "r"
    code = main(["eval", "--config", str(cfg), "--out", str(out), "--jobs", "1", "--no-fail"])
    assert code == 0
    run = out / "named" / "latest"
    records = journal_records(run)
    mine = [r for r in records if r["spec"] == "newest"]
    assert mine and all(r["status"] == "ok" for r in mine)  # every answer met the contract
    assert {r["strategy"] for r in mine} == {"newest"}
    assert len(mine) == len(records) // 3
    # the name, not a spec, in every report
    summary = json.loads((run / "summary.json").read_text())
    entry = next(s for s in summary["strategies"] if s["label"] == "newest")
    assert entry["packer"] == command and entry["spec"] == "newest"
    assert summary["manifest"]["packers"]["newest"]["packer"] == command
    md = (run / "summary.md").read_text()
    assert "| `newest` |" in md and command in md
    assert "newest" in (run / "report.html").read_text()
    with (run / "metrics.csv").open(newline="") as f:
        assert {r["spec"] for r in csv.DictReader(f)} == {
            "chronological",
            "newest",
            "bm25(b=0.75,k1=1.2,stem=none,stopwords=none)",
        }
    names = [c.get("name", "") for c in ET.parse(run / "junit.xml").iter("testcase")]
    assert any(n.endswith("[newest]") for n in names)
    # a fill of the newest items is chronological's: the same packs when it fits
    by = {(r["scenario"], str(r["budget"]), r["spec"]): r["selected"] for r in records}
    same = sum(
        by[(s, b, "newest")] == by[(s, b, "chronological")]
        for (s, b, spec) in by
        if spec == "newest"
    )
    assert same > 0


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ({"name": "bm25", "packer": "cmd:x"}, "/strategies/1: a built-in strategy's name"),
        ({"name": "a b", "packer": "cmd:x"}, "/strategies/1: not a packer name"),
        ({"name": "mine\n", "packer": "cmd:x"}, "/strategies/1: not a packer name"),
        ({"name": " mine", "packer": "cmd:x"}, "/strategies/1: not a packer name"),
        ({"name": "mi\x07ne", "packer": "cmd:x"}, "/strategies/1: not a packer name"),
        ({"name": "mine", "packer": "cmd:x", "timeout": 0}, "/strategies/1/timeout: schema"),
        ({"name": "mine", "packer": "python x"}, "/strategies/1: packer: malformed packer"),
        ({"name": "mine", "packer": "cmd:x", "strategy": "nope"}, "/strategies/1: strategy"),
        ({"name": "mine", "command": "cmd:x"}, "/strategies/1"),
        ({"name": "chronological2", "packer": "cmd:x"}, None),
    ],
)
def test_a_bad_entry_is_one_line(tmp_path: Path, entry: dict[str, Any], needle: str | None) -> None:
    cfg = write_config(tmp_path, ["chronological", entry])
    if needle is None:
        assert load_config(cfg).labels["chronological2"] == "chronological2"
        return
    with pytest.raises(packproof.InputError) as err:
        load_config(cfg)
    assert needle in str(err.value) and "line" in str(err.value)


# A packer that answers packproof's own pack, broken one way (argv[1]).
BROKEN = """\
import json, sys
from packproof import pack
for line in sys.stdin:
    request = json.loads(line)
    rid = request.pop("request_id")
    answer = pack(request).to_dict()
    if sys.argv[1] == "twice":
        answer["items"].append(answer["items"][0])
    elif sys.argv[1] == "trace-stranger":
        answer["trace"]["candidates"][0]["id"] = "zz"
    elif sys.argv[1] == "trace-reason":
        answer["trace"]["candidates"][0]["decision"]["reason"].insert(0, "trust_allowed")
    print(json.dumps({**answer, "request_id": rid}), flush=True)
"""


@pytest.mark.parametrize(
    ("how", "error"),
    [
        ("twice", "the answer packs ids more than once: ['"),
        ("trace-stranger", "the answer has a trace naming ids the request does not have: ['zz']"),
        ("trace-reason", "the answer has a trace opening "),
    ],
)
def test_a_pack_the_pytest_plugin_refuses_fails_every_cell_as_a_schema_error(
    tmp_path: Path, how: str, error: str
) -> None:
    (tmp_path / "broken.py").write_text(BROKEN)
    command = f"cmd:{sys.executable} {tmp_path / 'broken.py'} {how}"
    cfg = write_config(tmp_path, ["chronological", {"name": "mine", "packer": command}])
    out = tmp_path / "r"
    assert main(["eval", "--config", str(cfg), "--out", str(out), "--jobs", "1", "-q"]) == 1
    run = out / "named" / "latest"  # the run finished: a broken answer fails its cell only
    records = journal_records(run)
    mine = [r for r in records if r["spec"] == "mine"]
    assert len(mine) == len(records) // 2
    assert {r["status"] for r in mine} == {"SCHEMA_ERROR"}
    assert all(r["error"].startswith(error) for r in mine), mine[0]["error"]


def test_a_named_packer_is_named_in_baseline_and_compare(tmp_path: Path) -> None:
    entry = {"name": "mine", "packer": "cmd:true"}
    cfg = write_config(
        tmp_path, ["bm25", entry], baseline_strategy="mine", compare=[["mine", "bm25"]]
    )
    config = load_config(cfg)
    assert config.baseline == "mine" and config.compare[0][0] == "mine"
    assert config.strategy("mine").name == "chronological"  # what its requests carry
    twice = write_config(tmp_path, ["bm25", entry, {**entry, "packer": "cmd:false"}])
    with pytest.raises(packproof.InputError, match="duplicate strategy spec mine"):
        load_config(twice)


def test_evaluate_a_function_returns_the_run_and_its_cells(tmp_path: Path) -> None:
    cfg = {
        "name": "api",
        "suites": [str(SUITE)],
        "strategies": ["chronological", "bm25"],
        "budgets": ["scenario", 64],
        "bootstrap": {"resamples": 200},
    }
    run = packproof.evaluate(newest, cfg, out=tmp_path)
    assert run.dir.parent == tmp_path / "api"
    cells = run.cells()
    assert list(cells["label"].cat.categories) == ["chronological", "bm25", "newest"]
    mine = cells[cells["label"] == "newest"]
    assert len(mine) == len(cells) // 3 and (mine["status"] == "ok").all()
    # judged by the same rules: its hard invariants and expectations are counted
    assert run.passed == (run.failures["cells"] == 0)
    assert run.summary["strategies"][2]["packer"].startswith("python:")
    alone = packproof.evaluate(newest, cfg, out=tmp_path / "alone", builtins=False, name="mine")
    assert [s["label"] for s in alone.summary["strategies"]] == ["mine"]


def test_a_function_that_raises_fails_its_cells_not_the_run(tmp_path: Path) -> None:
    def broken(request: dict[str, Any]) -> dict[str, Any]:
        if len(request["items"]) > 3:
            raise ValueError("too many items")
        return newest(request)

    def not_a_pack(request: dict[str, Any]) -> Any:
        return [item["id"] for item in request["items"]]

    cfg = {"name": "bad", "suites": [str(SUITE)], "strategies": ["chronological"]}
    run = packproof.evaluate(broken, cfg, out=tmp_path)
    cells = run.cells()
    crashed = cells[cells["status"] == "CRASH"]
    assert len(crashed) > 0 and not run.passed
    assert run.failures["classes"]["CRASH"] == len(crashed)
    assert any("ValueError: too many items" in r.get("error", "") for r in journal_records(run.dir))
    wrong = packproof.evaluate(not_a_pack, cfg, out=tmp_path / "w")
    assert wrong.failures["classes"] == {"PARSE_ERROR": wrong.failures["cells"]}


def test_evaluate_refuses_a_name_the_config_already_has(tmp_path: Path) -> None:
    def chronological2(request: dict[str, Any]) -> dict[str, Any]:
        return newest(request)

    mine = {"name": "mine", "packer": "cmd:true"}
    cfg = {"suites": [str(SUITE)], "strategies": ["chronological", "bm25", mine]}
    with pytest.raises(packproof.InputError, match="already a strategy of the config"):
        packproof.evaluate(newest, cfg, out=tmp_path, name="mine")
    with pytest.raises(packproof.InputError, match="a built-in strategy's name"):
        packproof.evaluate(newest, cfg, out=tmp_path, name="hybrid")
    with pytest.raises(packproof.InputError, match="/strategies"):
        packproof.evaluate(chronological2, {**cfg, "strategies": "bm25"}, out=tmp_path)
    assert not (tmp_path / "eval").exists()


def test_make_pack_renders_the_ids_in_order_and_refuses_unknown_ones() -> None:
    request = {"items": [{"id": f"m{i}", "text": f"t{i}"} for i in range(4)], "budget_tokens": 9}
    pack = packproof.make_pack(request, ["m3", "m1"])
    assert [it["recordRef"] for it in pack["items"]] == ["m3", "m1"]
    assert pack["bundle_text"] == "- [m3] t3\n- [m1] t1"
    same = packproof.pack(request)  # packproof's own pack of every id renders the same items
    assert (
        packproof.make_pack(request, same.selected_ids)["items"]
        == json.loads(same.to_json())["items"]
    )
    with pytest.raises(packproof.InputError, match="/ids/1: not an id of the request"):
        packproof.make_pack(request, ["m0", "zz"])
    with pytest.raises(packproof.InputError, match="packed twice"):
        packproof.make_pack(request, ["m0", "m0"])
