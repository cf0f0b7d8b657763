"""One report, computed once from the records: the model every renderer reads.

:func:`build_report` turns the cell records into a DataFrame (frame.py),
aggregates it (aggregate.py), opens with a verdict per budget (verdict.py) and
returns a plain dict (the content of ``summary.json``); :class:`ReportContext`
holds it with the records and the scenarios, and each renderer in
:data:`packproof.evals.report.renderers.RENDERERS` turns that context into one
file. Everything but ``run`` (latency, executor, jobs) is a pure function of the
records, so the reports are byte-identical whichever executor produced them.
The renderers import this module; it imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final

import numpy as np

from packproof.evals.metrics.cache.model import Profile
from packproof.evals.report import aggregate
from packproof.evals.report.aggregate import Stats
from packproof.evals.report.failures import tally
from packproof.evals.report.frame import cells_frame, order_records
from packproof.evals.report.replay import build_replay
from packproof.evals.report.verdict import best_specs, verdicts
from packproof.evals.scenarios.format import Scenario
from packproof.packer.jsonio import significant

__all__ = [
    "METRICS",
    "PAIRED",
    "PARTS",
    "SUMMARY_SCHEMA_ID",
    "ReportContext",
    "build_report",
    "order_records",
]

SUMMARY_SCHEMA_ID: Final = "packproof.eval.summary.v1"
# Metrics summarised per strategy and budget (means with confidence intervals).
METRICS: Final = (
    "evidence_recall",
    "evidence_hit",
    "ndcg@10",
    "mrr",
    "oracle_recall",
    "regret",
    "expectation_pass",
    "must_include_recall",
    "budget_utilisation",
    "selected_count",
    "tokens_used",
    "answer_token_recall",
    "answer_token_ceiling",
)
# Compared cell by cell: each spec against the baseline and against the best
# spec of its budget, and the config's ``compare`` pairs.
PAIRED: Final = ("evidence_recall", "ndcg@10", "mrr", "answer_token_recall")
# The summary's parts, in the order build_report computes them (the first only
# for a run with replays): what a progress bar names while each is computed.
PARTS: Final = (
    "replays' cache figures",
    "each strategy's means",
    "paired differences",
    "verdict and breakdowns",
)


def _percentile(values: Sequence[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if len(values) else None


def build_report(
    records: Sequence[dict[str, Any]],
    *,
    specs: Sequence[str],
    labels: Mapping[str, str],
    budgets: Sequence[Any],
    baseline: str,
    resamples: int,
    confidence: float,
    seed: int,
    manifest: Mapping[str, Any],
    run: Mapping[str, Any],
    breakdown_tags: Sequence[str] = (),
    cache_profiles: Mapping[str, Profile] | None = None,
    static_prefix_tokens: Sequence[int] = (0,),
    compare: Sequence[tuple[str, str]] = (),
    packers: Mapping[str, Mapping[str, Any]] | None = None,
    ready: Callable[[dict[str, Any]], None] | None = None,
    doing: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The summary: the verdict per budget; per strategy and budget, every
    metric's mean and interval (and cluster interval where cells cluster),
    hard-invariant totals, expectation counts, prefix stability (in items and
    tokens); paired differences (each spec against the baseline and the best,
    and the ``compare`` pairs); the metrics that do not change with the budget;
    the oracle ceiling; latency; and, when the run has replays, their prompt-cache economics
    (``replay``: per profile in ``cache_profiles``, name -> profile in config
    order, and per ``static_prefix_tokens``; see replay.py). A named packer's
    entry in ``strategies`` carries what ``packers`` says of it (its command).
    ``ready`` is given parts of the summary, as it will hold them, as soon as
    they are computed: ``strategies`` and ``replay`` (all the frontier plot
    reads), then ``strategies``, ``confidence`` and ``groups`` (the recall plots').
    ``doing`` is told which part is computed next (:data:`PARTS`), as it starts."""
    step = doing or (lambda part: None)
    ordered = order_records(records, specs, budgets)
    stats = Stats(resamples, confidence, seed)
    strategies = [{"spec": s, "label": labels[s], **(packers or {}).get(s, {})} for s in specs]
    replay = build_replay(
        ordered,
        specs=specs,
        labels=labels,
        budgets=budgets,
        profiles=cache_profiles or {},
        static_prefix_tokens=static_prefix_tokens,
        stats=stats.mean,
        starting=partial(step, PARTS[0]),
    )
    if ready is not None:  # the summary's strategies and replay, as it will hold them
        ready(significant({"strategies": strategies}) | {"replay": replay})
    step(PARTS[1])
    frame = cells_frame(
        ordered, specs=specs, labels=labels, budgets=budgets, breakdown_tags=breakdown_tags
    )
    groups = aggregate.groups(frame, labels, METRICS, stats)
    if ready is not None:
        ready(significant({"strategies": strategies, "confidence": confidence, "groups": groups}))
    best = best_specs(groups, budgets)
    step(PARTS[2])
    paired_metrics = [m for m in PAIRED if m in frame]
    comparisons = []
    tables: dict[Any, Any] = {}  # the cells pivoted per budget and metric, once
    for budget in budgets:
        pairs = [(s, baseline, "baseline") for s in specs if s != baseline]
        if str(budget) in best:
            pairs += [(s, best[str(budget)], "best") for s in specs if s != best[str(budget)]]
        pairs += [(a, b, "config") for a, b in compare]
        comparisons += aggregate.compare(
            frame, _unique_pairs(pairs), budget, paired_metrics, labels, stats, tables
        )

    def one_pair(a: str, b: str, metric: str, budget: Any) -> dict[str, Any] | None:
        rows = aggregate.compare(
            frame, [(a, b, "verdict")], budget, [metric], labels, stats, tables
        )
        return rows[0] if rows else None

    step(PARTS[3])
    verdict = verdicts(groups, budgets=budgets, baseline=baseline, paired=one_pair, replay=replay)
    failures = [{"key": r["key"], "failures": r["failures"]} for r in ordered if r["failures"]]
    latencies: dict[str, list[float]] = {s: [] for s in specs}
    for r in ordered:
        latencies.setdefault(r["spec"], []).append(r["latency_ms"])
    latency = {
        labels[s]: {
            "p50_ms": _percentile(latencies[s], 50),
            "p95_ms": _percentile(latencies[s], 95),
        }
        for s in specs
    }
    summary: dict[str, Any] = significant(
        {
            "schema": SUMMARY_SCHEMA_ID,
            "manifest": dict(manifest),
            "baseline": baseline,
            "confidence": confidence,
            "cells": len(ordered),
            "strategies": strategies,
            "budgets": list(budgets),
            "verdict": verdict,
            "budget_invariant": aggregate.budget_invariant(frame, budgets),
            "groups": groups,
            "paired": comparisons,
            "expectation_failures": failures,
            "failures": tally(ordered, labels),
            "breakdown_tags": list(breakdown_tags),
            "breakdown": aggregate.breakdown(frame, breakdown_tags, labels, stats),
            "run": {**dict(run), "latency": latency},
        }
    )
    if replay is not None:
        summary["replay"] = replay
    return summary


def _unique_pairs(pairs: Sequence[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """Each unordered pair once, the first time it is named."""
    seen: set[frozenset[str]] = set()
    out = []
    for a, b, why in pairs:
        if frozenset((a, b)) not in seen:
            seen.add(frozenset((a, b)))
            out.append((a, b, why))
    return out


@dataclass(frozen=True)
class ReportContext:
    """What every renderer reads: the summary (computed once), the records in
    cell-key order, and the scenarios by id (for prompts and item texts); and
    what a renderer made that another reuses (report.html embeds the PNG plots,
    each drawn once: :meth:`once`)."""

    summary: Mapping[str, Any]
    records: Sequence[dict[str, Any]]
    scenarios: Mapping[str, Scenario]
    made: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def once(self, name: str, make: Callable[[], Any]) -> Any:
        """``make()``, called the first time ``name`` is asked for and then kept."""
        if name not in self.made:
            self.made[name] = make()
        return self.made[name]
