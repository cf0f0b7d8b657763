"""What summary.md and report.html say first: PASSED or FAILED, and where.

A run passed when no cell failed: the count of failures.py, which is also the
exit code of ``packproof eval`` and junit.xml's failures, so the reports and
the command always agree. A failed run names its failing cells by class
(:func:`~packproof.evals.report.failures.describe`), then per class the first
places that failed: scenario, turns, strategy and budget, from
``summary["failures"]["scenarios"]``. Turns are numbered from 0, as in the
cell keys (``scenario#turn|spec|budget``).

Format-free, like text.py: scenario ids and strategy labels go through the
renderer's ``code`` function (a code span of md.py, or escaped HTML) and the
rest of every line is plain text with no markup character.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from packproof.evals.report.failures import CLASSES, by_scenario, describe

__all__ = [
    "CLASS_NAMES",
    "SHOWN",
    "STRATEGIES_SHOWN",
    "TURNS_LISTED",
    "TURNS_SHOWN",
    "budget_name",
    "failing",
    "headline",
    "place",
    "turn_numbers",
    "turns_text",
    "where",
    "word",
]

# How each failure class is named where a place is listed.
CLASS_NAMES: Final = {
    "expectations": "missed expectations",
    "hard_invariants": "broke hard invariants",
    "cell_failures": "packer failed",
}
SHOWN: Final = 3  # scenarios named per class at the top; the Failures section has all
STRATEGIES_SHOWN: Final = 3  # strategies (and budgets) named per failing scenario there
TURNS_SHOWN: Final = 6  # turns named per place at the top (a conversation can fail in many)
TURNS_LISTED: Final = 30  # turns named per place in the Failures section

Code = Callable[[str], str]


def failing(summary: Mapping[str, Any]) -> int:
    """The run's failing cells (a summary written before failures were
    counted: its failed expectations)."""
    tally = summary.get("failures")
    return int(tally["cells"]) if tally else len(summary.get("expectation_failures", []))


def word(summary: Mapping[str, Any]) -> str:
    """``PASSED`` or ``FAILED``."""
    return "FAILED" if failing(summary) else "PASSED"


def headline(summary: Mapping[str, Any]) -> str:
    """What follows the word: ``3 failing cells: 2 missed expectations; 1 broke
    hard invariants (anchors_lost 1)``, or why the run passed."""
    tally = summary.get("failures")
    if tally and tally["cells"]:
        return describe(tally)
    if not tally and failing(summary):
        return f"{failing(summary)} failed expectations"
    judged = sum(g["expectations"]["total"] for g in summary["groups"])
    if not judged:
        return "no cell failed or broke a hard invariant (none was judged against expectations)"
    return (
        f"all {judged} judged cells met their expectations, and no cell failed or "
        "broke a hard invariant"
    )


def budget_name(budget: str, code: Code) -> str:
    """``own budget`` (the scenario's) or ``budget 32``."""
    if budget == "scenario":
        return "own budget"
    return f"budget {budget}" if budget.isdigit() else f"budget {code(budget)}"


def turn_numbers(turns: Sequence[int], shown: int = TURNS_SHOWN) -> str:
    """``#0, #2``, or ``#0, #1, #2 and 7 more`` past ``shown`` turns."""
    named = ", ".join(f"#{t}" for t in turns[:shown])
    return named + (f" and {len(turns) - shown} more" if len(turns) > shown else "")


def turns_text(turns: Sequence[int], shown: int = TURNS_SHOWN) -> str:
    """``turn #3``, ``turns #0, #2``, or ``turns #0, #1, #2 and 7 more``."""
    return ("turn " if len(turns) == 1 else "turns ") + turn_numbers(turns, shown)


def place(entries: Sequence[Mapping[str, Any]], code: Code, scenario: Code | None = None) -> str:
    """One failing scenario's places (one class): ``<scenario> under <label>
    (turns #0, #2), <label> (turn #1), at own budget``, the first
    :data:`STRATEGIES_SHOWN`; the budget once when they share it, else with
    each. ``scenario`` formats the scenario (default ``code``: a renderer may
    link it)."""
    budgets = {e["budget"] for e in entries}
    shared = len(budgets) == 1
    named = [
        f"{code(e['label'])} ({turns_text(e['turns'])}"
        + ("" if shared else f" at {budget_name(e['budget'], code)}")
        + ")"
        for e in entries[:STRATEGIES_SHOWN]
    ]
    more = len(entries) - STRATEGIES_SHOWN
    text = f"{(scenario or code)(entries[0]['scenario'])} under " + ", ".join(named)
    text += f" and {more} more" if more > 0 else ""
    return text + (f", at {budget_name(entries[0]['budget'], code)}" if shared else "")


def where(
    summary: Mapping[str, Any],
    code: Code,
    scenario: Code | None = None,
    shown: int = SHOWN,
) -> list[str]:
    """Per failing class, in :data:`~packproof.evals.report.failures.CLASSES`
    order, one line naming its first ``shown`` scenarios (in the tally's sorted
    order): ``missed expectations in 3 scenarios: <place>; <place>; and 1
    more`` (see :func:`place`)."""
    tally = summary.get("failures") or {}
    lines = []
    for name in CLASSES:
        mine = {
            sc: kept
            for sc, places in by_scenario(tally).items()
            if (kept := [e for e in places if e["class"] == name])
        }
        if not mine:
            continue
        named = [place(places, code, scenario) for places in list(mine.values())[:shown]]
        if len(mine) > shown:
            named.append(f"and {len(mine) - shown} more")
        noun = "scenario" if len(mine) == 1 else "scenarios"
        lines.append(f"{CLASS_NAMES[name]} in {len(mine)} {noun}: " + "; ".join(named))
    return lines
