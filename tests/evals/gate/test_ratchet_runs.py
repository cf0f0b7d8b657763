"""The ratchet end to end, through ``packproof eval`` and ``packproof gate``:
docs/external-packers.md's example packer loses anchored items, so its baseline
already fails; the shipped ``no_new`` gates pass it run after run where the
absolute ``0`` fails it, and fail a packer that also loses the fresh tail."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from packproof.cli import main
from tests.evals.run.test_named_packers import doc_example
from tests.paths import ROOT

SUITE = ROOT / "scenarios/compiled/fresh-tail-anchors.jsonl"
# the scenarios of SUITE whose anchored item or fresh tail the example packer loses
BASELINE_FAILS = {
    "fresh-tail-anchors/tail-anchored-consumes-budget-first",
    "fresh-tail-anchors/tail-anchored-kept-over-budget",
    "fresh-tail-anchors/tail-budget-smaller-than-tail",
}


def eval_run(tmp: Path, program: str, capsys: pytest.CaptureFixture[str]) -> Path:
    """``packproof eval`` of SUITE with ``program`` as the packer labelled
    ``newest``; the run's summary.json."""
    (tmp / "packer.py").write_text(program, "utf-8")
    config = {
        "schema": "packproof.eval.v1",
        "name": "ratchet",
        "suites": [str(SUITE)],
        "strategies": [{"name": "newest", "packer": f"cmd:{sys.executable} {tmp / 'packer.py'}"}],
        "budgets": ["scenario"],
        "bootstrap": {"resamples": 100},
    }
    (tmp / "cfg.yaml").write_text(json.dumps(config), "utf-8")
    args = ["--config", str(tmp / "cfg.yaml"), "--out", str(tmp / "reports"), "--jobs", "1"]
    assert main(["eval", *args, "--no-fail", "--quiet"]) == 0
    capsys.readouterr()
    return tmp / "reports/ratchet/latest/summary.json"


def where(line: str) -> str:
    """The scenario and turns a failing-cell line names: ``suite/id turn 0``."""
    found = re.search(r" in (\S+ turns? [\d, ]+)", line)
    assert found is not None, line
    return found[1].rstrip(", ")


def gate(
    capsys: pytest.CaptureFixture[str], baseline: Path, current: Path, *extra: str
) -> tuple[int, list[str]]:
    code = main(["gate", "--baseline", str(baseline), "--current", str(current), *extra])
    out, err = capsys.readouterr()
    assert err == ""
    return code, out.splitlines()


def test_the_ratchet_passes_a_packer_that_already_failed_and_fails_a_new_loss(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    newest = doc_example()
    first = eval_run(tmp_path, newest, capsys)
    baseline = tmp_path / "baseline/summary.json"
    baseline.parent.mkdir()
    shutil.copy(first, baseline)
    listed = json.loads(baseline.read_text("utf-8"))["failures"]["scenarios"]
    assert {e["scenario"] for e in listed} == BASELINE_FAILS

    current = eval_run(tmp_path, newest, capsys)  # the same packer, run again
    code, lines = gate(capsys, baseline, current, "--verbose")  # the shipped gates: no_new
    assert code == 0, lines
    still = [line for line in lines if line.startswith("still failing: newest @ scenario: ")]
    assert {line.split(" in ")[1].split(" turn ")[0] for line in still} == BASELINE_FAILS
    # a cell that broke an invariant and missed an expectation is on two lines, one cell
    cells = {where(line) for line in still}
    assert lines[-1].endswith(
        f"no regressions; {len(cells)} cells still failing as in the baseline"
    )
    absolute = tmp_path / "absolute.yaml"
    absolute.write_text(
        "schema: packproof.gates.v1\nmetrics: {evidence_recall: 0.02}\n"
        "hard_invariants: 0\nexpectations: all\n",
        "utf-8",
    )
    code, lines = gate(capsys, baseline, current, "--gates", str(absolute))
    assert code == 1
    assert (
        "rule failed: newest @ scenario: hard invariants 4 (anchors_lost=2, tail_lost=2), "
        "must be 0" in lines
    )

    # the same packer, but it also drops the newest item: the fresh tail is lost anew
    worse = newest.replace('reversed(request["items"])', 'reversed(request["items"][:-1])')
    assert worse != newest
    code, lines = gate(capsys, baseline, eval_run(tmp_path, worse, capsys))
    assert code == 1
    new = [line for line in lines if line.startswith("new failure: newest @ scenario: ")]
    assert (
        "new failure: newest @ scenario: tail_lost in "
        "fresh-tail-anchors/tail-count-protects-newest-raw-messages turn 0 "
        "(not failing in the baseline)"
    ) in new
    assert not {line.split(" in ")[1].split(" turn ")[0] for line in new} & BASELINE_FAILS
    # a cell that lost its tail and missed an expectation is on two lines, one cell
    cells = {where(line) for line in new}
    assert lines[-1].startswith(f"gate: FAILED: {len(cells)} new failing cells (of ")
