"""The report's aggregation, computed from the cells' DataFrame (frame.py):
group by spec and budget (and tag), then means with their intervals, paired
differences, and which metrics do not change with the budget.

Every interval is given per cell and, where the cells cluster (the turns of one
conversation), per cluster too (stats.py); the verdict reads the cluster one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from packproof.evals.metrics.cell import HARD_INVARIANTS
from packproof.evals.report.stats import cluster_ci, cluster_paired, clustered, mean_ci, paired

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "INVARIANT_CANDIDATES",
    "Stats",
    "breakdown",
    "budget_invariant",
    "compare",
    "groups",
]

# Metrics that may not depend on the budget (a ranking's, and a ceiling over the
# whole conversation); the report shows each once when the run confirms it.
INVARIANT_CANDIDATES: Final = ("ndcg@10", "mrr", "answer_token_ceiling")


@dataclass(frozen=True)
class Stats:
    """The bootstrap settings of a run."""

    resamples: int
    confidence: float
    seed: int

    def mean(self, values: np.ndarray) -> dict[str, Any] | None:
        return mean_ci(values, self.resamples, self.confidence, self.seed)

    def cluster(self, values: np.ndarray, clusters: np.ndarray) -> dict[str, Any] | None:
        return cluster_ci(values, clusters, self.resamples, self.confidence, self.seed)


def _defined(cells: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """A metric's defined values and their clusters."""
    if metric not in cells:
        return np.zeros(0), np.zeros(0, dtype=object)
    column = cells[metric]
    keep = column.notna().to_numpy()
    values = column[keep].to_numpy(dtype=np.float64)
    return values, cells["cluster"][keep].to_numpy(dtype=object)


def _by_spec_budget(frame: pd.DataFrame) -> Iterator[tuple[str, Any, pd.DataFrame]]:
    """Each (spec, budget) in config order, with its cells (maybe none)."""
    for (spec, budget), cells in frame.groupby(["spec", "budget"], observed=False, sort=True):
        yield str(spec), budget, cells


def _conversation_means(cells: pd.DataFrame, metric: str) -> np.ndarray:
    """Each conversation's mean of its defined values (conversations with none
    left out): the report then averages conversations, not turns, so a long
    conversation counts as much as a short one."""
    if metric not in cells:
        return np.zeros(0)
    means = cells.groupby(["suite", "scenario"], sort=False, observed=True)[metric].mean()
    return means.dropna().to_numpy(dtype=np.float64)


def groups(
    frame: pd.DataFrame, labels: Mapping[str, str], metrics: Sequence[str], stats: Stats
) -> list[dict[str, Any]]:
    """Per spec and budget: every metric's mean with its interval (and, where
    the cells cluster, its cluster interval under ``cluster``), prefix
    stability averaged per conversation then across conversations, the hard
    invariants' totals and the expectation counts."""
    out = []
    for spec, budget, cells in _by_spec_budget(frame):
        summaries: dict[str, Any] = {}
        per_cluster: dict[str, Any] = {}
        for m in metrics:
            values, clusters = _defined(cells, m)
            summaries[m] = stats.mean(values)
            if clustered(clusters):
                per_cluster[m] = stats.cluster(values, clusters)
        group: dict[str, Any] = {
            "spec": spec,
            "label": labels[spec],
            "budget": budget,
            "cells": len(cells),
            "metrics": summaries,
            "prefix_stability": stats.mean(_conversation_means(cells, "prefix_stability")),
            "prefix_stability_tokens": stats.mean(
                _conversation_means(cells, "prefix_stability_tokens")
            ),
            "hard_invariants": {
                **{h: int(cells[h].sum()) if h in cells else 0 for h in HARD_INVARIANTS},
                # cells an external packer failed (TIMEOUT, CRASH, ...)
                "cell_failures": int((cells["status"] != "ok").sum()),
            },
            "expectations": {
                "passed": int((cells["expectation_pass"] == 1.0).sum())
                if "expectation_pass" in cells
                else 0,
                "total": int(cells["expectation_pass"].notna().sum())
                if "expectation_pass" in cells
                else 0,
            },
        }
        if per_cluster:
            group["cluster"] = per_cluster
        out.append(group)
    return out


def compare(
    frame: pd.DataFrame,
    pairs: Sequence[tuple[str, str, str]],
    budget: Any,
    metrics: Sequence[str],
    labels: Mapping[str, str],
    stats: Stats,
    tables: dict[Any, Any] | None = None,
) -> list[dict[str, Any]]:
    """Each pair ``(a, b, why)`` at one budget, per metric: the mean difference
    a - b over the cells both have a value for, its interval and Wilcoxon p
    (unit: cell) and, where those cells cluster, its cluster interval and
    sign-flip p under ``cluster`` (unit: conversation). ``tables`` keeps the
    cells of each budget, one column per spec, for the next call on ``frame``."""
    present = [m for m in metrics if m in frame]
    pivoted = _wide(frame, budget, present, {} if tables is None else tables)
    out = []
    for metric in present:
        wide, clusters = pivoted[metric]
        for a, b, why in pairs:
            if a not in wide or b not in wide:
                continue
            both = (wide[a].notna() & wide[b].notna()).to_numpy()
            if not both.any():
                continue
            x = wide[a][both].to_numpy(dtype=np.float64)
            y = wide[b][both].to_numpy(dtype=np.float64)
            row: dict[str, Any] = {
                "spec": a,
                "label": labels[a],
                "against": b,
                "against_label": labels[b],
                "why": why,
                "budget": budget,
                "metric": metric,
                "unit": "cell",
                **(paired(x, y, stats.resamples, stats.confidence, stats.seed) or {}),
            }
            if clustered(clusters[both]):
                row["cluster"] = cluster_paired(
                    x, y, clusters[both], stats.resamples, stats.confidence, stats.seed
                )
            out.append(row)
    return out


def _wide(
    frame: pd.DataFrame, budget: Any, metrics: Sequence[str], tables: dict[Any, Any]
) -> dict[str, tuple[pd.DataFrame, np.ndarray]]:
    """Each metric at one budget, a row per (suite, scenario, turn) and a column
    per spec, with each row's cluster: the metrics not in ``tables`` yet
    pivoted at once, and kept there."""
    missing = [m for m in metrics if (budget, m) not in tables]
    if missing:
        here = frame[frame["budget"] == budget]
        wide = here.pivot(index=["suite", "scenario", "turn"], columns="spec", values=missing)
        clusters = np.array([f"{s}/{c}" for s, c, _ in wide.index.to_list()], dtype=object)
        for m in missing:
            tables[budget, m] = (wide[m], clusters)
    return {m: tables[budget, m] for m in metrics}


def breakdown(
    frame: pd.DataFrame, prefixes: Sequence[str], labels: Mapping[str, str], stats: Stats
) -> list[dict[str, Any]]:
    """Evidence recall and full hit per tag (tags starting with a breakdown
    prefix), spec and budget."""
    if not prefixes:
        return []
    tags = sorted({t for ts in frame["tags"] for t in ts if t.startswith(tuple(prefixes))})
    out = []
    for tag in tags:
        tagged = frame[frame["tags"].map(lambda ts, tag=tag: tag in ts)]
        for spec, budget, cells in _by_spec_budget(tagged):
            if not len(cells):
                continue
            row: dict[str, Any] = {
                "tag": tag,
                "spec": spec,
                "label": labels[spec],
                "budget": budget,
                "cells": len(cells),
                "evidence_recall": stats.mean(_defined(cells, "evidence_recall")[0]),
                "evidence_hit": stats.mean(_defined(cells, "evidence_hit")[0]),
            }
            values, clusters = _defined(cells, "evidence_recall")
            if clustered(clusters):
                row["cluster"] = {"evidence_recall": stats.cluster(values, clusters)}
            out.append(row)
    return out


def budget_invariant(frame: pd.DataFrame, budgets: Sequence[Any]) -> list[str]:
    """The metrics of :data:`INVARIANT_CANDIDATES` this run has that take the same
    value in every cell of one (spec, suite, scenario, turn) at every budget: a
    report shows them once, not per budget."""
    if len(budgets) < 2:
        return []
    out = []
    keys = ["spec", "suite", "scenario", "turn"]
    for metric in INVARIANT_CANDIDATES:
        if metric not in frame or frame[metric].isna().all():
            continue
        spread = frame.groupby(keys, observed=True, sort=False)[metric].nunique(dropna=False)
        if bool((spread <= 1).all()):
            out.append(metric)
    return out
