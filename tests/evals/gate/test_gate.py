"""``packproof gate``: identical runs pass in a few lines; a failed rule, a regressed
metric and a missing one are each named by label, in words, and exit 1; any
metric the summary carries can be gated, the right way round; the result can be
Markdown (a file, and GitHub's job summary); a regression can be required to be
significant in a paired test over scenarios; bad input is one line and exit 2."""

from __future__ import annotations

import copy
import csv
import gzip
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from packproof.cli import main
from packproof.evals.gate import GATEABLE, REGRESSED, Check, compare, load_gates, load_summary
from packproof.evals.gate.metrics import unlisted
from packproof.evals.gate.significance import judge_regressions, load_run_cells, settings_of
from packproof.evals.report.text import budget_columns
from packproof.evals.run.evaluate import evaluate, validate_summary
from tests.evals.gate.test_ratchet import with_failures
from tests.evals.run.test_runner import write_config
from tests.paths import ROOT

Summary = dict[str, Any]


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny real eval's folder: two suites, two strategies, two budgets."""
    tmp = tmp_path_factory.mktemp("eval")
    cfg = write_config(
        tmp,
        name="gate-test",
        strategies=["chronological", "bm25"],
        budgets=["scenario", 16],
        bootstrap={"resamples": 100},
    )
    return evaluate(cfg, out_root=tmp / "reports", jobs=1, executor="serial", resume=False)


@pytest.fixture(scope="module")
def real_summary(real_run: Path) -> Summary:
    summary: Summary = json.loads((real_run / "summary.json").read_text("utf-8"))
    assert validate_summary(summary) == []
    return summary


@pytest.fixture
def summary(real_summary: Summary) -> Summary:
    """A private copy to edit."""
    return copy.deepcopy(real_summary)


def group(summary: Summary, label: str, budget: str | int) -> dict[str, Any]:
    return next(g for g in summary["groups"] if g["label"] == label and g["budget"] == budget)


def spec_of(summary: Summary, label: str) -> str:
    return next(s["spec"] for s in summary["strategies"] if s["label"] == label)


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=1), "utf-8")
    return path


def gates_file(path: Path, metrics: str, extra: str = "") -> Path:
    path.write_text(
        f"schema: packproof.gates.v1\nmetrics: {metrics}\nhard_invariants: 0\n"
        f"expectations: all\n{extra}",
        "utf-8",
    )
    return path


ABSOLUTE = "{evidence_recall: 0.02, ndcg@10: 0.02, mrr: 0.03, evidence_hit: 0.03}"


@pytest.fixture
def absolute(tmp_path: Path) -> list[str]:
    """The shipped thresholds with the absolute rules (``0``, ``all``)."""
    return ["--gates", str(gates_file(tmp_path / "absolute.yaml", ABSOLUTE))]


GateRun = Callable[..., tuple[int, str]]


@pytest.fixture
def gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> GateRun:
    """Run ``packproof gate`` in process on two summaries; (exit code, stdout)."""

    def run(baseline: Summary, current: Summary, *extra: str) -> tuple[int, str]:
        base = write(tmp_path / "baseline.json", baseline)
        cur = write(tmp_path / "current.json", current)
        capsys.readouterr()
        code = main(["gate", "--baseline", str(base), "--current", str(cur), *extra])
        out, err = capsys.readouterr()
        assert err == ""
        return code, out

    return run


PROBLEM = re.compile(r"(rule failed|regressed|missing|not significant): |  ")


def problem_lines(out: str) -> list[str]:
    """The lines naming problems (and the failing expectations under their rule)."""
    return [line for line in out.splitlines() if PROBLEM.match(line)]


def table_rows(out: str) -> list[list[str]]:
    """The rows of ``--verbose``'s table, split at runs of two spaces or more."""
    block = out.split("\n\n", 1)[1].split("\n\n", 1)[0]
    return [re.split(r"\s{2,}", line.strip()) for line in block.splitlines()[2:]]


# ---------------------------------------------------------------- the output


def test_identical_summaries_pass_in_a_few_lines(summary: Summary, gate: GateRun) -> None:
    code, out = gate(summary, summary)
    assert code == 0
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines[:4]] == ["baseline", "current", "gates", "note"]
    assert "the baseline and the current run are the same run (gate-test-" in lines[3]
    assert lines[4:] == ["", lines[-1]]
    assert re.fullmatch(r"gate: passed: \d+ checks, no regressions", lines[-1])


def test_verbose_prints_every_check_by_label(summary: Summary, gate: GateRun) -> None:
    code, out = gate(summary, summary, "--verbose")
    assert code == 0
    assert out.splitlines()[5].split() == [
        "strategy",
        "budget",
        "metric",
        "baseline",
        "current",
        "change",
        "allowed",
        "verdict",
    ]
    rows = table_rows(out)
    checked = {tuple(r[:3]) for r in rows}
    for label in ("chronological", "bm25"):
        for budget in ("scenario", "16"):
            for metric in ("evidence_recall", "ndcg@10", "mrr", "evidence_hit", "hard_invariants"):
                assert (label, budget, metric) in checked
        assert (label, "scenario", "expectations") in checked
    assert all(r[-1] == "ok" for r in rows)
    assert spec_of(summary, "bm25") not in out  # bm25(b=0.75,k1=1.2,...): the label instead
    assert f"gate: passed: {len(rows)} checks, no regressions" in out


def test_a_drop_beyond_its_allowance_is_one_regressed_line(summary: Summary, gate: GateRun) -> None:
    current = copy.deepcopy(summary)
    before = group(current, "bm25", 16)["metrics"]["evidence_recall"]["mean"]
    group(current, "bm25", 16)["metrics"]["evidence_recall"]["mean"] -= 0.05
    code, out = gate(summary, current)
    assert code == 1
    assert problem_lines(out) == [
        f"regressed: bm25 @ 16: evidence_recall {before:.4f} -> {before - 0.05:.4f} "
        "(-0.0500, allowed -0.02)"
    ]
    assert re.search(r"^gate: FAILED: 1 metric regressed \(of \d+ checks\)$", out, re.M)
    assert "ok" not in out.split()  # only the problems, by default
    assert spec_of(summary, "bm25") not in out


def test_drop_within_allowance_and_improvements_pass(summary: Summary, gate: GateRun) -> None:
    current = copy.deepcopy(summary)
    group(current, "bm25", "scenario")["metrics"]["evidence_recall"]["mean"] -= 0.015
    group(current, "bm25", "scenario")["metrics"]["mrr"]["mean"] -= 0.03  # exactly the limit
    group(current, "chronological", 16)["metrics"]["ndcg@10"]["mean"] += 0.2
    code, out = gate(summary, current, "--verbose")
    assert code == 0, out
    assert "-0.0150" in out and "+0.2000" in out


def test_gates_file_sets_the_thresholds(summary: Summary, gate: GateRun, tmp_path: Path) -> None:
    current = copy.deepcopy(summary)
    group(current, "bm25", "scenario")["metrics"]["mrr"]["mean"] -= 0.001
    strict = gates_file(tmp_path / "strict.yaml", "{mrr: 0}")
    code, out = gate(summary, current, "--gates", str(strict), "--verbose")
    assert code == 1
    assert [line.split(":")[1] for line in problem_lines(out)] == [" bm25 @ scenario"]
    assert "evidence_recall" not in out  # only the metrics the gates file names


# ---------------------------------------------------------------- rules against metrics


def test_a_hard_invariant_is_a_failed_rule(
    summary: Summary, gate: GateRun, absolute: list[str]
) -> None:
    broken = ("chronological", 16, "hard_invariants", "budget_violations")
    current = with_failures(summary, [("s/a", 0, *broken), ("s/b", 3, *broken)])
    code, out = gate(summary, current, *absolute)
    assert code == 1
    assert problem_lines(out) == [
        "rule failed: chronological @ 16: hard invariants 2 (budget_violations=2), must be 0"
    ]
    assert re.search(r"^gate: FAILED: 1 rule failed \(of \d+ checks\)$", out, re.M)


def test_cells_an_external_packer_failed_fail_the_rule(
    summary: Summary, gate: GateRun, absolute: list[str]
) -> None:
    crashed = [("s/a", t, "bm25", "scenario", "cell_failures", "CRASH") for t in range(3)]
    current = with_failures(summary, crashed)
    code, out = gate(summary, current, *absolute)
    assert code == 1
    assert "rule failed: bm25 @ scenario: hard invariants 3 (cell_failures=3), must be 0" in out


def test_a_hard_invariant_fails_even_when_the_baseline_had_it(
    summary: Summary, gate: GateRun, absolute: list[str]
) -> None:
    summary = with_failures(summary, [("s/a", 0, "bm25", 16, "hard_invariants", "tail_lost")])
    code, out = gate(summary, summary, *absolute)
    assert code == 1
    assert problem_lines(out)[0].startswith("rule failed: bm25 @ 16: hard invariants 1")


def test_failed_expectations_are_rules_naming_the_cells_by_label(
    summary: Summary, gate: GateRun, absolute: list[str]
) -> None:
    missed = (
        "conversations/conv-x",
        1,
        "bm25",
        "scenario",
        "expectations",
        "mode budget, expected x",
    )
    current = with_failures(summary, [missed])
    exp = group(current, "bm25", "scenario")["expectations"]
    spec = spec_of(summary, "bm25")
    assert spec != "bm25" and "(" in spec
    assert current["expectation_failures"] == [
        {"key": f"conversations/conv-x#1|{spec}|scenario", "failures": ["mode budget, expected x"]}
    ]
    mrr = group(current, "chronological", 16)["metrics"]["mrr"]
    assert mrr["mean"] > 0.1  # room to fall past the allowance, within [0, 1]
    mrr["mean"] = 0.0
    code, out = gate(summary, current, *absolute)
    assert code == 1
    total = exp["total"]
    assert problem_lines(out)[:3] == [
        f"rule failed: bm25 @ scenario: expectations {total - 1}/{total} passed "
        f"(baseline {total}/{total}), must be all",
        "rule failed: expectation failures: 1 (baseline 0), must be none",
        "  conversations/conv-x#1|bm25|scenario: mode budget, expected x",
    ]
    assert problem_lines(out)[3].startswith("regressed: chronological @ 16: mrr ")
    assert re.search(r"^gate: FAILED: 2 rules failed, 1 metric regressed \(of", out, re.M)
    assert spec not in out


def test_missing_strategy_fails_and_new_strategy_is_noted(summary: Summary, gate: GateRun) -> None:
    current = copy.deepcopy(summary)
    current["groups"] = [g for g in current["groups"] if g["label"] != "bm25"]
    extra = copy.deepcopy(group(summary, "bm25", 16))
    extra["label"] = "bm25(k1=2)"
    current["groups"].append(extra)
    code, out = gate(summary, current)
    assert code == 1
    assert problem_lines(out) == [
        "missing: bm25 @ scenario: in the baseline, not in the current run",
        "missing: bm25 @ 16: in the baseline, not in the current run",
    ]
    assert "note: new in the current run, not in the baseline: bm25(k1=2) @ 16" in out
    assert re.search(r"^gate: FAILED: 2 missing \(of", out, re.M)
    _, verbose = gate(summary, current, "--verbose")
    new = [r for r in table_rows(verbose) if r[0] == "bm25(k1=2)"]
    assert new[0][-1] == "new"
    assert [r[2] for r in new[1:]] == ["hard_invariants"]  # still checked


def test_a_metric_missing_from_the_current_run_fails(summary: Summary, gate: GateRun) -> None:
    current = copy.deepcopy(summary)
    group(current, "chronological", "scenario")["metrics"]["ndcg@10"] = None
    before = group(summary, "chronological", "scenario")["metrics"]["ndcg@10"]["mean"]
    code, out = gate(summary, current)
    assert code == 1
    assert problem_lines(out) == [
        f"missing: chronological @ scenario: ndcg@10 {before:.4f} -> no value in the current run"
    ]


# ---------------------------------------------------------------- any metric


def test_every_metric_of_the_report_has_a_direction_and_a_schema_entry() -> None:
    assert unlisted() == []
    schema = json.loads((ROOT / "evals/schemas/gates.v1.json").read_text("utf-8"))
    listed = schema["properties"]["metrics"]["properties"]
    assert list(listed) == list(GATEABLE)
    for name, gated in GATEABLE.items():
        assert listed[name] == {"$ref": "#/$defs/share" if gated.share else "#/$defs/amount"}


def test_directions_agree_with_the_report_arrows(real_summary: Summary) -> None:
    columns = [c for c in budget_columns(real_summary) if c.better and c.key in GATEABLE]
    assert {c.key for c in columns} >= {"evidence_recall", "regret", "prefix_stability"}
    for column in columns:
        assert GATEABLE[column.key].better == column.better, column.key


def test_a_cost_regresses_by_rising_and_is_not_capped_at_1(
    summary: Summary, gate: GateRun, tmp_path: Path
) -> None:
    gates = gates_file(tmp_path / "g.yaml", "{tokens_used: 5, regret: 0.01}")
    dearer = copy.deepcopy(summary)
    g = group(dearer, "bm25", 16)["metrics"]
    before = g["tokens_used"]["mean"]
    g["tokens_used"]["mean"] += 10
    group(summary, "bm25", 16)["metrics"]["regret"]["mean"] += 0.3  # falling is better
    code, out = gate(summary, dearer, "--gates", str(gates))
    assert code == 1
    assert problem_lines(out) == [
        f"regressed: bm25 @ 16: tokens_used {before:.4f} -> {before + 10:.4f} "
        "(+10.0000, allowed +5)"
    ]
    assert gate(dearer, summary, "--gates", str(gates))[0] == 1  # regret rose by 0.3
    cheaper = copy.deepcopy(summary)
    group(cheaper, "bm25", 16)["metrics"]["tokens_used"]["mean"] -= 10
    assert gate(summary, cheaper, "--gates", str(gates))[0] == 0
    assert load_gates(gates_file(tmp_path / "big.yaml", "{input_cost: 5000}")).max_drop == {
        "input_cost": 5000.0
    }


def test_prefix_stability_can_be_gated(summary: Summary, gate: GateRun, tmp_path: Path) -> None:
    gates = gates_file(tmp_path / "g.yaml", "{prefix_stability: 0.05}")
    current = copy.deepcopy(summary)
    stat = group(current, "chronological", 16)["prefix_stability"]
    stat["mean"] -= 0.1
    code, out = gate(summary, current, "--gates", str(gates))
    assert code == 1
    (line,) = problem_lines(out)
    assert line.startswith("regressed: chronological @ 16: prefix_stability ")
    assert line.endswith("(-0.1000, allowed -0.05)")


def test_a_count_with_no_better_direction_may_move_either_way_by_its_allowance(
    summary: Summary, gate: GateRun, tmp_path: Path
) -> None:
    gates = gates_file(tmp_path / "g.yaml", "{selected_count: 2}")
    for move in (-3, 3):
        current = copy.deepcopy(summary)
        group(current, "bm25", 16)["metrics"]["selected_count"]["mean"] += move
        code, out = gate(summary, current, "--gates", str(gates))
        assert code == 1 and f"({move:+.4f}, allowed ±2)" in out
    current = copy.deepcopy(summary)
    group(current, "bm25", 16)["metrics"]["selected_count"]["mean"] += 1.5
    assert gate(summary, current, "--gates", str(gates))[0] == 0


# ---------------------------------------------------------------- Markdown


def test_markdown_is_written_and_appended_to_the_job_summary(
    summary: Summary,
    gate: GateRun,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    absolute: list[str],
) -> None:
    job = tmp_path / "step-summary.md"
    job.write_text("## an earlier step\n", "utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(job))
    lost = ("s/a", 2, "chronological", 16, "hard_invariants", "anchors_lost")
    current = with_failures(summary, [lost])
    group(current, "bm25", 16)["metrics"]["evidence_recall"]["mean"] -= 0.05
    md = tmp_path / "out" / "gate.md"
    code, _ = gate(summary, current, "--markdown", str(md), *absolute)
    assert code == 1
    text = md.read_text("utf-8")
    lines = text.splitlines()
    assert lines[:5] == [
        "## ❌ packproof gate: FAILED",
        "",
        "|  | class | strategy | budget | scenario | turns | failed | why |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        "| **failing** | hard invariants | `chronological` | 16 | `s/a` | 2 | anchors_lost "
        "| the rule allows none |",
    ]
    assert lines[6].startswith("1 rule failed, 1 metric regressed (of ")
    rows = [line for line in lines[5:] if line.startswith("| **")]
    assert rows[0].startswith("| **rule failed** | `chronological` | 16 | `hard_invariants` |")
    assert rows[1].startswith("| **regressed** | `bm25` | 16 | `evidence_recall` |")
    assert rows[1].endswith("| -0.0500 | -0.02 |")
    assert "<details><summary>Every check (" in text and text.endswith("</details>\n")
    assert spec_of(summary, "bm25") not in text
    assert job.read_text("utf-8") == "## an earlier step\n\n" + text  # appended, as GitHub says

    code, _ = gate(summary, summary, "--markdown", str(md))
    assert code == 0
    assert md.read_text("utf-8").startswith("## ✅ packproof gate: PASSED\n")  # replaced
    assert job.read_text("utf-8").count("packproof gate:") == 2


def test_markdown_escapes_labels_and_notes(summary: Summary, gate: GateRun, tmp_path: Path) -> None:
    odd = copy.deepcopy(summary)
    for g in odd["groups"]:
        if g["label"] == "bm25":
            g["label"] = "bm|25`<b>"
    current = copy.deepcopy(odd)
    group(current, "bm|25`<b>", 16)["metrics"]["mrr"]["mean"] -= 0.5
    md = tmp_path / "gate.md"
    assert gate(odd, current, "--markdown", str(md))[0] == 1
    row = next(line for line in md.read_text("utf-8").splitlines() if "**regressed**" in line)
    assert "| `` bm\\|25`<b> `` | 16 |" in row
    assert row.count(" | ") == 7  # eight cells: the pipe in the label does not end one


def test_markdown_stays_under_the_comment_limit(
    summary: Summary, gate: GateRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("packproof.evals.gate.markdown.MAX_CHARS", 2500)
    current = copy.deepcopy(summary)
    group(current, "bm25", 16)["metrics"]["mrr"]["mean"] -= 0.5
    md = tmp_path / "gate.md"
    gate(summary, current, "--markdown", str(md))
    text = md.read_text("utf-8")
    assert len(text) <= 2500 and "| **regressed** | `bm25` | 16 | `mrr` |" in text
    assert re.search(r"^\.\.\. and \d+ more checks: run `packproof gate --verbose`$", text, re.M)
    assert text.endswith("</details>\n")


@pytest.mark.parametrize("where", ["markdown", "job-summary"])
def test_an_unwritable_markdown_target_is_one_line_and_exit_2(
    where: str,
    real_summary: Summary,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = write(tmp_path / "baseline.json", real_summary)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    args = ["gate", "--baseline", str(base), "--current", str(base)]
    if where == "markdown":
        args += ["--markdown", str(folder)]
    else:
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(folder))
    capsys.readouterr()
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("packproof: error: ")
    assert "a-folder" in err and "directory" in err
    if where == "markdown":
        assert out == ""  # refused before any work


# ---------------------------------------------------------------- significance


def copy_run(run: Path, to: Path, edit: Callable[[Summary, list[dict[str, str]]], None]) -> Path:
    """A run folder (summary.json and metrics.csv) made from ``run`` by ``edit``,
    which changes the summary and the cells' rows in place."""
    to.mkdir(parents=True)
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    with (run / "metrics.csv").open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, list(reader)
    edit(summary, rows)
    assert fields is not None
    with (to / "metrics.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fields)
        writer.writeheader()
        writer.writerows(rows)
    write(to / "summary.json", summary)
    return to / "summary.json"


def lower_recall(label: str, budget: str, by: Callable[[dict[str, str], float], float]) -> Any:
    """An edit lowering the evidence recall of one group's cells, the summary's
    mean following (the mean over the cells with a value)."""

    def edit(summary: Summary, rows: list[dict[str, str]]) -> None:
        spec = spec_of(summary, label)
        mine = [r for r in rows if r["spec"] == spec and r["budget"] == budget]
        mine = [r for r in mine if r["evidence_recall"] != ""]
        for r in mine:
            r["evidence_recall"] = repr(by(r, float(r["evidence_recall"])))
        stat = group(summary, label, budget if budget == "scenario" else int(budget))
        stat["metrics"]["evidence_recall"]["mean"] = sum(
            float(r["evidence_recall"]) for r in mine
        ) / len(mine)

    return edit


def everywhere(_row: dict[str, str], recall: float) -> float:
    return recall - 0.1  # every bm25 cell at the scenario budget has recall above 0.1


def in_one_scenario(summary_rows: list[dict[str, str]]) -> Callable[[dict[str, str], float], float]:
    first = next(r for r in summary_rows if r["evidence_recall"] not in ("", "0.0"))
    return lambda row, recall: 0.0 if row["scenario"] == first["scenario"] else recall


@pytest.fixture
def significance_runs(real_run: Path, tmp_path: Path) -> dict[str, Path]:
    """The real run as the baseline; a broad drop (every scenario) and a narrow
    one (one scenario's cells) of bm25's recall at the scenario budget."""
    base = copy_run(real_run, tmp_path / "base", lambda s, r: None)
    broad = copy_run(real_run, tmp_path / "broad", lower_recall("bm25", "scenario", everywhere))

    def narrow_edit(summary: Summary, rows: list[dict[str, str]]) -> None:
        spec = spec_of(summary, "bm25")
        mine = [r for r in rows if r["spec"] == spec and r["budget"] == "scenario"]
        lower_recall("bm25", "scenario", in_one_scenario(mine))(summary, rows)

    narrow = copy_run(real_run, tmp_path / "narrow", narrow_edit)
    return {"base": base, "broad": broad, "narrow": narrow}


def gate_runs(
    capsys: pytest.CaptureFixture[str], base: Path, current: Path, *extra: str
) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["gate", "--baseline", str(base), "--current", str(current), *extra])
    out, err = capsys.readouterr()
    assert err == "", err
    return code, out


def test_a_significant_drop_fails_and_a_noisy_one_passes(
    significance_runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base = significance_runs["base"]
    code, out = gate_runs(capsys, base, significance_runs["broad"], "--significance", "0.05")
    assert code == 1, out
    (line,) = problem_lines(out)
    assert line.startswith("regressed: bm25 @ scenario: evidence_recall ")
    assert re.search(r"\(-0\.1000, allowed -0\.02; p = [\d.]+ < 0\.05, 95% CI \[-0\.1000, ", line)
    assert line.endswith("over 8 scenarios)")

    code, out = gate_runs(capsys, base, significance_runs["narrow"], "--significance", "0.05")
    assert code == 0, out
    (line,) = problem_lines(out)
    assert line.startswith("not significant: bm25 @ scenario: evidence_recall ")
    assert re.search(r"; p = (1|0\.[5-9]\d*) >= 0\.05, 95% CI \[", line)  # one scenario moved
    assert "1 move beyond the allowance not significant (p >= 0.05)" in out.splitlines()[-1]

    code, _ = gate_runs(capsys, base, significance_runs["narrow"])  # no test: the means
    assert code == 1


def test_significance_from_the_gates_file_and_the_flag_wins(
    significance_runs: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    gates = gates_file(
        tmp_path / "g.yaml", "{evidence_recall: 0.02}", "significance: {alpha: 0.05}"
    )
    base, narrow = significance_runs["base"], significance_runs["narrow"]
    code, out = gate_runs(capsys, base, narrow, "--gates", str(gates))
    assert code == 0 and "a regression must be significant (p < 0.05)" in out
    # 100 resamples of 8 scenarios cannot give p below 2 / 101: judged on the means
    code, out = gate_runs(capsys, base, narrow, "--gates", str(gates), "--significance", "0.01")
    assert code == 1
    assert "8 scenarios cannot reach p < 0.01 (smallest p 0.0198): judged on the means" in out


def test_the_baseline_cells_may_be_gzipped(
    significance_runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = significance_runs["base"].parent
    plain = folder / "metrics.csv"
    (folder / "metrics.csv.gz").write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    code, out = gate_runs(
        capsys, significance_runs["base"], significance_runs["broad"], "--significance", "0.05"
    )
    assert code == 1 and "< 0.05, 95% CI" in out


def test_missing_baseline_cells_are_one_line_and_exit_2(
    significance_runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    (significance_runs["base"].parent / "metrics.csv").unlink()
    capsys.readouterr()
    args = ["--baseline", str(significance_runs["base"]), "--current"]
    assert main(["gate", *args, str(significance_runs["broad"]), "--significance", "0.05"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert (
        "--significance needs the baseline run's metrics.csv (or metrics.csv.gz) "
        "beside its summary.json" in err
    )


def test_replay_metrics_are_not_tested_for_significance(real_run: Path) -> None:
    cells = load_run_cells(real_run / "summary.json", "baseline")
    check = Check("bm25@anthropic/0", "16", "input_cost", 10.0, 20.0, 10.0, 1.0, REGRESSED)
    settings = settings_of(cells.summary, 0.05)
    (judged,) = judge_regressions([check], cells, cells, settings)
    assert judged.verdict == REGRESSED and judged.test is None
    assert judged.untested == "per chain, not per cell: not tested for significance"


# ---------------------------------------------------------------- the current run


def test_the_current_run_defaults_to_the_baseline_configs_latest(
    real_summary: Summary,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    named = dict(real_summary, manifest={**real_summary["manifest"], "name": "my evals/v1"})
    base = write(tmp_path / "baseline.json", named)
    for folder, run_id in [("reports/my_evals_v1/latest", "named"), ("reports/latest", "old")]:
        Path(folder).mkdir(parents=True)
        write(
            Path(folder) / "summary.json",
            {**named, "manifest": {**named["manifest"], "run_id": run_id}},
        )
    capsys.readouterr()
    assert main(["gate", "--baseline", str(base)]) == 0
    assert "current:  reports/my_evals_v1/latest/summary.json (named)" in capsys.readouterr().out
    shutil.rmtree("reports/my_evals_v1")
    assert main(["gate", "--baseline", str(base)]) == 0
    assert "current:  reports/latest/summary.json (old)" in capsys.readouterr().out
    shutil.rmtree("reports/latest")
    assert main(["gate", "--baseline", str(base)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "no current run: neither reports/my_evals_v1/latest/summary.json nor " in err


def test_shipped_gates_ratchet_and_the_committed_baseline_passes_them() -> None:
    gates = load_gates(ROOT / "evals/data/gates.yaml")
    assert gates.max_drop == {
        "evidence_recall": 0.02,
        "ndcg@10": 0.02,
        "mrr": 0.03,
        "evidence_hit": 0.03,
    }
    assert (gates.hard_invariants, gates.expectations) == ("no_new", "no_new")
    assert gates.alpha is None and gates.known_failures == ()
    baseline = load_summary(ROOT / "reports/baseline/summary.json", "baseline")
    assert baseline["manifest"]["name"] == "default"
    assert all(sum(g["hard_invariants"].values()) == 0 for g in baseline["groups"])
    assert compare(baseline, baseline, gates).passed  # no failing cell: no_new is 0 here


# ---------------------------------------------------------------- bad input


def _v2(s: Summary) -> Any:
    return {**s, "schema": "packproof.eval.summary.v2"}


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
    "schema: packproof.gates.v1\nmetrics:\n  mrr: 0.03\nhard_invariants: 0\nexpectations: all\n"
)
GATES_EDITS = {
    "unknown-metric": ("mrr: 0.03", "mrr: 0.03\n  evidence_recal: 0.1"),
    "negative": ("0.03", "-0.03"),
    "share-above-1": ("mrr: 0.03", "mrr: 2"),
    "invariants": ("hard_invariants: 0", "hard_invariants: 1"),
    "alpha-nan": ("expectations: all", "expectations: all\nsignificance: {alpha: .nan}"),
    "alpha-zero": ("expectations: all", "expectations: all\nsignificance: {alpha: 0}"),
    "unknown-key": ("expectations: all", "expectations: all\nsignificance: {alpha: 0.05, p: 1}"),
}


@pytest.mark.parametrize(
    ("case", "needle"),
    [
        ("baseline:missing", "cannot read the baseline summary: No such file or directory"),
        ("current:invalid-json", "current.json: line 1 column 2: invalid JSON"),
        ("current:list", "current.json: /: the current summary is not a JSON object"),
        (
            "baseline:v2",
            "baseline.json: /schema: baseline has schema packproof.eval.summary.v2, "
            "expected packproof.eval.summary.v1",
        ),
        ("current:bad-stat", "current.json: /groups/1/metrics/mrr/mean: the current summary "),
        ("current:no-groups", "'groups' is a required property"),
        ("baseline:duplicate-group", "baseline.json: /groups/"),
        ("gates:missing", "nope.yaml: cannot read file"),
        (
            "gates:unknown-metric",
            "gates.yaml: line 4 /metrics/evidence_recal: unknown metric, did you mean "
            "'evidence_recall'? "
            "(expected one of evidence_recall, evidence_hit, ndcg@10, mrr, ",
        ),
        ("gates:negative", "gates.yaml: line 3 /metrics/mrr: schema violation"),
        ("gates:share-above-1", "gates.yaml: line 3 /metrics/mrr: schema violation: 2 is greater"),
        ("gates:invariants", "gates.yaml: line 4 /hard_invariants: schema violation"),
        ("gates:alpha-nan", "gates.yaml: line 6 /significance/alpha: not a finite number"),
        ("gates:alpha-zero", "/significance/alpha: schema violation: 0 is less than or equal"),
        ("gates:unknown-key", "line 6 /significance: schema violation: Additional properties"),
        ("gates:bad-yaml", "gates.yaml: line 2: invalid YAML"),
        ("flag:significance", "usage: argument --significance: expected a number in"),
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
    extra: list[str] = []
    if role == "flag":
        extra = ["--significance", "1.5"]
    elif kind == "missing":
        files[role] = tmp_path / "nope.yaml" if role == "gates" else tmp_path / "nope.json"
    elif kind == "invalid-json":
        files[role].write_text("{oops")
    elif kind in edits:
        write(files[role], edits[kind](copy.deepcopy(real_summary)))
    elif kind in GATES_EDITS:
        old, new = GATES_EDITS[kind]
        files["gates"].write_text(GOOD_GATES.replace(old, new))
    elif kind == "bad-yaml":
        files["gates"].write_text(
            "schema: packproof.gates.v1\nmetrics: {mrr: [}\nhard_invariants: 0\n"
        )
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "packproof",
            "gate",
            "--baseline",
            str(files["baseline"]),
            "--current",
            str(files["current"]),
            "--gates",
            str(files["gates"]),
            *extra,
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
    assert lines[0].startswith("packproof: error: ")
    assert needle in lines[0]
