"""The ratchet: under ``no_new`` a cell that failed the same way in the baseline may
still fail, a new failing cell fails the gate and a fixed one is reported; known
failures excuse the cells they match under either rule and stale ones are reported;
one run on both sides is said; bad input is one line and exit 2. Summaries are a
real clean run's, with failing cells written in by hand."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from packproof.cli import main
from packproof.evals.gate.known import FailingCell, KnownFailure
from packproof.evals.run.evaluate import evaluate
from tests.evals.run.test_runner import write_config

Summary = dict[str, Any]
# (suite/scenario, turn, label, budget, class, what): what is the hard invariant
# broken, the packer's failure class, or the missed expectation's reason
Cell = tuple[str, int, str, str | int, str, str]


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Summary:
    """A tiny real run with no failing cell: two strategies, two budgets."""
    tmp = tmp_path_factory.mktemp("eval")
    cfg = write_config(
        tmp,
        name="ratchet-test",
        strategies=["chronological", "bm25"],
        budgets=["scenario", 16],
        bootstrap={"resamples": 100},
    )
    run = evaluate(cfg, out_root=tmp / "reports", jobs=1, executor="serial", resume=False)
    summary: Summary = json.loads((run / "summary.json").read_text("utf-8"))
    assert summary["failures"]["cells"] == 0 and summary["failures"]["scenarios"] == []
    return summary


def with_failures(summary: Summary, cells: Iterable[Cell], run_id: str = "") -> Summary:
    """A copy of ``summary`` failing exactly ``cells``, its group counts, listed
    cells, expectation failures and failing-cell list agreeing as a run's would."""
    out = copy.deepcopy(summary)
    if run_id:
        out["manifest"]["run_id"] = run_id
    groups = {(g["label"], str(g["budget"])): g for g in out["groups"]}
    for g in groups.values():
        g["hard_invariants"] = dict.fromkeys(g["hard_invariants"], 0)
        g["expectations"]["passed"] = g["expectations"]["total"]
    specs = {s["label"]: s["spec"] for s in out["strategies"]}
    turns: dict[tuple[str, str, str, str], list[int]] = {}
    listed, missed = [], []
    for scenario, turn, label, budget, klass, what in cells:
        group = groups[label, str(budget)]
        key = f"{scenario}#{turn}|{specs[label]}|{budget}"
        if klass == "expectations":
            group["expectations"]["passed"] -= 1
            missed.append({"key": key, "failures": [what]})
        elif klass == "hard_invariants":
            group["hard_invariants"][what] += 1
            listed.append({"key": key, "problems": [f"hard invariant {what} = 1"]})
        else:
            group["hard_invariants"]["cell_failures"] += 1
            listed.append({"key": key, "problems": [f"{what}: the packer failed"]})
        turns.setdefault((scenario, label, str(budget), klass), []).append(turn)
    out["expectation_failures"] = missed
    out["failures"]["listed"] = listed
    out["failures"]["scenarios"] = [
        {"scenario": s, "label": label, "budget": b, "class": k, "turns": sorted(t)}
        for (s, label, b, k), t in sorted(turns.items())
    ]
    return out


def gates_file(path: Path, hard: str = "no_new", exp: str = "no_new", extra: str = "") -> Path:
    path.write_text(
        "schema: packproof.gates.v1\nmetrics: {mrr: 0.03}\n"
        f"hard_invariants: {hard}\nexpectations: {exp}\n{extra}",
        "utf-8",
    )
    return path


def run_gate(
    tmp: Path, capsys: pytest.CaptureFixture[str], base: Summary, cur: Summary, *extra: str
) -> tuple[int, str, str]:
    """``packproof gate`` in process on two summaries: (exit code, stdout, stderr)."""
    (tmp / "baseline.json").write_text(json.dumps(base), "utf-8")
    (tmp / "current.json").write_text(json.dumps(cur), "utf-8")
    capsys.readouterr()
    args = ["--baseline", str(tmp / "baseline.json"), "--current", str(tmp / "current.json")]
    code = main(["gate", *args, *extra])
    out, err = capsys.readouterr()
    return code, out, err


SAID = re.compile(
    r"(new failure|rule failed|regressed|missing|known|still failing|fixed|stale known failure"
    r"|not significant): |  "
)


def said(out: str) -> list[str]:
    """The lines naming problems and failing cells, in order."""
    return [line for line in out.splitlines() if SAID.match(line)]


ANCHOR = ("edge/anchored", 0, "chronological", "scenario", "hard_invariants", "anchors_lost")
MISSED = ("edge/anchored", 0, "chronological", "scenario", "expectations", "selected m1")


# ---------------------------------------------------------------- no_new against 0


def test_a_failure_the_baseline_had_passes_under_no_new_and_fails_under_0(
    clean: Summary, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = with_failures(clean, [ANCHOR, MISSED], run_id="base")
    cur = with_failures(clean, [ANCHOR, MISSED], run_id="cur")
    ratchet = gates_file(tmp_path / "ratchet.yaml")
    code, out, err = run_gate(tmp_path, capsys, base, cur, "--gates", str(ratchet))
    assert (code, err) == (0, "")
    # ANCHOR and MISSED are one cell failing both rules: one cell
    assert said(out) == ["still failing: 1 cell as in the baseline (--verbose lists them)"]
    assert re.search(
        r"^gate: passed: \d+ checks, no regressions; 1 cell still failing as in the baseline$",
        out,
        re.M,
    )
    _, out, _ = run_gate(tmp_path, capsys, base, cur, "--gates", str(ratchet), "--verbose")
    assert said(out) == [
        "still failing: chronological @ scenario: anchors_lost in edge/anchored turn 0 "
        "(failing in the baseline too)",
        "still failing: chronological @ scenario: expectations missed in edge/anchored turn 0 "
        "(failing in the baseline too)",
    ]
    absolute = gates_file(tmp_path / "absolute.yaml", "0", "all")
    code, out, _ = run_gate(tmp_path, capsys, base, cur, "--gates", str(absolute))
    assert code == 1
    n = next(g for g in clean["groups"] if g["label"] == "chronological")["expectations"]["total"]
    assert said(out) == [
        "rule failed: chronological @ scenario: hard invariants 1 (anchors_lost=1), must be 0",
        f"rule failed: chronological @ scenario: expectations {n - 1}/{n} passed "
        f"(baseline {n - 1}/{n}), must be all",
        "rule failed: expectation failures: 1 (baseline 1), must be none",
        "  edge/anchored#0|chronological|scenario: selected m1",
    ]
    assert re.search(r"^gate: FAILED: 3 rules failed \(of \d+ checks\)$", out, re.M)


def test_a_new_failing_cell_fails_under_no_new_with_its_turns_on_one_line(
    clean: Summary, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = with_failures(clean, [ANCHOR], run_id="base")
    new = [("edge/tail", t, "bm25", 16, "hard_invariants", "tail_lost") for t in (2, 0)]
    new.append(("edge/tail", 1, "bm25", "scenario", "expectations", "mode budget"))
    cur = with_failures(clean, [ANCHOR, *new], run_id="cur")
    code, out, _ = run_gate(tmp_path, capsys, base, cur, "--gates", str(gates_file(tmp_path / "g")))
    assert code == 1
    assert said(out) == [
        "new failure: bm25 @ scenario: expectations missed in edge/tail turn 1 "
        "(not failing in the baseline): mode budget",
        "new failure: bm25 @ 16: tail_lost in edge/tail turns 0, 2 (not failing in the baseline)",
        "still failing: 1 cell as in the baseline (--verbose lists them)",
    ]
    assert re.search(
        r"^gate: FAILED: 3 new failing cells \(of \d+ checks\); "
        r"1 cell still failing as in the baseline$",
        out,
        re.M,
    )
    _, verbose, _ = run_gate(
        tmp_path, capsys, base, cur, "--gates", str(tmp_path / "g"), "--verbose"
    )
    row = r"^bm25 +16 +hard_invariants +0 +2 \(tail_lost=2\) +– +no_new +NEW FAILURE$"
    assert re.search(row, verbose, re.M)


def test_another_class_in_a_cell_is_new_and_another_invariant_is_said(
    clean: Summary, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crashed = ("edge/anchored", 0, "chronological", "scenario", "cell_failures", "CRASH")
    tail = ("edge/other", 3, "bm25", 16, "hard_invariants", "tail_lost")
    base = with_failures(clean, [ANCHOR, MISSED, tail], run_id="base")  # MISSED: not fixed
    cur = with_failures(clean, [crashed, (*tail[:-1], "budget_violations")], run_id="cur")
    gates = str(gates_file(tmp_path / "g"))
    code, out, _ = run_gate(tmp_path, capsys, base, cur, "--gates", gates)
    assert code == 1
    assert said(out) == [  # another invariant in a cell is listed, even without --verbose
        "new failure: chronological @ scenario: CRASH in edge/anchored turn 0 "
        "(not failing in the baseline)",
        "still failing: bm25 @ 16: budget_violations in edge/other turn 3 "
        "(failing in the baseline too, as tail_lost)",
    ]
    lost = ("edge/more", 2, "bm25", 16, "hard_invariants", "tail_lost")
    base = with_failures(clean, [ANCHOR, MISSED, tail, lost], run_id="base")
    cur = with_failures(clean, [crashed, (*tail[:-1], "budget_violations"), lost], run_id="cur")
    _, out, _ = run_gate(tmp_path, capsys, base, cur, "--gates", gates)
    assert said(out)[-1] == "still failing: 1 more cell as in the baseline (--verbose lists them)"


def test_a_fixed_cell_is_reported_and_never_fails(
    clean: Summary, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = with_failures(clean, [ANCHOR, MISSED], run_id="base")
    cur = with_failures(clean, [MISSED], run_id="cur")
    for hard in ("no_new", "0"):
        gates = gates_file(tmp_path / "g", hard, "no_new")
        code, out, _ = run_gate(tmp_path, capsys, base, cur, "--gates", str(gates))
        assert code == 0, out
        assert said(out) == [
            "still failing: 1 cell as in the baseline (--verbose lists them)",
            "fixed: chronological @ scenario: anchors_lost in edge/anchored turn 0 "
            "(in the baseline, not now)",
        ]
        assert out.rstrip().endswith(
            "no regressions; 1 cell still failing as in the baseline, 1 cell fixed"
        )


# ---------------------------------------------------------------- known failures


KNOWN = """known_failures:
  - scenario: anch*
    class: hard_invariants
    reason: anchors are not kept yet
  - scenario: edge/gone
    label: bm25
    reason: flaky  upstream
"""


def test_known_failures_excuse_cells_under_either_rule_and_stale_ones_are_reported(
    clean: Summary, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = with_failures(clean, [], run_id="base")
    cur = with_failures(clean, [ANCHOR, MISSED], run_id="cur")
    for hard, exp in (("0", "all"), ("no_new", "no_new")):
        gates = gates_file(tmp_path / "gates.yaml", hard, exp, KNOWN.replace("anch*", "anchored"))
        code, out, _ = run_gate(tmp_path, capsys, base, cur, "--gates", str(gates))
        assert code == 1, out  # the missed expectation is not excused
        assert said(out)[-2:] == [
            "known: chronological @ scenario: anchors_lost in edge/anchored turn 0 "
            "(anchors are not kept yet)",
            "stale known failure: edge/gone (label bm25) now passes; remove it from "
            f"{gates} line 9",
        ]
        assert out.rstrip().endswith("; 1 known failing cell, 1 stale known failure")
    assert said(out)[0].startswith("new failure: chronological @ scenario: expectations missed")
    every_class = KNOWN.replace("anch*", "edge*").replace("class: hard_inv", "#")
    gates = gates_file(tmp_path / "gates.yaml", "0", "all", every_class)
    code, out, _ = run_gate(tmp_path, capsys, base, cur, "--gates", str(gates))
    assert code == 1, out  # without a "/", "edge*" is matched against the id "anchored"
    gates.write_text(gates.read_text().replace("edge*", "edge/*"))
    code, out, _ = run_gate(tmp_path, capsys, base, cur, "--gates", str(gates))
    assert code == 0, out
    assert [line.split(" in ")[0] for line in said(out)] == [
        "known: chronological @ scenario: anchors_lost",
        "known: chronological @ scenario: expectations missed",
        f"stale known failure: edge/gone (label bm25) now passes; remove it from {gates} line 9",
    ]


def test_an_absolute_rule_names_the_known_cells_it_excused(
    clean: Summary, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = ("edge/other", 1, "chronological", "scenario", "hard_invariants", "tail_lost")
    cur = with_failures(clean, [ANCHOR, other], run_id="cur")
    gates = gates_file(tmp_path / "g.yaml", "0", "all", KNOWN)
    code, out, _ = run_gate(tmp_path, capsys, with_failures(clean, []), cur, "--gates", str(gates))
    assert code == 1
    assert said(out)[0] == (
        "rule failed: chronological @ scenario: hard invariants 2 (anchors_lost=1, tail_lost=1), "
        "must be 0 apart from 1 known failing cell"
    )


@pytest.mark.parametrize(
    ("entry", "cell", "matches"),
    [
        (KnownFailure("anchored", "r"), FailingCell("edge/anchored", 0, "a", "16", "x"), True),
        (KnownFailure("edge/*", "r"), FailingCell("edge/anchored", 0, "a", "16", "x"), True),
        (KnownFailure("edge", "r"), FailingCell("edge/anchored", 0, "a", "16", "x"), False),
        (KnownFailure("*/anch?red", "r"), FailingCell("s/t/anchored", 0, "a", "16", "x"), True),
        (KnownFailure("*", "r", label="a"), FailingCell("e/s", 0, "b", "16", "x"), False),
        (KnownFailure("*", "r", budget="16"), FailingCell("e/s", 0, "a", "16", "x"), True),
        (KnownFailure("*", "r", budget="16"), FailingCell("e/s", 0, "a", "scenario", "x"), False),
        (KnownFailure("*", "r", turn=2), FailingCell("e/s", 1, "a", "16", "x"), False),
        (KnownFailure("*", "r", klass="x"), FailingCell("e/s", 1, "a", "16", "x"), True),
    ],
)
def test_a_known_failure_matches_by_pattern_and_narrows_by_each_key(
    entry: KnownFailure, cell: FailingCell, matches: bool
) -> None:
    assert entry.matches(cell) is matches


REASON = "line 7 /known_failures/0/reason: schema violation: a known failure needs its reason"
BAD_KNOWN = {
    "unknown-key": (
        "reason: flaky",
        "reason: flaky\n    owner: me",
        "line 6 /known_failures/0: schema violation: Additional properties are not allowed "
        "('owner' was unexpected)",
    ),
    "empty-reason": (
        "reason: flaky",
        "reason: ''",
        f'{REASON} (expected why the failure is accepted, found "")',
    ),
    "blank-reason": ("reason: flaky", "reason: '  '", REASON),
    "no-reason": (
        "    reason: flaky\n",
        "",
        "line 6 /known_failures/0: schema violation: 'reason' is a required property",
    ),
    "turn-text": (
        "reason: flaky",
        "reason: flaky\n    turn: first",
        "line 8 /known_failures/0/turn: schema violation: 'first' is not of type 'integer'",
    ),
    "budget-0": (
        "reason: flaky",
        "reason: flaky\n    budget: 0",
        "line 8 /known_failures/0/budget",
    ),
    "bad-class": (
        "reason: flaky",
        "reason: flaky\n    class: slow",
        "line 8 /known_failures/0/class: schema violation: 'slow' is not one of",
    ),
    "not-a-list": (
        "known_failures:\n  - scenario: x\n    reason: flaky\n",
        "known_failures: x\n",
        "line 5 /known_failures: schema violation: 'x' is not of type 'array'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_KNOWN))
def test_a_bad_known_failure_is_one_line_and_exit_2(
    case: str, clean: Summary, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new, where = BAD_KNOWN[case]
    good = "known_failures:\n  - scenario: x\n    reason: flaky\n"
    gates = gates_file(tmp_path / "gates.yaml", extra=good.replace(old, new))
    code, out, err = run_gate(tmp_path, capsys, clean, clean, "--gates", str(gates))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith(f"packproof: error: {gates}: line ")
    assert where in err


# ---------------------------------------------------------------- bad summaries


def test_a_baseline_that_does_not_list_its_failing_cells_is_one_line_under_no_new(
    clean: Summary, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = with_failures(clean, [ANCHOR], run_id="base")
    del base["failures"]["scenarios"]
    cur = with_failures(clean, [ANCHOR], run_id="cur")
    gates = gates_file(tmp_path / "g.yaml")
    code, out, err = run_gate(tmp_path, capsys, base, cur, "--gates", str(gates))
    assert (code, out) == (2, "")
    assert err == (
        f"packproof: error: {tmp_path / 'baseline.json'}: /failures/scenarios: the baseline "
        "summary counts failing cells but does not list them, and hard_invariants: no_new and "
        "expectations: no_new compare failing cells one by one; re-write the baseline with "
        '`packproof baseline` (expected a list of failing cells, found "nothing")\n'
    )
    absolute = gates_file(tmp_path / "a.yaml", "0", "all")
    assert run_gate(tmp_path, capsys, base, cur, "--gates", str(absolute))[0] == 1  # the counts
    clean_base = with_failures(clean, [], run_id="base")
    del clean_base["failures"]["scenarios"]  # a baseline with no failure lists none to compare
    assert run_gate(tmp_path, capsys, clean_base, clean, "--gates", str(gates))[0] == 0


def test_failing_cells_that_disagree_with_the_group_counts_are_one_line(
    clean: Summary, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cur = with_failures(clean, [ANCHOR], run_id="cur")
    cur["failures"]["scenarios"] = []
    code, out, err = run_gate(
        tmp_path, capsys, clean, cur, "--gates", str(gates_file(tmp_path / "g"))
    )
    assert (code, out) == (2, "")
    assert err == (
        f"packproof: error: {tmp_path / 'current.json'}: /failures/scenarios: the failing cells "
        "listed disagree with the group counts: group chronological @ scenario counts failing "
        'hard invariants (expected the same failing groups in both, found "chronological @ '
        'scenario")\n'
    )


# ---------------------------------------------------------------- one run, two sides


def test_one_run_on_both_sides_is_said_in_the_text_and_the_markdown(
    clean: Summary, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(clean), "utf-8")
    md = tmp_path / "gate.md"
    run_id = clean["manifest"]["run_id"]
    capsys.readouterr()
    assert (
        main(["gate", "--baseline", str(path), "--current", str(path), "--markdown", str(md)]) == 0
    )
    note = (
        f"note: the baseline and the current run are the same run ({run_id}, one file): "
        "the run is compared with itself, so nothing can have changed"
    )
    assert capsys.readouterr().out.splitlines()[3] == note
    assert f"> **Note:** {note.removeprefix('note: ')}" in md.read_text("utf-8")
    code, out, _ = run_gate(tmp_path, capsys, clean, clean)  # two files, one run id
    assert code == 0
    assert out.splitlines()[3] == (
        f"note: the baseline and the current run are the same run ({run_id}): its inputs "
        "(the run id hashes them) are unchanged since the baseline was taken"
    )
    _, out, _ = run_gate(tmp_path, capsys, clean, with_failures(clean, [], run_id="other"))
    assert "same run" not in out


# ---------------------------------------------------------------- Markdown and long lists


def test_the_markdown_leads_with_the_verdict_then_the_failing_cells_new_first(
    clean: Summary, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = with_failures(clean, [ANCHOR, MISSED], run_id="base")
    crashed = ("edge/tail", 4, "bm25", 16, "cell_failures", "TIMEOUT")
    cur = with_failures(clean, [ANCHOR, crashed], run_id="cur")
    md = tmp_path / "gate.md"
    gates = gates_file(tmp_path / "g")
    assert (
        run_gate(tmp_path, capsys, base, cur, "--gates", str(gates), "--markdown", str(md))[0] == 1
    )
    lines = md.read_text("utf-8").splitlines()
    assert lines[:6] == [
        "## ❌ packproof gate: FAILED",
        "",
        "|  | class | strategy | budget | scenario | turns | failed | why |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        "| **new failure** | packer failures | `bm25` | 16 | `edge/tail` | 4 | TIMEOUT "
        "| not failing in the baseline |",
        "| still failing | hard invariants | `chronological` | scenario | `edge/anchored` | 0 "
        "| anchors_lost | failing in the baseline too |",
    ]
    assert lines[7].startswith("1 new failing cell (of ")
    assert lines[7].endswith("; 1 cell still failing as in the baseline, 1 cell fixed.")
    fixed = lines.index("Fixed since the baseline:")
    assert lines[fixed + 2] == (
        "- chronological @ scenario: expectations missed in edge/anchored turn 0 "
        "(in the baseline, not now)"
    )
    gates = gates_file(tmp_path / "g")
    run_gate(tmp_path, capsys, base, base, "--gates", str(gates), "--markdown", str(md))
    assert md.read_text("utf-8").startswith("## ✅ packproof gate: PASSED\n")


def test_long_lists_of_cells_are_cut_short_unless_verbose(
    clean: Summary, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    many = [(f"edge/s{i:02}", 0, "bm25", 16, "hard_invariants", "tail_lost") for i in range(23)]
    cur = with_failures(clean, many, run_id="cur")
    gates = str(gates_file(tmp_path / "g"))
    code, out, _ = run_gate(tmp_path, capsys, clean, cur, "--gates", gates)
    assert code == 1
    assert len(said(out)) == 21
    assert said(out)[-1] == "new failure: ... and 3 more (--verbose shows all)"
    # 4 groups x (mrr, hard invariants), 2 x expectations, the run's expectation failures
    assert out.rstrip().endswith("gate: FAILED: 23 new failing cells (of 11 checks)")
    _, out, _ = run_gate(tmp_path, capsys, clean, cur, "--gates", gates, "--verbose")
    assert sum(line.startswith("new failure: bm25 @ 16") for line in out.splitlines()) == 23
    more = [(f"edge/t{i:02}", 1, "bm25", 16, "hard_invariants", "tail_lost") for i in range(30)]
    md = tmp_path / "gate.md"
    run_gate(tmp_path, capsys, clean, with_failures(clean, [*many, *more]), "--markdown", str(md))
    text = md.read_text("utf-8")
    assert text.count("| **new failure** |") == 50  # of 53, one per scenario
    assert "\n... and 3 more: run `packproof gate`\n" in text


def test_a_cell_listed_for_one_rule_is_not_counted_again_for_the_other(
    clean: Summary, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cell broke another invariant than in the baseline (listed) and still
    misses its expectation (counted): one cell, named once, counted once."""
    other = (*ANCHOR[:5], "budget_violations")
    base = with_failures(clean, [ANCHOR, MISSED], run_id="base")
    cur = with_failures(clean, [other, MISSED], run_id="cur")
    gates = gates_file(tmp_path / "ratchet.yaml")
    code, out, _ = run_gate(tmp_path, capsys, base, cur, "--gates", str(gates))
    assert code == 0
    assert said(out) == [
        "still failing: chronological @ scenario: budget_violations in edge/anchored turn 0 "
        "(failing in the baseline too, as anchors_lost)"
    ]
    assert out.rstrip().endswith("no regressions; 1 cell still failing as in the baseline")
