"""Two runs compared cell by cell over what both have: ``packproof compare A B``.

Run A is the reference (before), run B the candidate (after). Their cells pair
by what a cell is, (suite, scenario, turn, strategy label, budget)
(:mod:`~packproof.evals.compare.pairs`), so a different config, strategy spec,
packer build or set of scenarios is fine: that is the point of a before/after
comparison. The scenarios only one run has are listed, not compared, and the
ones whose content changed are said to be (shared.py).

For each (label, budget, metric) both runs have, the comparison holds the mean
of A and of B over the paired cells, the mean of the differences B - A with a
cluster-bootstrap interval (whole scenarios resampled: the turns of one
conversation are not independent), the two-sided sign-flip permutation p over
the scenarios' mean differences, and a verdict: *better* or *worse* (by the
metric's direction) when the interval excludes 0 and p <= alpha; *same* when
every paired cell is equal. Resamples, confidence and seed are run B's.

It also lists the scenarios that flipped between pass and fail, per (label,
budget) (flips.py).

Computed once here (:func:`compare_runs`, a :class:`Comparison`); rendered as
text, Markdown and JSON by ``text.py`` and as a forest plot by
``plot.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple

from packproof.evals.compare.flips import Flip, find_flips
from packproof.evals.compare.pairs import CELL, Cells, load_cells, pair_cells, paired_test
from packproof.evals.compare.shared import (
    SameRun,
    Shared,
    no_shared_cell,
    same_run,
    shared_notes,
    shared_scenarios,
)
from packproof.evals.metrics.cell import HARD_INVARIANTS
from packproof.evals.report.text import budget_columns, ranking_columns
from packproof.packer.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ALL_BUDGETS",
    "DEFAULT_METRICS",
    "Change",
    "Comparison",
    "Flip",
    "Side",
    "compare_runs",
    "direction",
]

# The headline metrics compared by default, when both runs have them; the
# first one present is the main metric (the verdict's).
DEFAULT_METRICS: Final = (
    "evidence_recall",
    "expectation_pass",
    "evidence_hit",
    "ndcg@10",
    "answer_token_recall",
    "prefix_stability",
)
# Which way is better for the metrics the report's tables do not show
# (text.budget_columns has the rest): +1 higher, -1 lower, 0 neither.
_BETTER: Final = {
    "expectation_pass": 1,
    "must_include_recall": 1,
    "must_exclude_violations": -1,
    "mrr": 1,
    "tail_retention": 1,
    "anchor_retention": 1,
    "citation_coverage": 1,
    "over_budget": -1,
    **dict.fromkeys(HARD_INVARIANTS, -1),
}
_NOT_METRICS: Final = frozenset({"turn", "budget_tokens"})
# Metrics of the ranking, not the fill: where a label's paired values are the
# same at every budget, it gets one row, at budget ALL_BUDGETS.
RANK_ONLY: Final = frozenset({"ndcg@10", "mrr"})
ALL_BUDGETS: Final = "all"

Verdict = Literal["better", "worse", "changed", "unclear", "same"]


def direction(metric: str, summary: Mapping[str, Any]) -> int:
    """Which way ``metric`` is better (+1 higher, -1 lower, 0 neither), as the
    run's own report says (its table columns), else :data:`_BETTER`."""
    summary = {**summary, "groups": summary.get("groups") or []}
    said = {c.key: c.better for c in (*budget_columns(summary), *ranking_columns(summary))}
    return said.get(metric, _BETTER.get(metric, 0))


@dataclass(frozen=True)
class Side:
    """One run's provenance."""

    role: Literal["A", "B"]
    path: str
    run_id: str
    config: Mapping[str, str]  # file, sha256
    git_commit: str
    suites: Mapping[str, str]  # file name -> sha256
    labels: tuple[str, ...]

    @classmethod
    def of(cls, role: Literal["A", "B"], path: Path, cells: Cells) -> Side:
        manifest = cells.summary["manifest"]
        return cls(
            role=role,
            path=str(path),
            run_id=str(manifest.get("run_id", cells.source.name)),
            config=dict(manifest.get("config") or {}),
            git_commit=str(manifest.get("git_commit") or ""),
            suites=cells.suites,
            labels=tuple(s["label"] for s in cells.summary["strategies"]),
        )


@dataclass(frozen=True)
class Change:
    """One (label, budget, metric): the means over the paired cells, the paired
    difference B - A (``stat``: mean, low, high, p_value, n cells, clusters)."""

    label: str
    budget: str
    metric: str
    better: int
    mean_a: float
    mean_b: float
    stat: Mapping[str, Any]
    verdict: Verdict
    excludes_zero: bool  # the interval alone excludes 0 (p may still be above alpha)


@dataclass(frozen=True)
class Comparison:
    """Everything ``packproof compare`` reports, computed once."""

    a: Side
    b: Side
    metrics: tuple[str, ...]  # the first is the main metric
    budgets: tuple[str, ...]
    labels: tuple[str, ...]  # in both runs, in B's order
    alpha: float
    confidence: float
    resamples: int
    seed: int
    changes: tuple[Change, ...]
    flips: tuple[Flip, ...]
    scenarios: Mapping[str, int]  # compared, pass_to_fail, fail_to_pass, failing_in_both
    shared: Shared  # the scenarios compared, added, removed and changed
    same_run: SameRun | None = None  # one run on both sides: the same folder or run id
    notes: tuple[str, ...] = ()

    @property
    def main(self) -> str:
        return self.metrics[0]

    @property
    def changed_suites(self) -> tuple[str, ...]:
        """The suite files in both runs with other contents (same name)."""
        return self.shared.changed_suites

    @property
    def only_a(self) -> tuple[str, ...]:
        return tuple(x for x in self.a.labels if x not in self.b.labels)

    @property
    def only_b(self) -> tuple[str, ...]:
        return tuple(x for x in self.b.labels if x not in self.a.labels)


def _load(path: Path, role: str) -> Cells:
    from packproof.evals.run.folder import INCOMPLETE

    folder = path if path.is_dir() else path.parent
    if (folder / INCOMPLETE).exists():
        raise InputError("", f"the {role} has not finished its reports", source=str(folder))
    return load_cells(path, role)  # (its summary checked against eval-summary.v1.json)


def _present(cells: Cells) -> list[str]:
    """The metric columns with at least one defined value."""
    f = cells.frame
    numeric = [c for c in f.columns if c not in _NOT_METRICS and f[c].dtype.kind in "fiu"]
    return [c for c in numeric if f[c].notna().any()]


def _metrics(a: Cells, b: Cells, asked: Sequence[str]) -> tuple[str, ...]:
    both = [m for m in _present(a) if m in set(_present(b))]
    if not asked:
        chosen = tuple(m for m in DEFAULT_METRICS if m in both)
        if not chosen:
            raise InputError("", "the runs share none of the headline metrics; pass --metric")
        return chosen
    for m in asked:
        if m not in both:
            raise InputError(
                "--metric",
                "not a metric both runs measured",
                expected=" | ".join(sorted(both)),
                found=m,
            )
    return tuple(dict.fromkeys(asked))


def _budgets(a: Cells, b: Cells, asked: Sequence[str]) -> tuple[str, ...]:
    order = [str(x) for x in b.summary.get("budgets", [])] or list(b.frame["budget"].unique())
    both = [x for x in order if x in set(a.frame["budget"]) and x in set(b.frame["budget"])]
    for x in asked:
        if x not in both:
            raise InputError(
                "--budget", "not a budget both runs have", expected=" | ".join(both), found=x
            )
    return tuple(x for x in both if not asked or x in asked)


def _verdict(stat: Mapping[str, Any], better: int, alpha: float) -> tuple[Verdict, bool]:
    low, high = stat["low"], stat["high"]
    if stat["mean"] == low == high == 0:
        return "same", False
    excludes = low > 0 or high < 0
    if not excludes or stat["p_value"] > alpha:
        return "unclear", excludes
    if not better:
        return "changed", True
    return ("better" if stat["mean"] * better > 0 else "worse"), True


def _invariant(pairs: pd.DataFrame, budgets: int) -> set[str]:
    """The labels whose paired values are the same at every budget, cell by
    cell, in both runs (a ranking metric: the fill does not change the ranking)."""
    if budgets < 2 or not len(pairs):
        return set()
    per_cell = pairs.groupby(["label", "suite", "scenario", "turn"], sort=False)
    spread = per_cell.agg(n=("a", "size"), a=("a", "nunique"), b=("b", "nunique"))
    steady = (spread["n"] == budgets) & (spread["a"] == 1) & (spread["b"] == 1)
    by_label = steady.groupby(level="label", sort=False).all()
    return {str(label) for label, ok in by_label.items() if ok}


class Test(NamedTuple):
    """How a paired difference is tested (run B's bootstrap settings)."""

    resamples: int
    confidence: float
    seed: int
    alpha: float


def _changes(
    a: Cells, b: Cells, metrics: Sequence[str], groups: Sequence[tuple[str, str]], test: Test
) -> list[Change]:
    budgets = list(dict.fromkeys(budget for _, budget in groups))
    out = []
    for metric in metrics:
        pairs = pair_cells(a, b, metric)
        pairs = pairs[pairs["budget"].isin(budgets)]
        by_group = dict(iter(pairs.groupby(["label", "budget"], sort=False)))
        better = direction(metric, b.summary)
        once = _invariant(pairs, len(budgets)) if metric in RANK_ONLY else set()
        for label, budget in groups:
            if label in once and budget != budgets[0]:
                continue
            here = by_group.get((label, budget))
            if label in once:
                budget = ALL_BUDGETS
            stat = None if here is None else paired_test(here, *test[:3])
            if here is None or stat is None:
                continue
            verdict, excludes = _verdict(stat, better, test.alpha)
            out.append(
                Change(
                    label=label,
                    budget=budget,
                    metric=metric,
                    better=better,
                    mean_a=float(here["a"].mean()),
                    mean_b=float(here["b"].mean()),
                    stat=stat,
                    verdict=verdict,
                    excludes_zero=excludes,
                )
            )
    return out


def _notes(a: Cells, b: Cells, shared: Shared, same: SameRun | None) -> list[str]:
    notes = shared_notes(shared, same, str(b.summary["manifest"].get("run_id", b.source.name)))
    ca, cb = a.summary.get("confidence"), b.summary.get("confidence")
    if ca != cb:
        notes.append(f"The runs' confidence levels differ ({ca} and {cb}): B's is used.")
    return notes


def compare_runs(
    path_a: Path,
    path_b: Path,
    *,
    metrics: Sequence[str] = (),
    budgets: Sequence[str] = (),
    alpha: float = 0.05,
) -> Comparison:
    """Compare run B (the candidate) with run A (the reference); see the module
    docstring. Refused with one line (:class:`InputError`) when either is not a
    complete run or they share no cell."""
    a, b = _load(path_a, "reference run (A)"), _load(path_b, "candidate run (B)")
    common = a.frame[list(CELL)].merge(b.frame[list(CELL)], on=list(CELL), how="inner")
    if not len(common):
        raise no_shared_cell(a, b)
    shared, same = shared_scenarios(a, b), same_run(a, b)
    chosen = _metrics(a, b, metrics)
    kept = _budgets(a, b, budgets)
    has = set(a.frame["label"]) & set(b.frame["label"])
    labels = tuple(str(s["label"]) for s in b.summary["strategies"] if s["label"] in has)
    groups = [(label, budget) for label in labels for budget in kept]
    # B's settings, bounded by eval-summary.v1.json (a corrupt summary is refused
    # when read, not when a billion resamples are allocated)
    manifest = b.summary["manifest"]
    resamples = int(manifest["bootstrap_resamples"])
    confidence = float(b.summary["confidence"])
    seed = int(manifest["seed"])
    test = Test(resamples, confidence, seed, alpha)
    changes = _changes(a, b, chosen, groups, test)
    flips, counts = find_flips(a, b, groups)
    flips = [dataclasses.replace(f, changed=f.scenario in shared.changed) for f in flips]
    return Comparison(
        a=Side.of("A", path_a, a),
        b=Side.of("B", path_b, b),
        metrics=chosen,
        budgets=kept,
        labels=labels,
        alpha=alpha,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        changes=tuple(changes),
        flips=tuple(flips),
        scenarios=counts,
        shared=shared,
        same_run=same,
        notes=tuple(_notes(a, b, shared, same)),
    )
