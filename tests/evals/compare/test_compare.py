"""``packproof compare A B``: the paired difference is the mean of the per-cell
differences with a cluster interval around it; scenarios that flipped between
pass and fail are found, with the failing run's reasons; runs of different
scenarios are compared on the cells both have, listing the scenarios added,
removed and changed; one run on both sides is said to be one; missing or
unfinished runs and runs with no cell in common are refused with one line and
exit 2, writing nothing; the outputs are the same bytes for the same runs, and
the forest plot has no text over other text.

Most runs here are written by hand (a summary.json and a metrics.csv with
known values); one pair comes from the real eval on a golden suite."""

from __future__ import annotations

import csv
import dataclasses
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from packproof.cli import main
from packproof.evals.compare.model import compare_runs
from packproof.evals.compare.plot import compare_figure
from packproof.evals.run.evaluate import evaluate
from packproof.evals.scenarios.format import load_compiled
from packproof.packer.jsonio import dumps
from tests.evals.report.plots.test_plots import drawn_texts, overlaps
from tests.evals.run.test_runner import write_config
from tests.paths import ROOT

NAN = float("nan")
SUITE_SHA = "0" * 64


def cell(
    scenario: str,
    turn: int,
    label: str = "x",
    budget: str = "16",
    *,
    suite: str = "s",
    status: str = "ok",
    **metrics: float,
) -> dict[str, Any]:
    return {
        "suite": suite,
        "scenario": scenario,
        "turn": turn,
        "label": label,
        "budget": budget,
        "status": status,
        **metrics,
    }


def write_run(
    folder: Path,
    cells: list[dict[str, Any]],
    *,
    suites: dict[str, str] | None = None,
    failures: dict[tuple[str, int, str, str], list[str]] | None = None,
    run_id: str | None = None,
    scenarios: dict[str, str] | None = None,
) -> Path:
    """A run folder with a minimal summary.json and a metrics.csv of ``cells``
    (a strategy's spec is its label); ``scenarios``, each scenario's sha256 by
    ``suite/scenario``, as the manifest records them (none: an older run)."""
    folder.mkdir(parents=True)
    labels = list(dict.fromkeys(c["label"] for c in cells))
    budgets = list(dict.fromkeys(c["budget"] for c in cells))

    def key(c: dict[str, Any]) -> str:
        return f"{c['suite']}/{c['scenario']}#{c['turn']}|{c['label']}|{c['budget']}"

    metrics = sorted({k for c in cells for k in c} - {*cell("", 0), "label"})
    head = ["key", "status", "suite", "scenario", "turn", "strategy", "spec", "budget", *metrics]
    with (folder / "metrics.csv").open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(head)
        for c in cells:
            values = ["" if c.get(m, NAN) != c.get(m, NAN) else c[m] for m in metrics]
            where = [c["suite"], c["scenario"], c["turn"], c["label"], c["label"], c["budget"]]
            out.writerow([key(c), c["status"], *where, *values])
    fails = [
        {"key": f"{s.split('/')[0]}/{s.split('/')[1]}#{t}|{label}|{b}", "failures": lines}
        for (s, t, label, b), lines in (failures or {}).items()
    ]
    summary = {
        "schema": "packproof.eval.summary.v1",
        "confidence": 0.95,
        "baseline": labels[0],
        "cells": len(cells),
        "budgets": [int(b) if b.isdigit() else b for b in budgets],
        "strategies": [{"label": x, "spec": x} for x in labels],
        "groups": [],
        "paired": [],
        "expectation_failures": fails,
        "run": {"executor": "process", "jobs": 1, "latency": {}},
        "manifest": {
            "name": "t",
            "run_id": run_id or folder.name,
            "packproof_version": "0",
            "python": "3",
            "platform": "test",
            "strategies": labels,
            "budgets": budgets,
            "token_counters": {},
            "bootstrap_resamples": 500,
            "confidence": 0.95,
            "seed": 0,
            "config": {"file": "cfg.yaml", "sha256": "1" * 64},
            "git_commit": None,
            "suites": [
                {"file": n, "sha256": sha} for n, sha in (suites or {"s.jsonl": SUITE_SHA}).items()
            ],
            **({"scenarios": scenarios} if scenarios is not None else {}),
        },
    }
    (folder / "summary.json").write_text(json.dumps(summary), "utf-8")
    return folder


def compare_cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["compare", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


# evidence recall of three scenarios of two turns each, before and after
BEFORE = {("a", 0): 0.0, ("a", 1): 0.5, ("b", 0): 1.0, ("b", 1): 1.0, ("c", 0): 0.25, ("c", 1): 0.0}
AFTER = {("a", 0): 1.0, ("a", 1): 1.0, ("b", 0): 1.0, ("b", 1): 0.5, ("c", 0): 0.75, ("c", 1): 1.0}


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    a = write_run(tmp_path / "A", [cell(s, t, evidence_recall=v) for (s, t), v in BEFORE.items()])
    b = write_run(tmp_path / "B", [cell(s, t, evidence_recall=v) for (s, t), v in AFTER.items()])
    return a, b


def test_the_paired_difference_is_the_mean_of_the_cells_differences(
    two_runs: tuple[Path, Path],
) -> None:
    cmp = compare_runs(*two_runs)
    (change,) = cmp.changes
    diffs = [AFTER[k] - BEFORE[k] for k in BEFORE]  # 1, .5, 0, -.5, .5, 1
    assert change.stat["mean"] == pytest.approx(sum(diffs) / 6) == pytest.approx(5 / 12)
    assert change.mean_a == pytest.approx(sum(BEFORE.values()) / 6)
    assert change.mean_b == pytest.approx(sum(AFTER.values()) / 6)
    assert change.stat["low"] <= change.stat["mean"] <= change.stat["high"]
    assert (change.stat["n"], change.stat["clusters"]) == (6, 3)
    # three scenarios: an exact sign-flip test cannot go below 2 / 2**3
    assert change.stat["p_value"] >= 0.25 and change.verdict == "unclear"


def test_a_clear_change_is_marked_by_the_metrics_direction(tmp_path: Path) -> None:
    scenarios = [f"s{i}" for i in range(8)]
    a = write_run(
        tmp_path / "A",
        [cell(s, 0, evidence_recall=0.2, regret=0.5) for s in scenarios],
    )
    b = write_run(
        tmp_path / "B",
        [
            cell(s, 0, evidence_recall=0.2 + 0.05 * i, regret=0.9)
            for i, s in enumerate(scenarios, 1)
        ],
    )
    cmp = compare_runs(a, b, metrics=["evidence_recall", "regret"])
    recall, regret = cmp.changes
    assert recall.verdict == "better" and recall.stat["p_value"] <= 0.05
    assert regret.better == -1 and regret.verdict == "worse"  # regret: lower is better


def test_identical_runs_are_the_same_everywhere(tmp_path: Path) -> None:
    rows = [cell(s, t, evidence_recall=v) for (s, t), v in BEFORE.items()]
    cmp = compare_runs(write_run(tmp_path / "A", rows), write_run(tmp_path / "B", rows))
    assert [c.verdict for c in cmp.changes] == ["same"]
    assert cmp.scenarios["pass_to_fail"] == cmp.scenarios["fail_to_pass"] == 0


def test_flipped_scenarios_are_found_with_the_failing_runs_reasons(tmp_path: Path) -> None:
    a = write_run(
        tmp_path / "A",
        [
            cell("pass-then-fail", 0, expectation_pass=1.0),
            cell("pass-then-fail", 1, expectation_pass=1.0),
            cell("fail-then-pass", 0, expectation_pass=0.0),
            cell("fail-then-pass", 1, expectation_pass=NAN),  # not judged
            cell("ran-then-timed-out", 0, expectation_pass=NAN),
            cell("fails-in-both", 0, expectation_pass=0.0),
        ],
        failures={("s/fail-then-pass", 0, "x", "16"): ["a1: must include m3"]},
    )
    b = write_run(
        tmp_path / "B",
        [
            cell("pass-then-fail", 0, expectation_pass=1.0),
            cell("pass-then-fail", 1, expectation_pass=0.0),
            cell("fail-then-pass", 0, expectation_pass=1.0),
            cell("fail-then-pass", 1, expectation_pass=NAN),
            cell("ran-then-timed-out", 0, status="TIMEOUT"),
            cell("fails-in-both", 0, expectation_pass=0.0),
        ],
        failures={("s/pass-then-fail", 1, "x", "16"): ["a2: reasons lack x", "a3: mode"]},
    )
    cmp = compare_runs(a, b)
    flips = {f.scenario: f for f in cmp.flips}
    assert set(flips) == {"s/pass-then-fail", "s/fail-then-pass", "s/ran-then-timed-out"}
    assert (flips["s/pass-then-fail"].before, flips["s/pass-then-fail"].after) == ("pass", "fail")
    assert flips["s/pass-then-fail"].failures == ("turn 1: a2: reasons lack x; a3: mode",)
    assert (flips["s/fail-then-pass"].before, flips["s/fail-then-pass"].after) == ("fail", "pass")
    assert flips["s/fail-then-pass"].failures == ("turn 0: a1: must include m3",)
    assert flips["s/ran-then-timed-out"].failures == ("turn 0: status TIMEOUT",)
    assert cmp.scenarios == {
        "compared": 4,
        "pass_to_fail": 2,
        "fail_to_pass": 1,
        "failing_in_both": 1,
    }


def test_labels_in_one_run_only_are_listed_not_compared(tmp_path: Path) -> None:
    a = write_run(
        tmp_path / "A",
        [cell("a", 0, evidence_recall=1.0), cell("a", 0, "old", **{"evidence_recall": 0.0})],
    )
    b = write_run(
        tmp_path / "B",
        [cell("a", 0, evidence_recall=1.0), cell("a", 0, "new", evidence_recall=1.0)],
    )
    cmp = compare_runs(a, b)
    assert (cmp.only_a, cmp.only_b, cmp.labels) == (("old",), ("new",), ("x",))
    assert {c.label for c in cmp.changes} == {"x"}


def test_a_changed_suite_without_scenario_hashes_says_what_cannot_be_told(
    tmp_path: Path,
) -> None:
    rows = [cell(s, t, evidence_recall=v) for (s, t), v in BEFORE.items()]
    a = write_run(tmp_path / "A", rows)
    b = write_run(tmp_path / "B", rows, suites={"s.jsonl": "f" * 64})
    cmp = compare_runs(a, b)
    assert cmp.changed_suites == ("s.jsonl",) and cmp.shared.changed == ()
    assert cmp.shared.unhashed == ("A", "B")
    (note,) = cmp.notes
    assert "s.jsonl" in note and "which of the scenarios both runs have changed" in note


@pytest.fixture
def grown_runs(tmp_path: Path) -> tuple[Path, Path]:
    """B adds scenario ``mine/d`` (a new suite file), drops ``s/c`` and changes
    ``s/b`` (same id, other sha256), whose expectation now fails."""
    a = write_run(
        tmp_path / "A",
        [cell(s, t, evidence_recall=v, expectation_pass=1.0) for (s, t), v in BEFORE.items()],
        scenarios={"s/a": "a" * 64, "s/b": "b" * 64, "s/c": "c" * 64},
    )
    kept = {k: v for k, v in AFTER.items() if k[0] != "c"}
    b = write_run(
        tmp_path / "B",
        [
            *(
                cell(s, t, evidence_recall=v, expectation_pass=float(s != "b"))
                for (s, t), v in kept.items()
            ),
            cell("d", 0, suite="mine", evidence_recall=0.0, expectation_pass=1.0),
        ],
        suites={"s.jsonl": "f" * 64, "mine.jsonl": SUITE_SHA},
        scenarios={"s/a": "a" * 64, "s/b": "f" * 64, "mine/d": "d" * 64},
    )
    return a, b


def test_runs_of_other_scenarios_are_compared_on_the_cells_both_have(
    grown_runs: tuple[Path, Path],
) -> None:
    cmp = compare_runs(*grown_runs)
    sh = cmp.shared
    assert (sh.both, sh.added, sh.removed, sh.changed) == (
        ("s/a", "s/b"),
        ("mine/d",),
        ("s/c",),
        ("s/b",),
    )
    recall = next(c for c in cmp.changes if c.metric == "evidence_recall")
    # a and b only: differences 1, .5, 0, -.5
    assert (recall.stat["n"], recall.stat["clusters"]) == (4, 2)
    assert recall.stat["mean"] == pytest.approx(1.0 / 4)
    assert recall.mean_a == pytest.approx(2.5 / 4) and recall.mean_b == pytest.approx(3.5 / 4)
    (flip,) = cmp.flips
    assert (flip.scenario, flip.after, flip.changed) == ("s/b", "fail", True)
    assert cmp.scenarios["compared"] == 2
    said = " ".join(cmp.notes)
    assert "Compared on the 2 scenarios both runs have" in said
    assert (
        "1 scenario only in B (added: mine/d)" in said
        and "1 scenario only in A (removed: s/c)" in said
    )
    assert "1 scenario changed between the runs (same id, other content: s/b)" in said


def test_added_removed_and_changed_scenarios_are_in_every_output(
    grown_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = grown_runs
    out = a.parent / "cmp"
    code, stdout, err = compare_cli(capsys, a, b, "--out", out)
    assert code == 0 and err == ""
    assert (
        "scenarios: 2 in both runs (compared), 1 added (only in B), 1 removed (only in A), "
        "1 changed" in stdout
    )
    assert "  added: mine/d\n  removed: s/c\n  changed: s/b\n" in stdout
    assert "pass → fail: s/b (changed between the runs), x at budget 16" in stdout
    md = (out / "compare.md").read_text("utf-8")
    assert "- added: `mine/d`\n- removed: `s/c`\n- changed: `s/b`\n" in md
    assert "| suites | `s.jsonl` (changed) | `mine.jsonl` (only here), `s.jsonl` (changed) |" in md
    data = json.loads((out / "compare.json").read_text("utf-8"))
    assert data["added_scenarios"] == ["mine/d"] and data["removed_scenarios"] == ["s/c"]
    assert data["changed_scenarios"] == ["s/b"] and data["scenarios_in_both"] == 2
    assert data["flips"][0]["scenario_changed"] is True and data["same_run"] is None
    assert data["without_scenario_hashes"] == []


def _refused(capsys: pytest.CaptureFixture[str], out: Path, *args: str | Path) -> str:
    code, stdout, err = compare_cli(capsys, *args, "--out", out)
    assert code == 2 and stdout == ""
    assert err.startswith("packproof: error: ") and err.count("\n") == 1, err
    assert not out.exists()
    return err


@pytest.mark.parametrize(
    ("b_cells", "why"),
    [
        (
            [cell("other", 0, evidence_recall=1.0)],
            "no scenario in common (A: 3 scenarios, B: 1 scenario)",
        ),
        ([cell("a", 0, "y", evidence_recall=1.0)], "no strategy label in common (A: x; B: y)"),
        ([cell("a", 0, budget="32", evidence_recall=1.0)], "no budget in common (A: 16; B: 32)"),
        ([cell("a", 7, evidence_recall=1.0)], "no turn of a shared scenario"),
    ],
    ids=["scenario", "label", "budget", "turn"],
)
def test_runs_that_share_no_cell_are_refused_saying_what_they_lack(
    b_cells: list[dict[str, Any]],
    why: str,
    two_runs: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    a, _ = two_runs
    b = write_run(a.parent / "C", b_cells, suites={"other.jsonl": SUITE_SHA})
    err = _refused(capsys, a.parent / "out", a, b)
    assert "the runs share no cell" in err and why in err


@pytest.mark.parametrize(
    "damage",
    ["missing", "incomplete", "no-metrics", "unknown-metric", "unknown-budget"],
)
def test_what_cannot_be_compared_is_refused_in_one_line(
    damage: str, two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_runs
    extra: list[str] = []
    if damage == "missing":
        b = b.parent / "no-such-run"
    elif damage == "incomplete":
        (b / "INCOMPLETE").write_text("this run has not finished its reports\n")
    elif damage == "no-metrics":
        (b / "metrics.csv").unlink()
    elif damage == "unknown-metric":
        extra = ["--metric", "mrr"]
    else:
        extra = ["--budget", "4096"]
    _refused(capsys, a.parent / "out", a, b, *extra)


def test_outputs_are_written_and_the_same_bytes_twice(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_runs
    outs = [a.parent / "one", a.parent / "two"]
    for out in outs:
        code, stdout, _ = compare_cli(capsys, a, b, "--out", out)
        assert code == 0 and f"written: {out}/" in stdout
    names = ["compare.md", "compare.json", "compare.png"]
    assert sorted(p.name for p in outs[0].iterdir()) == sorted(names)
    for name in names:
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    data = json.loads((outs[0] / "compare.json").read_text("utf-8"))
    assert data["schema"] == "packproof.compare.v1" and data["main_metric"] == "evidence_recall"
    assert data["changes"][0]["difference"]["mean"] == pytest.approx(5 / 12)
    md = (outs[0] / "compare.md").read_text("utf-8")
    assert (
        md.index("On evidence recall") < md.index("## evidence recall") < md.index("## Provenance")
    )


def test_the_default_folder_is_named_after_both_runs(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = two_runs
    monkeypatch.chdir(a.parent)
    code, stdout, _ = compare_cli(capsys, a, b)
    assert code == 0 and "reports/compare/A-vs-B/" in stdout
    assert (a.parent / "reports/compare/A-vs-B/compare.json").is_file()


def test_a_run_compared_with_itself_says_so_everywhere(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = two_runs
    monkeypatch.chdir(a.parent)
    code, stdout, _ = compare_cli(capsys, a, a / "summary.json")
    assert code == 0
    assert stdout.startswith("compare: A A (reference) -> B A (candidate): the same run folder")
    assert "A and B are the same run folder (A): the run is compared with itself" in stdout
    out = a.parent / "reports/compare/A-vs-itself"
    assert "written: reports/compare/A-vs-itself/" in stdout
    md = (out / "compare.md").read_text("utf-8")
    assert md.startswith("# Compare: `A` → `A` (the same run folder on both sides)")
    data = json.loads((out / "compare.json").read_text("utf-8"))
    assert data["same_run"] == "folder" and "the same run folder" in data["notes"][0]
    assert [c["verdict"] for c in data["changes"]] == ["same"]


def test_two_folders_of_one_run_id_are_said_to_be_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [cell(s, t, evidence_recall=v) for (s, t), v in BEFORE.items()]
    a = write_run(tmp_path / "baseline", rows, run_id="t-1234abcd")
    b = write_run(tmp_path / "t-1234abcd", rows, run_id="t-1234abcd")
    monkeypatch.chdir(tmp_path)
    code, stdout, _ = compare_cli(capsys, a, b)
    assert code == 0 and ": the same run id on both sides" in stdout.splitlines()[0]
    assert "A and B have the same run id (t-1234abcd), read from two folders" in stdout
    data = json.loads(
        (tmp_path / "reports/compare/t-1234abcd-vs-same-id/compare.json").read_text("utf-8")
    )
    assert data["same_run"] == "run_id"


def crowded(tmp_path: Path) -> tuple[Path, Path]:
    """Seven labels, some long, five budgets, three metrics that change."""
    labels = [
        "chronological",
        "bm25",
        "hybrid",
        "hybrid(w_recency=0,w_relevance=0.6,w_usage=0)",
        "bm25+cache(low_water=0.4,placement=first,recall_share=0.3)",
        "external-packer-with-a-very-long-name-and-no-break-point-whatsoever-v2",
        "cost $5 packer",
    ]
    budgets = ["scenario", "16", "32", "64", "128"]
    rows_a, rows_b = [], []
    for i, (label, budget, s) in enumerate(itertools.product(labels, budgets, range(10))):
        shift = (i % 7 - 3) * 0.04
        base = {"evidence_recall": 0.5, "evidence_hit": 0.0, "ndcg@10": 0.6}
        after = {"evidence_recall": 0.5 + shift + 0.01 * s, "evidence_hit": float(s % 3 == 0)}
        rows_a.append(cell(f"sc{s}", 0, label, budget, **base))
        rows_b.append(cell(f"sc{s}", 0, label, budget, **{**base, **after, "ndcg@10": 0.7}))
    return write_run(tmp_path / "A", rows_a), write_run(tmp_path / "B", rows_b)


def test_the_forest_plot_has_no_text_over_other_text(tmp_path: Path) -> None:
    fig = compare_figure(compare_runs(*crowded(tmp_path)))
    assert len(fig.axes) == 3  # a panel per metric with a change
    texts = drawn_texts(fig)
    width, height = fig.bbox.width, fig.bbox.height
    for text, box in texts:
        assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1, text
    clashes = [(a, b) for (a, x), (b, y) in itertools.combinations(texts, 2) if overlaps(x, y)]
    assert not clashes
    renderer = fig.canvas.get_renderer()
    for legend in fig.legends:
        box = legend.get_window_extent(renderer)
        assert all(box.y1 <= ax.get_window_extent(renderer).y0 for ax in fig.axes)


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two real evals of one golden suite: B recounts every item with chars4,
    so the same strategies pack differently."""
    runs = []
    for name, counter in (("before", None), ("after", "chars4")):
        tmp = tmp_path_factory.mktemp(name)
        cfg = write_config(
            tmp,
            name=name,
            suites=[str(ROOT / "scenarios/compiled/conversations.jsonl")],
            strategies=["chronological", "bm25"],
            budgets=["scenario", 16, 48],
            token_counter=counter,
        )
        runs.append(
            evaluate(cfg, out_root=tmp / "reports", jobs=1, executor="serial", resume=False)
        )
    return runs[0], runs[1]


def test_two_real_runs_compare_end_to_end(
    real_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = real_runs
    code, stdout, err = compare_cli(capsys, a, b, "--out", tmp_path / "cmp", "--verbose")
    assert code == 0 and err == ""
    assert stdout.startswith(f"compare: A {a.name} (reference) -> B {b.name} (candidate)")
    data = json.loads((tmp_path / "cmp/compare.json").read_text("utf-8"))
    assert data["labels"] == ["chronological", "bm25"]
    assert {c["metric"] for c in data["changes"]} >= {"evidence_recall", "prefix_stability"}
    assert any(c["difference"]["mean"] != 0 for c in data["changes"])
    for c in data["changes"]:
        d = c["difference"]
        assert d["low"] - 1e-9 <= d["mean"] <= d["high"] + 1e-9
        assert c["mean_b"] - c["mean_a"] == pytest.approx(d["mean"], abs=1e-8)
    assert (tmp_path / "cmp/compare.png").read_bytes().startswith(b"\x89PNG")
    assert "evidence recall ↑" in stdout and "prefix stability ↑" in stdout  # --verbose: all


def test_real_runs_of_a_suite_that_grew_and_changed_compare_on_what_both_have(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A runs conversations 1-4, B runs 2-5 with conversation 2 reworded: B's
    run records each scenario's sha256, so the one reworded is found."""
    first, second, *rest = load_compiled(ROOT / "scenarios/compiled/conversations.jsonl")
    reworded = dataclasses.replace(second, why=second.why + " (reworded)")
    runs = []
    for name, scenarios in (("A", [first, second, *rest[:2]]), ("B", [reworded, *rest])):
        folder = tmp_path / name
        folder.mkdir()
        suite = folder / "conv.jsonl"
        suite.write_text("".join(dumps(x.to_json()) + "\n" for x in scenarios))
        cfg = write_config(
            folder, name="conv", suites=[str(suite)], strategies=["bm25"], budgets=[48]
        )
        runs.append(evaluate(cfg, out_root=folder / "reports", jobs=1, executor="serial"))
    code, stdout, err = compare_cli(capsys, *runs, "--out", tmp_path / "cmp")
    assert code == 0 and err == "" and f"  changed: conv/{second.id}\n" in stdout
    data = json.loads((tmp_path / "cmp/compare.json").read_text("utf-8"))
    assert data["added_scenarios"] == [f"conv/{rest[-1].id}"]
    assert data["removed_scenarios"] == [f"conv/{first.id}"]
    assert data["changed_scenarios"] == [f"conv/{second.id}"]
    assert data["scenarios_in_both"] == 3 and data["changed_suites"] == ["conv.jsonl"]
    # the same packer on the same items: every paired cell equal, over 3 scenarios
    assert {c["verdict"] for c in data["changes"]} == {"same"}
    recall = next(c for c in data["changes"] if c["metric"] == "evidence_recall")
    assert recall["difference"]["clusters"] == 3
