"""compare.md: a :class:`~packproof.evals.compare.model.Comparison` in Markdown, with
the verdict, rows and flip lines of text.py. What came from the runs goes through
md.py: labels, scenarios, run ids and paths as code spans, the rest as literal
text (two runs a contributor made can hold any string)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from packproof.evals.compare.text import (
    SAME_RUN,
    arrow,
    flip_lines,
    legend,
    row,
    scenario_heading,
    scenario_lines,
    verdict,
)
from packproof.evals.report import md
from packproof.evals.report.text import metric_name, plural

if TYPE_CHECKING:
    from packproof.evals.compare.model import Change, Comparison, Side

__all__ = ["markdown"]


def _cell(value: str) -> str:
    return md.code(value, cell=True)


def _md_table(rows: Sequence[Change]) -> list[str]:
    head = ["label", "budget", "A", "B", "B − A [interval]", "p", "cells", "scenarios", ""]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row(c, _cell, md.text)) + " |" for c in rows]
    return lines


def _provenance(cmp: Comparison) -> list[str]:
    lines = ["## Provenance", "", "| | A (reference) | B (candidate) |", "|---|---|---|"]

    def add(name: str, a: str, b: str) -> None:
        lines.append(f"| {name} | {a} | {b} |")

    a, b = cmp.a, cmp.b
    add("run", _cell(a.run_id), _cell(b.run_id))
    add("read from", _cell(a.path), _cell(b.path))
    config = [
        f"{_cell(str(s.config.get('file', '?')))} "
        f"(sha256 {md.text(str(s.config.get('sha256', ''))[:12])})"
        for s in (a, b)
    ]
    add("config", *config)
    add("git commit", *[_cell(s.git_commit[:12]) if s.git_commit else "–" for s in (a, b)])
    add("strategies", ", ".join(map(_cell, a.labels)), ", ".join(map(_cell, b.labels)))
    changed = set(cmp.changed_suites)

    def suites(side: Side, other: Side) -> str:
        return ", ".join(
            _cell(n)
            + (" (changed)" if n in changed else "" if n in other.suites else " (only here)")
            for n in sorted(side.suites)
        )

    add("suites", suites(a, b), suites(b, a))
    lines += [
        "",
        f"Statistics: {cmp.resamples} bootstrap resamples, {round(cmp.confidence * 100)}% "
        f"intervals, seed {cmp.seed} (run B's), alpha {cmp.alpha:g}.",
    ]
    return lines


def markdown(cmp: Comparison) -> str:
    """compare.md: the verdict first, then a table per metric (the main metric
    in full, the others without the groups whose paired cells are all equal;
    one line where every group's are), the flipped scenarios, then provenance."""
    title = f"# Compare: {md.code(cmp.a.run_id)} → {md.code(cmp.b.run_id)}"
    if cmp.same_run:
        title += f" ({SAME_RUN[cmp.same_run]} on both sides)"
    lines = [title, "", verdict(cmp, md.code, md.text), ""]
    lines += [legend(cmp), ""]
    for metric in cmp.metrics:
        here = [c for c in cmp.changes if c.metric == metric]
        rows = [c for c in here if c.verdict != "same"]
        if metric == cmp.main and rows:  # the main metric in full, unless all equal
            rows = here
        lines.append(f"## {md.text(metric_name(metric))}{arrow(here[0].better if here else 0)}")
        lines.append("")
        same = len(here) - len(rows)
        if rows:
            lines += [*_md_table(rows), ""]
        if not here:
            lines += ["No paired cells.", ""]
        elif not rows:
            lines += [f"Every paired cell equal in all {plural(same, 'group')}.", ""]
        elif same:
            lines += [f"Not shown: {plural(same, 'group')} with every paired cell equal.", ""]
    n = cmp.scenarios
    lines += [
        f"## Flipped scenarios: {n['pass_to_fail']} pass → fail, {n['fail_to_pass']} fail → pass",
        "",
        f"Of {n['compared']} scenario runs (strategy, budget, scenario) in both runs; "
        f"{n['failing_in_both']} failing in both. A scenario fails when one of its cells fails "
        "an expectation or did not run (`status` not `ok`).",
        "",
    ]
    if cmp.flips:
        lines += [*(f"- {line}" for line in flip_lines(cmp.flips, md.code, 200, md.text)), ""]
    lines += [f"## Scenarios: {scenario_heading(cmp)}", ""]
    if cmp.shared.differ:
        lines += [*(f"- {line}" for line in scenario_lines(cmp, md.code, 200)), ""]
    lines += [
        "A run has a scenario when it has a cell of it; the runs are compared on the cells "
        "both have. A scenario changed when both runs record its sha256 and they differ.",
        "",
    ]
    lines += _provenance(cmp)
    return "\n".join(lines).rstrip() + "\n"
