"""``ctxpack gate``: identical runs pass; a drop beyond its threshold, a hard
invariant, a failed expectation or a missing strategy fails with exit 1 and is
named in the table; bad input is one line on stderr and exit 2."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ctxpack.cli import main
from ctxpack.evals.gate import load_gates, load_summary
from ctxpack.evals.run.evaluate import evaluate, validate_summary

from .test_runner import write_config

ROOT = Path(__file__).resolve().parents[2]
Summary = dict[str, Any]


@pytest.fixture(scope="module")
def real_summary(tmp_path_factory: pytest.TempPathFactory) -> Summary:
    """A real summary from a tiny eval: two suites, two strategies, two budgets."""
    tmp = tmp_path_factory.mktemp("eval")
    cfg = write_config(
        tmp,
        name="gate-test",
        strategies=["chronological", "bm25"],
        budgets=["scenario", 16],
        bootstrap={"resamples": 100},
    )
    run_dir = evaluate(cfg, out_root=tmp / "reports", jobs=1, executor="serial", resume=False)
    summary: Summary = json.loads((run_dir / "summary.json").read_text("utf-8"))
    assert validate_summary(summary) == []
    return summary


@pytest.fixture
def summary(real_summary: Summary) -> Summary:
    """A private copy to edit."""
    return copy.deepcopy(real_summary)


def group(summary: Summary, label: str, budget: str | int) -> dict[str, Any]:
    return next(g for g in summary["groups"] if g["label"] == label and g["budget"] == budget)


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=1), "utf-8")
    return path


GateRun = Callable[..., tuple[int, str]]


@pytest.fixture
def gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> GateRun:
    """Run ``ctxpack gate`` in process on two summaries; (exit code, stdout)."""

    def run(baseline: Summary, current: Summary, *extra: str) -> tuple[int, str]:
        base = write(tmp_path / "baseline.json", baseline)
        cur = write(tmp_path / "current.json", current)
        capsys.readouterr()
        code = main(["gate", "--baseline", str(base), "--current", str(cur), *extra])
        out, err = capsys.readouterr()
        assert err == ""
        return code, out

    return run


def all_rows(out: str) -> list[list[str]]:
    """The rows of the full table (after the header lines), split into cells."""
    block = out.split("\n\n", 1)[1].split("\n\n", 1)[0]
    return [line.split() for line in block.splitlines()[2:]]  # header, rule


def regression_rows(out: str) -> list[list[str]]:
    """The rows of the "regressions" table, split into cells."""
    assert "regressions (" in out
    block = out.split("regressions (", 1)[1].split("\n\n", 1)[0]
    return [line.split() for line in block.splitlines()[3:]]  # title, header, rule


def test_identical_summaries_pass(summary: Summary, gate: GateRun) -> None:
    code, out = gate(summary, summary)
    assert code == 0
    assert "regressions (" not in out and "REGRESSED" not in out and "MISSING" not in out
    assert out.rstrip().splitlines()[-1].startswith("gate: passed:")
    header = out.splitlines()[4].split()
    assert header == [
        "strategy",
        "budget",
        "metric",
        "baseline",
        "current",
        "drop",
        "allowed",
        "verdict",
    ]
    checked = {tuple(r[:3]) for r in all_rows(out)}
    for label in ("chronological", "bm25"):
        for budget in ("scenario", "16"):
            for metric in ("evidence_recall", "ndcg@10", "mrr", "evidence_hit", "hard_invariants"):
                assert (label, budget, metric) in checked
        assert (label, "scenario", "expectations") in checked
    assert all(r[-1] == "ok" for r in all_rows(out))


def test_recall_drop_beyond_threshold_fails_and_is_named(summary: Summary, gate: GateRun) -> None:
    current = copy.deepcopy(summary)
    group(current, "bm25", 16)["metrics"]["evidence_recall"]["mean"] -= 0.05
    code, out = gate(summary, current)
    assert code == 1
    rows = regression_rows(out)
    assert len(rows) == 1
    strategy, budget, metric, _, _, drop, allowed, verdict = rows[0]
    assert (strategy, budget, metric, verdict) == ("bm25", "16", "evidence_recall", "REGRESSED")
    assert (drop, allowed) == ("+0.0500", "0.02")
    assert "gate: FAILED: 1 of" in out


def test_drop_within_threshold_and_improvements_pass(summary: Summary, gate: GateRun) -> None:
    current = copy.deepcopy(summary)
    group(current, "bm25", "scenario")["metrics"]["evidence_recall"]["mean"] -= 0.015
    group(current, "bm25", "scenario")["metrics"]["mrr"]["mean"] -= 0.03  # exactly the limit
    group(current, "chronological", 16)["metrics"]["ndcg@10"]["mean"] += 0.2
    code, out = gate(summary, current)
    assert code == 0, out
    assert "+0.0150" in out and "-0.2000" in out


def test_gates_file_sets_the_thresholds(summary: Summary, gate: GateRun, tmp_path: Path) -> None:
    current = copy.deepcopy(summary)
    group(current, "bm25", "scenario")["metrics"]["mrr"]["mean"] -= 0.001
    strict = tmp_path / "strict.yaml"
    strict.write_text(
        "schema: ctxpack.gates.v1\nmetrics: {mrr: 0}\nhard_invariants: 0\nexpectations: all\n"
    )
    code, out = gate(summary, current, "--gates", str(strict))
    assert code == 1
    assert [r[:3] for r in regression_rows(out)] == [["bm25", "scenario", "mrr"]]
    assert "evidence_recall" not in out  # only the metrics the gates file names


def test_hard_invariant_above_zero_fails(summary: Summary, gate: GateRun) -> None:
    current = copy.deepcopy(summary)
    group(current, "chronological", 16)["hard_invariants"]["budget_violations"] = 2
    code, out = gate(summary, current)
    assert code == 1
    (row,) = regression_rows(out)
    assert row[:3] == ["chronological", "16", "hard_invariants"]
    assert "2 (budget_violations=2)" in out


def test_hard_invariant_fails_even_when_the_baseline_had_it(
    summary: Summary, gate: GateRun
) -> None:
    group(summary, "bm25", 16)["hard_invariants"]["tail_lost"] = 1
    code, out = gate(summary, summary)
    assert code == 1
    assert regression_rows(out)[0][:3] == ["bm25", "16", "hard_invariants"]


def test_failed_expectation_fails(summary: Summary, gate: GateRun) -> None:
    current = copy.deepcopy(summary)
    exp = group(current, "bm25", "scenario")["expectations"]
    exp["passed"] = exp["total"] - 1
    current["expectation_failures"] = [
        {"key": "conversations/conv-x#1|bm25|scenario", "failures": ["mode budget, expected x"]}
    ]
    code, out = gate(summary, current)
    assert code == 1
    rows = regression_rows(out)
    assert [r[2] for r in rows] == ["expectations", "expectation_failures"]
    assert rows[0][:2] == ["bm25", "scenario"]
    assert "conversations/conv-x#1|bm25|scenario: mode budget, expected x" in out


def test_missing_strategy_fails_and_new_strategy_is_listed(summary: Summary, gate: GateRun) -> None:
    current = copy.deepcopy(summary)
    current["groups"] = [g for g in current["groups"] if g["label"] != "bm25"]
    extra = copy.deepcopy(group(summary, "bm25", 16))
    extra["label"] = "bm25(k1=2)"
    current["groups"].append(extra)
    code, out = gate(summary, current)
    assert code == 1
    rows = regression_rows(out)
    assert {(r[0], r[1], r[-1]) for r in rows} == {
        ("bm25", "scenario", "MISSING"),
        ("bm25", "16", "MISSING"),
    }
    new = [line.split() for line in out.splitlines() if line.startswith("bm25(k1=2)")]
    assert new[0][-1] == "new"
    assert [r[2] for r in new[1:]] == ["hard_invariants"]  # still checked


def test_metric_missing_from_current_fails(summary: Summary, gate: GateRun) -> None:
    current = copy.deepcopy(summary)
    group(current, "chronological", "scenario")["metrics"]["ndcg@10"] = None
    code, out = gate(summary, current)
    assert code == 1
    assert regression_rows(out)[0][2:3] == ["ndcg@10"]
    assert regression_rows(out)[0][-1] == "MISSING"


def test_shipped_gates_and_committed_baseline_are_valid() -> None:
    gates = load_gates(ROOT / "evals/data/gates.yaml")
    assert gates.max_drop == {
        "evidence_recall": 0.02,
        "ndcg@10": 0.02,
        "mrr": 0.03,
        "evidence_hit": 0.03,
    }
    baseline = load_summary(ROOT / "reports/baseline/summary.json", "baseline")
    assert baseline["manifest"]["name"] == "default"
    assert all(sum(g["hard_invariants"].values()) == 0 for g in baseline["groups"])


# ---------------------------------------------------------------- bad input


def _v2(s: Summary) -> Any:
    return {**s, "schema": "ctxpack.eval.summary.v2"}


def _bad_stat(s: Summary) -> Any:
    s["groups"][1]["metrics"]["mrr"]["mean"] = "high"
    return s


def _no_groups(s: Summary) -> Any:
    del s["groups"]
    return s


def _duplicate_group(s: Summary) -> Any:
    s["groups"].append(copy.deepcopy(s["groups"][0]))
    return s


GOOD_GATES = (
    "schema: ctxpack.gates.v1\nmetrics:\n  mrr: 0.03\nhard_invariants: 0\nexpectations: all\n"
)


@pytest.mark.parametrize(
    ("case", "needle"),
    [
        ("baseline:missing", "cannot read the baseline summary: No such file or directory"),
        ("current:invalid-json", "current.json: line 1 column 2: invalid JSON"),
        ("current:list", "current.json: /: the current summary is not a JSON object"),
        (
            "baseline:v2",
            "baseline.json: /schema: baseline has schema ctxpack.eval.summary.v2, "
            "expected ctxpack.eval.summary.v1",
        ),
        ("current:bad-stat", "current.json: /groups/1/metrics/mrr/mean: the current summary "),
        ("current:no-groups", "'groups' is a required property"),
        ("baseline:duplicate-group", "baseline.json: /groups/"),
        ("gates:missing", "nope.yaml: cannot read file"),
        ("gates:unknown-metric", "gates.yaml: line 3 /metrics: schema violation"),
        ("gates:negative", "gates.yaml: line 3 /metrics/mrr: schema violation"),
        ("gates:invariants", "gates.yaml: line 4 /hard_invariants: schema violation"),
        ("gates:bad-yaml", "gates.yaml: line 2: invalid YAML"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    case: str, needle: str, real_summary: Summary, tmp_path: Path
) -> None:
    role, kind = case.split(":")
    files = {
        "baseline": write(tmp_path / "baseline.json", real_summary),
        "current": write(tmp_path / "current.json", real_summary),
        "gates": tmp_path / "gates.yaml",
    }
    files["gates"].write_text(GOOD_GATES)
    edits: dict[str, Callable[[Summary], Any]] = {
        "v2": _v2,
        "bad-stat": _bad_stat,
        "no-groups": _no_groups,
        "duplicate-group": _duplicate_group,
        "list": lambda s: [s],
    }
    target = files[role]
    if kind == "missing":
        files[role] = tmp_path / "nope.yaml" if role == "gates" else tmp_path / "nope.json"
    elif kind == "invalid-json":
        target.write_text("{oops")
    elif kind in edits:
        write(target, edits[kind](copy.deepcopy(real_summary)))
    elif kind == "unknown-metric":
        target.write_text(GOOD_GATES.replace("mrr: 0.03", "mrr: 0.03\n  recal: 0.1"))
    elif kind == "negative":
        target.write_text(GOOD_GATES.replace("0.03", "-0.03"))
    elif kind == "invariants":
        target.write_text(GOOD_GATES.replace("hard_invariants: 0", "hard_invariants: 1"))
    elif kind == "bad-yaml":
        target.write_text("schema: ctxpack.gates.v1\nmetrics: {mrr: [}\nhard_invariants: 0\n")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "ctxpack",
            "gate",
            "--baseline",
            str(files["baseline"]),
            "--current",
            str(files["current"]),
            "--gates",
            str(files["gates"]),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert out.returncode == 2, out.stderr
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert lines[0].startswith("ctxpack: error: ")
    assert needle in lines[0]
