"""The gate's result as Markdown, for a pull-request comment or a GitHub job
summary: a heading with the verdict (✅ PASSED or ❌ FAILED), at once the failing
cells by status and class with their scenarios (new failures first), the verdict
in words and the notes, a table of the problems (failed rules, regressed,
missing and not significant metrics, strategies by label), the failing
expectations, the fixed cells and stale known failures, the header, and every
check in a collapsed ``<details>``. A pull-request comment is built from the
contributor's own scenarios and summaries: every label, scenario, reason and note
goes through md.py (a code span or literal text), never in as Markdown.

``--markdown FILE`` replaces FILE atomically; ``$GITHUB_STEP_SUMMARY`` is
appended to, as GitHub documents for job summaries ("Adding a job summary":
each step appends its Markdown to the file the variable names).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from packproof.evals.gate.checks import Check, GateResult
from packproof.evals.gate.known import CLASS_WORDS
from packproof.evals.gate.ratchet import FAILING_NOW, FIXED, NEW_FAILURE, STATUSES, CellGroup
from packproof.evals.gate.text import (
    KINDS,
    cell_line,
    cell_said,
    problems,
    significance_text,
    stale_line,
    verdict_line,
)
from packproof.evals.report import md
from packproof.packer.files import Inputs, append_file

__all__ = ["MAX_CHARS", "append_step_summary", "render_markdown"]

_HEAD = ("strategy", "budget", "check", "baseline", "current", "change", "allowed")
# GitHub refuses a pull-request comment over 65,536 characters (a job summary may
# hold 1 MiB): the table of every check is cut short to stay under it.
MAX_CHARS = 60_000
_MAX_CELL_ROWS = 50  # failing (and fixed) cells shown; the text output has them all
_CELL_HEAD = ("", "class", "strategy", "budget", "scenario", "turns", "failed", "why")


def _text(value: str) -> str:
    """Free text (a reason, a note, a line of the text output naming labels and
    scenarios): literal, on one line (md.py)."""
    return md.text(value)


def _code(value: str, in_table: bool = True) -> str:
    """A label, scenario or key as a code span (md.py), in a table cell by default."""
    return md.code(value, cell=in_table)


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _check_cells(check: Check) -> list[str]:
    shown = check.cells()
    strategy = "run" if check.strategy == "*" else _code(check.strategy)
    budget = "–" if check.budget == "*" else _text(check.budget)
    metric = "strategy present" if check.metric == "*" else _code(check.metric)
    return [strategy, budget, metric, *(_text(c) for c in shown[3:7])]


def _table(
    checks: Sequence[Check], head: Sequence[str], cells: Callable[[Check], list[str]]
) -> list[str]:
    return [_row(head), _row("---" for _ in head), *(_row(cells(c)) for c in checks)]


def _cell_rows(groups: Sequence[CellGroup]) -> list[str]:
    """The failing cells, by status (new failures first), then class."""
    failing = [g for g in groups if g.status != FIXED]
    if not failing:
        return []
    order = list(CLASS_WORDS)
    failing.sort(key=lambda g: (STATUSES.index(g.status), order.index(g.klass)))
    rows = [_row(_CELL_HEAD), _row("---" for _ in _CELL_HEAD)]
    for g in failing[:_MAX_CELL_ROWS]:
        said, missed = cell_said(g)
        why = f"{said}: {missed}" if missed else said
        status = f"**{g.status}**" if g.status in (NEW_FAILURE, FAILING_NOW) else g.status
        cells = [status, CLASS_WORDS[g.klass], _code(g.label), _text(g.budget)]
        cells += [_code(g.scenario), ", ".join(map(str, g.turns)), _text(g.what), _text(why)]
        rows.append(_row(cells))
    if len(failing) > _MAX_CELL_ROWS:
        rows += ["", f"... and {len(failing) - _MAX_CELL_ROWS} more: run `packproof gate`"]
    return [*rows, ""]


def render_markdown(result: GateResult) -> str:
    """The whole result as Markdown (ends with a newline)."""
    mark, word = ("✅", "PASSED") if result.passed else ("❌", "FAILED")
    said = verdict_line(result).split(": ", 2)[-1]
    lines = [f"## {mark} packproof gate: {word}", "", *_cell_rows(result.cells.groups)]
    lines += [_text(said[0].upper() + said[1:]) + ".", ""]
    for note in result.notes:  # a blank line apart, or they merge into one quote
        lines += [f"> **Note:** {_text(note)}", ""]
    shown = problems(result)
    if shown:
        with_p = result.alpha is not None
        columns = ["", *_HEAD, *(["significance"] if with_p else [])]

        def problem(c: Check) -> list[str]:
            test = significance_text(c, result.alpha, result.confidence) if with_p else ""
            return [
                f"**{KINDS[c.verdict]}**",
                *_check_cells(c),
                *([_text(test) or "–"] if with_p else []),
            ]

        lines += [*_table(shown, columns, problem), ""]
    if result.failures:
        lines += ["Failing expectations:", ""]
        for f in result.failures:
            key, sep, why = f.partition(": ")
            lines.append(f"- {_code(key, in_table=False)}{': ' + _text(why) if sep else ''}")
        lines.append("")
    fixed = [g for g in result.cells.groups if g.status == FIXED]
    if fixed:
        lines += ["Fixed since the baseline:", ""]
        lines += [
            f"- {_text(cell_line(g).removeprefix('fixed: '))}" for g in fixed[:_MAX_CELL_ROWS]
        ]
        if len(fixed) > _MAX_CELL_ROWS:
            lines.append(f"- ... and {len(fixed) - _MAX_CELL_ROWS} more: run `packproof gate`")
        lines.append("")
    for entry in result.cells.stale:
        said = stale_line(entry).removeprefix("stale known failure: ")
        lines += [f"> **Stale known failure:** {_text(said)}", ""]
    lines += [f"- {_text(h)}" for h in result.header]
    head = "\n".join(lines) + "\n\n"
    return head + "\n".join(_details(result, MAX_CHARS - len(head))) + "\n"


def _details(result: GateResult, room: int) -> list[str]:
    """Every check in a collapsed table, cut short to fit in ``room`` characters."""
    rows = _table(result.checks, [*_HEAD, "verdict"], lambda c: [*_check_cells(c), c.verdict])
    end = ["", "</details>"]
    used = 200 + sum(len(r) + 1 for r in rows[:2])  # the <details> lines and a "more" line
    shown = 2
    while shown < len(rows) and used + len(rows[shown]) + 1 <= room:
        used += len(rows[shown]) + 1
        shown += 1
    if shown < len(rows):
        end = ["", f"... and {len(rows) - shown} more checks: run `packproof gate --verbose`", *end]
    summary = f"<details><summary>Every check ({len(result.checks)})</summary>"
    return [summary, "", *rows[:shown], *end]


def append_step_summary(path: Path, text: str, *, inputs: Inputs = ()) -> None:
    """Append ``text`` to a GitHub job summary file in one write (a blank line
    first when the file already holds another step's summary), never to one of
    ``inputs`` (the files the gate read); the file is made, not its folder."""
    append_file(path, text, separator="\n", inputs=inputs, name=f"GITHUB_STEP_SUMMARY={path}")
