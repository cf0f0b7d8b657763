"""What failed in a run, counted once for every place that reports it: the
exit code of ``packproof eval``, the PASSED or FAILED that opens summary.md
and report.html (status.py) and their "Failures" sections, and the failed test
cases of junit.xml, so they always agree.

A cell fails when:

- its packer failed (``status`` is a failure class: ``TIMEOUT``, ``CRASH``, ...,
  docs/external-packers.md), at any budget;
- it broke a hard invariant (:data:`~packproof.evals.metrics.cell.HARD_INVARIANTS`:
  a pack that breaks one is wrong, not worse), at any budget;
- it was judged (the scenario's own budget) and missed an expectation.

Budget sweeps measure and are not judged against expectations, but a failed or
invariant-breaking cell fails wherever it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from packproof.evals.metrics.cell import HARD_INVARIANTS

__all__ = ["CLASSES", "by_scenario", "cell_problems", "describe", "tally"]

# The failure classes, in the order they are reported.
CLASSES: Final = ("expectations", "hard_invariants", "cell_failures")
# Cells failing on their own (a packer failure, a broken invariant) listed by
# key in the summary; the failed expectations are listed apart, all of them.
LISTED: Final = 200


def cell_problems(record: Mapping[str, Any]) -> dict[str, list[str]]:
    """Each failure class's lines for one cell (only the classes it failed)."""
    out: dict[str, list[str]] = {}
    status = record.get("status", "ok")
    if status != "ok":
        out["cell_failures"] = [f"{status}: {record.get('error', '')}"]
        return out
    metrics = record.get("metrics", {})
    broken = [f"{k} = {metrics[k]}" for k in HARD_INVARIANTS if metrics.get(k)]
    if broken:
        out["hard_invariants"] = [f"hard invariant {b}" for b in broken]
    if metrics.get("expectation_pass") == 0.0:
        out["expectations"] = [str(f) for f in record.get("failures") or []] or [
            "expectation failed"
        ]
    return out


def tally(
    records: Iterable[Mapping[str, Any]], labels: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The run's failures: ``cells`` (failing cells, junit.xml's ``failures``),
    and per class the cells that failed it; by name, each hard invariant's
    summed count (``invariants``) and each failure class's cells
    (``classes``); the first :data:`LISTED` cells that failed other than
    on expectations, with their lines (``listed``); and every failing cell,
    by scenario (``scenarios``, see :func:`by_scenario`), strategies named by
    ``labels`` (spec -> label; a spec without one is named by itself)."""
    cells = 0
    failing: dict[tuple[str, str, str, str], list[int]] = {}
    by_class = dict.fromkeys(CLASSES, 0)
    invariants: dict[str, int] = {}
    classes: dict[str, int] = {}
    listed: list[dict[str, Any]] = []
    for record in records:
        problems = cell_problems(record)
        if not problems:
            continue
        cells += 1
        others = [line for k, lines in problems.items() if k != "expectations" for line in lines]
        if others and len(listed) < LISTED:
            listed.append({"key": record["key"], "problems": others})
        for name in problems:
            by_class[name] += 1
            where = (
                f"{record['suite']}/{record['scenario']}",
                (labels or {}).get(record["spec"], record["spec"]),
                str(record["budget"]),
                name,
            )
            failing.setdefault(where, []).append(int(record["turn"]))
        if "hard_invariants" in problems:
            for k in HARD_INVARIANTS:
                if record["metrics"].get(k):
                    invariants[k] = invariants.get(k, 0) + int(record["metrics"][k])
        if "cell_failures" in problems:
            classes[record["status"]] = classes.get(record["status"], 0) + 1
    return {
        "cells": cells,
        **by_class,
        "invariants": dict(sorted(invariants.items())),
        "classes": dict(sorted(classes.items())),
        "listed": listed,
        "scenarios": [
            {"scenario": sc, "label": label, "budget": budget, "class": name, "turns": sorted(t)}
            for (sc, label, budget, name), t in sorted(failing.items())
        ],
    }


def by_scenario(failures: Mapping[str, Any]) -> dict[str, list[Mapping[str, Any]]]:
    """A :func:`tally`'s ``scenarios`` by scenario (``suite/id``): one entry per
    strategy label, budget and class with a failing cell, and its turns, in the
    tally's sorted order (empty for a summary written before they were listed)."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for entry in failures.get("scenarios", []):
        out.setdefault(entry["scenario"], []).append(entry)
    return out


def describe(failures: Mapping[str, Any]) -> str:
    """One line: ``3 failing cells: 2 missed expectations; 1 broke hard
    invariants (tail_lost 1)``, or ``no failures``."""
    if not failures["cells"]:
        return "no failures"
    parts = []
    if failures["expectations"]:
        parts.append(f"{failures['expectations']} missed expectations")
    if failures["hard_invariants"]:
        named = ", ".join(f"{k} {v}" for k, v in failures["invariants"].items())
        parts.append(f"{failures['hard_invariants']} broke hard invariants ({named})")
    if failures["cell_failures"]:
        named = ", ".join(f"{k} {v}" for k, v in failures["classes"].items())
        parts.append(f"{failures['cell_failures']} packer failures ({named})")
    noun = "failing cell" if failures["cells"] == 1 else "failing cells"
    return f"{failures['cells']} {noun}: " + "; ".join(parts)
