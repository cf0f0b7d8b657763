"""Which scenarios flipped between two runs, for ``packproof compare``.

Per (strategy label, budget), a scenario passes in a run when none of its
cells failed, and fails when one did: a judged cell whose ``expectation_pass``
is 0 (metrics.csv leaves it empty where nothing was judged), or a cell whose
``status`` is not ``ok`` (an external packer's ``TIMEOUT``, ``CRASH``, ...).
A scenario with no judged cell passes while all its cells ran. The reasons of
a failing cell are summary.json's ``expectation_failures`` lines, or its status.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import pandas as pd

    from packproof.evals.compare.pairs import Cells

__all__ = ["Flip", "find_flips"]


@dataclass(frozen=True)
class Flip:
    """A scenario that passed in one run and failed in the other, for one
    (label, budget); ``failures`` are the failing run's reasons, a line a cell."""

    label: str
    budget: str
    scenario: str  # suite/scenario
    before: Literal["pass", "fail"]
    after: Literal["pass", "fail"]
    failures: tuple[str, ...]
    changed: bool = False  # the scenario's content changed between the runs


def _failing(cells: Cells) -> tuple[pd.Series, dict[tuple[str, str, str], list[str]]]:
    """Per (label, budget, cluster): whether the scenario failed in this run,
    and the failing cells' reasons (one line a cell)."""
    f = cells.frame
    bad = f["status"] != "ok"
    if "expectation_pass" in f:
        bad = bad | (f["expectation_pass"] == 0)
    failed = bad.groupby([f["label"], f["budget"], f["cluster"]], sort=False).any()
    said = {e["key"]: e["failures"] for e in cells.summary.get("expectation_failures") or []}
    reasons: dict[tuple[str, str, str], list[str]] = {}
    for row in f[bad].itertuples(index=False):
        why = said.get(str(row.key)) or (
            [f"status {row.status}"] if row.status != "ok" else ["an expectation failed"]
        )
        where = (str(row.label), str(row.budget), str(row.cluster))
        reasons.setdefault(where, []).append(f"turn {row.turn}: {'; '.join(map(str, why))}")
    return failed, reasons


def find_flips(
    a: Cells, b: Cells, groups: Sequence[tuple[str, str]]
) -> tuple[list[Flip], dict[str, int]]:
    """The scenarios of ``groups`` (label, budget) both runs have that passed in
    one and failed in the other, in group order, then A's scenario order; and the
    counts: ``compared``, ``pass_to_fail``, ``fail_to_pass``, ``failing_in_both``."""
    fail_a, why_a = _failing(a)
    fail_b, why_b = _failing(b)
    wanted = set(groups)
    order = {g: i for i, g in enumerate(groups)}
    keys = [
        k for k in fail_a.index if k in fail_b.index and (str(k[0]), str(k[1])) in wanted
    ]  # a's scenario order within a group
    keys.sort(key=lambda k: order[(str(k[0]), str(k[1]))])
    flips, counts = [], {"compared": 0, "pass_to_fail": 0, "fail_to_pass": 0, "failing_in_both": 0}
    for key in keys:
        label, budget, cluster = map(str, key)
        before, after = bool(fail_a[key]), bool(fail_b[key])
        counts["compared"] += 1
        if before and after:
            counts["failing_in_both"] += 1
        if before == after:
            continue
        counts["pass_to_fail" if after else "fail_to_pass"] += 1
        reasons = (why_b if after else why_a).get((label, budget, cluster), [])
        flips.append(
            Flip(
                label,
                budget,
                cluster,
                "fail" if before else "pass",
                "fail" if after else "pass",
                tuple(reasons),
            )
        )
    return flips, counts
