"""The gate's result in words, for a terminal (:func:`render_text`) and shared
with the Markdown renderer: one line per problem, naming strategies by label,
one line per scenario's failing cells judged one by one (new, known, still
failing, fixed) and per stale known failure, then a verdict line that counts
each kind.

    new failure: newest @ scenario: tail_lost in edge/one turns 0, 2 (not failing in the baseline)
    rule failed: bm25 @ 16: hard invariants 2 (budget_violations=2), must be 0
    regressed: bm25 @ 16: evidence_recall 0.8120 -> 0.7710 (-0.0410, allowed -0.02)
    missing: hybrid @ 32: in the baseline, not in the current run
    fixed: newest @ scenario: anchors_lost in edge/two turn 0 (in the baseline, not now)
    gate: FAILED: 2 new failing cells, 1 rule failed, 1 metric regressed, 1 missing (of 96
    checks); 1 cell fixed
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from packproof.evals.gate.checks import (
    FAILED,
    MISSING,
    NOT_SIGNIFICANT,
    REGRESSED,
    Check,
    GateResult,
    signed,
)
from packproof.evals.gate.known import KnownFailure
from packproof.evals.gate.ratchet import FAILING_NOW, FIXED, KNOWN, NEW_FAILURE, STILL, CellGroup

__all__ = [
    "KINDS",
    "cell_line",
    "cell_said",
    "describe",
    "problem_line",
    "problems",
    "render_text",
    "significance_text",
    "stale_line",
    "table",
    "verdict_line",
    "where",
]

# Each kind of problem, in the order the output lists them, with its line prefix.
KINDS: Final = {
    FAILED: "rule failed",
    REGRESSED: "regressed",
    MISSING: "missing",
    NOT_SIGNIFICANT: "not significant",
}
_COLUMNS: Final = ("strategy", "budget", "metric", "baseline", "current", "change", "allowed")
# What each status of a judged cell says of the baseline (``known``: the reason).
_SAID: Final = {
    NEW_FAILURE: "not failing in the baseline",
    STILL: "failing in the baseline too",
    FIXED: "in the baseline, not now",
    FAILING_NOW: "the rule allows none",
}
_MAX_LINES: Final = 20  # per kind of cell line, unless --verbose


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def where(check: Check) -> str:
    """``label @ budget``, or nothing for a check of the whole run."""
    return "" if check.strategy == "*" else f"{check.strategy} @ {check.budget}"


def significance_text(check: Check, alpha: float | None, confidence: float | None) -> str:
    """What the paired test said, or why there was none: ``p = 0.012, 95% CI
    [-0.061, -0.021] over 12 scenarios``."""
    t = check.test
    if t is None:
        return check.untested
    level = "" if confidence is None else f"{confidence * 100:g}% "
    versus = "" if alpha is None else (" < " if t["p_value"] < alpha else " >= ") + f"{alpha:g}"
    said = (
        f"p = {t['p_value']:.3g}{versus}, {level}CI [{signed(t['low'])}, {signed(t['high'])}] "
        f"over {t.get('clusters', '?')} scenarios"
    )
    if check.verdict == NOT_SIGNIFICANT and alpha is not None and t["p_value"] < alpha:
        said += ", but the paired cells moved the other way"  # cells only one run has moved it
    return said


def describe(check: Check, alpha: float | None = None, confidence: float | None = None) -> str:
    """One check in words, without its kind: what was found against what was allowed."""
    at = where(check)
    known = ""
    if check.known:
        known = f" apart from {_count(check.known, 'known failing cell', 'known failing cells')}"
    if check.metric == "hard_invariants":
        return f"{at}: hard invariants {check.current}, must be 0{known}"
    if check.metric == "expectations":
        before = "" if check.baseline is None else f" (baseline {check.baseline})"
        return f"{at}: expectations {check.current} passed{before}, must be all{known}"
    if check.metric == "expectation_failures":
        return f"expectation failures: {check.current} (baseline {check.baseline}), must be none"
    if check.metric == "*":
        return f"{at}: in the baseline, not in the current run"
    cells = check.cells()
    if check.change is None:
        return f"{at}: {check.metric} {cells[3]} -> no value in the current run"
    said = f"{cells[5]}, allowed {cells[6]}"
    tested = significance_text(check, alpha, confidence)
    if tested:
        said += f"; {tested}"
    return f"{at}: {check.metric} {cells[3]} -> {cells[4]} ({said})"


def problem_line(check: Check, alpha: float | None, confidence: float | None) -> str:
    return f"{KINDS[check.verdict]}: {describe(check, alpha, confidence)}"


def cell_line(group: CellGroup) -> str:
    """One scenario's failing cells of one status, class, label and budget:
    ``new failure: newest @ scenario: anchors_lost in suite/id turn 0 (not
    failing in the baseline)``, a known failure's reason in the brackets, the
    missed expectations after a colon."""
    turns = ("turn " if len(group.turns) == 1 else "turns ") + ", ".join(map(str, group.turns))
    said, why = cell_said(group)
    at = f"{group.label} @ {group.budget}: {group.what} in {group.scenario} {turns}"
    return f"{group.status}: {at} ({said})" + (f": {why}" if why else "")


def cell_said(group: CellGroup) -> tuple[str, str]:
    """(what the baseline says of the cells, or the known failure's reason;
    the expectations they missed, for new failures and under an absolute rule)."""
    if group.status == KNOWN:
        return group.why, ""
    if group.status == STILL:  # known from the baseline: what it missed there is no news
        return _SAID[STILL] + (f", as {group.before}" if group.before else ""), ""
    return _SAID[group.status], "" if group.status == FIXED else group.why


def stale_line(entry: KnownFailure) -> str:
    return f"stale known failure: {entry.describe()} now passes; remove it from {entry.where}"


def _cell_lines(result: GateResult, statuses: Sequence[str], verbose: bool) -> list[str]:
    """The cell lines of ``statuses``, at most :data:`_MAX_LINES` of each unless ``verbose``."""
    out = []
    for status in statuses:
        shown = [cell_line(g) for g in result.cells.groups if g.status == status]
        if len(shown) > _MAX_LINES and not verbose:
            extra = len(shown) - _MAX_LINES
            shown = [*shown[:_MAX_LINES], f"{status}: ... and {extra} more (--verbose shows all)"]
        out += shown
    return out


def problems(result: GateResult) -> list[Check]:
    """The checks to show by default: every problem, grouped by kind."""
    return [c for kind in KINDS for c in result.of(kind)]


def _tail(result: GateResult) -> str:
    """What passed the gate but is worth a look: cells still failing, known,
    fixed; stale known failures; moves the paired test called noise."""
    cells = result.cells
    said = [
        _count(cells.count(STILL), "cell", "cells") + " still failing as in the baseline",
        _count(cells.count(KNOWN), "known failing cell", "known failing cells"),
        _count(cells.count(FIXED), "cell", "cells") + " fixed",
        _count(len(cells.stale), "stale known failure", "stale known failures"),
    ]
    worth = [p for p in said if not p.startswith("0 ")]
    tail = "; " + ", ".join(worth) if worth else ""
    quiet = len(result.of(NOT_SIGNIFICANT))
    if quiet:
        tail += f"; {_count(quiet, 'move', 'moves')} beyond the allowance not significant"
        tail += "" if result.alpha is None else f" (p >= {result.alpha:g})"
    return tail


def verdict_line(result: GateResult) -> str:
    """``gate: passed: ...`` or ``gate: FAILED: ...``, counting each kind."""
    n = len(result.checks)
    tail = _tail(result)
    if result.passed:
        return f"gate: passed: {n} checks, no regressions{tail}"
    parts = [
        _count(result.cells.count(NEW_FAILURE), "new failing cell", "new failing cells"),
        _count(len(result.of(FAILED)), "rule failed", "rules failed"),
        _count(len(result.of(REGRESSED)), "metric regressed", "metrics regressed"),
        f"{len(result.of(MISSING))} missing",
    ]
    said = ", ".join(p for p in parts if not p.startswith("0 "))
    return f"gate: FAILED: {said} (of {n} checks){tail}"


def table(checks: Sequence[Check], with_p: bool = False) -> list[str]:
    """Checks as an aligned plain-text table with a header row."""
    head = (*_COLUMNS, *(("p",) if with_p else ()), "verdict")
    rows = [head]
    for c in checks:
        cells = c.cells()
        p = ("–" if c.test is None else f"{c.test['p_value']:.3g}",) if with_p else ()
        rows.append((*cells[:-1], *p, cells[-1]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    out = []
    for n, row in enumerate(rows):
        out.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def _cells(groups: Sequence[CellGroup]) -> set[tuple[str, int, str, str]]:
    """The distinct cells (scenario, turn, label, budget) of some groups."""
    return {(g.scenario, t, g.label, g.budget) for g in groups for t in g.turns}


def render_text(result: GateResult, verbose: bool = False) -> str:
    """The header and notes; with ``verbose``, the table of every check; then one
    line per problem (failing expectations under their rule), per scenario's
    new, known and fixed failing cells (still failing ones counted, listed with
    ``verbose``) and per stale known failure; then the verdict."""
    lines = [*result.header, *(f"note: {n}" for n in result.notes), ""]
    if verbose:
        lines += [*table(result.checks, with_p=result.alpha is not None), ""]
    said = _cell_lines(result, [NEW_FAILURE], verbose)
    for check in problems(result):
        said.append(problem_line(check, result.alpha, result.confidence))
        if check.metric == "expectation_failures":
            said += [f"  {f}" for f in result.failures]
    said += _cell_lines(result, [KNOWN], verbose)
    # failing as in the baseline is no news: counted, listed with --verbose; failing
    # the same class another way (another invariant broken) is listed
    still = [g for g in result.cells.groups if g.status == STILL]
    shown = [g for g in still if verbose or g.before]
    said += [cell_line(g) for g in shown]
    # a cell failing both rules is in two groups: counted once, and not again
    # when one of its groups is listed above
    quiet = len(_cells([g for g in still if g not in shown]) - _cells(shown))
    if quiet:
        noun = ("more cell", "more cells") if any(g.before for g in still) else ("cell", "cells")
        many = _count(quiet, *noun)
        said.append(f"still failing: {many} as in the baseline (--verbose lists them)")
    said += _cell_lines(result, [FIXED], verbose)
    said += [stale_line(entry) for entry in result.cells.stale]
    if said:
        lines += [*said, ""]
    lines.append(verdict_line(result))
    return "\n".join(lines) + "\n"
