"""The gate's result in words, for a terminal (:func:`render_text`) and shared
with the Markdown renderer: one line per problem, naming strategies by label,
then a verdict line that counts each kind.

    rule failed: bm25 @ 16: hard invariants 2 (budget_violations=2), must be 0
    regressed: bm25 @ 16: evidence_recall 0.8120 -> 0.7710 (-0.0410, allowed -0.02)
    missing: hybrid @ 32: in the baseline, not in the current run
    gate: FAILED: 1 rule failed, 1 metric regressed, 1 missing (of 96 checks)
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

__all__ = [
    "KINDS",
    "describe",
    "problem_line",
    "problems",
    "render_text",
    "significance_text",
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
    if check.metric == "hard_invariants":
        return f"{at}: hard invariants {check.current}, must be 0"
    if check.metric == "expectations":
        before = "" if check.baseline is None else f" (baseline {check.baseline})"
        return f"{at}: expectations {check.current} passed{before}, must be all"
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


def problems(result: GateResult) -> list[Check]:
    """The checks to show by default: every problem, grouped by kind."""
    return [c for kind in KINDS for c in result.of(kind)]


def verdict_line(result: GateResult) -> str:
    """``gate: passed: ...`` or ``gate: FAILED: ...``, counting each kind."""
    n = len(result.checks)
    quiet = len(result.of(NOT_SIGNIFICANT))
    tail = ""
    if quiet:
        tail = f"; {_count(quiet, 'move', 'moves')} beyond the allowance not significant"
        tail += "" if result.alpha is None else f" (p >= {result.alpha:g})"
    if result.passed:
        return f"gate: passed: {n} checks, no regressions{tail}"
    parts = [
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


def render_text(result: GateResult, verbose: bool = False) -> str:
    """The header and notes; with ``verbose``, the table of every check; then one
    line per problem (failing expectations under their rule) and the verdict."""
    lines = [*result.header, *(f"note: {n}" for n in result.notes), ""]
    if verbose:
        lines += [*table(result.checks, with_p=result.alpha is not None), ""]
    shown = problems(result)
    for check in shown:
        lines.append(problem_line(check, result.alpha, result.confidence))
        if check.metric == "expectation_failures":
            lines += [f"  {f}" for f in result.failures]
    if shown:
        lines.append("")
    lines.append(verdict_line(result))
    return "\n".join(lines) + "\n"
