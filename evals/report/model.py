"""One report, computed once from the records: the model every renderer reads.

:func:`build_report` aggregates the cell records into a plain dict (the content
of ``summary.json``); :class:`ReportContext` holds it with the records and the
scenarios, and each renderer in :data:`ctxpack.evals.report.renderers.RENDERERS`
turns that context into one file. Everything but ``run`` (latency, executor,
jobs) is a pure function of the records, so the reports are byte-identical
whichever executor produced them. The renderers import this module; it imports
none of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from ctxpack.evals.metrics.cache import Profile
from ctxpack.evals.metrics.cell import HARD_INVARIANTS
from ctxpack.evals.report.replay import build_replay
from ctxpack.evals.report.stats import mean_ci, paired
from ctxpack.evals.scenarios.format import Scenario
from ctxpack.packer.jsonio import significant

__all__ = [
    "METRICS",
    "SUMMARY_SCHEMA_ID",
    "ReportContext",
    "build_report",
    "order_records",
]

SUMMARY_SCHEMA_ID: Final = "ctxpack.eval.summary.v1"
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
)
# Paired against the baseline strategy, cell by cell.
PAIRED: Final = ("evidence_recall", "ndcg@10", "mrr")


def order_records(
    records: Sequence[dict[str, Any]], specs: Sequence[str], budgets: Sequence[Any]
) -> list[dict[str, Any]]:
    """Records in cell-key order: suite, scenario, turn, then the config's spec
    and budget order. Executors finish in any order; reports never do."""
    spec_at = {s: i for i, s in enumerate(specs)}
    budget_at = {str(b): i for i, b in enumerate(budgets)}
    return sorted(
        records,
        key=lambda r: (
            r["suite"],
            r["scenario"],
            r["turn"],
            spec_at[r["spec"]],
            budget_at[str(r["budget"])],
        ),
    )


def _values(cells: Sequence[dict[str, Any]], metric: str) -> np.ndarray:
    return np.array(
        [c["metrics"][metric] for c in cells if c["metrics"].get(metric) is not None],
        dtype=np.float64,
    )


def _percentile(values: Sequence[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if len(values) else None


def _turn_stability(
    ordered: Sequence[dict[str, Any]],
) -> dict[tuple[str, str], dict[tuple[str, str], list[tuple[float | None, float | None]]]]:
    """Per (spec, budget), per conversation (suite, scenario): each cell's
    ``prefix_stability`` and ``prefix_stability_tokens`` (the runner writes both
    into every cell's metrics: ``None`` on a first turn and on probes)."""
    out: dict[tuple[str, str], dict[tuple[str, str], list[tuple[float | None, float | None]]]] = {}
    for r in ordered:
        m = r["metrics"]
        conversations = out.setdefault((r["spec"], str(r["budget"])), {})
        conversations.setdefault((r["suite"], r["scenario"]), []).append(
            (m.get("prefix_stability"), m.get("prefix_stability_tokens"))
        )
    return out


def _conversation_means(
    conversations: Mapping[tuple[str, str], Sequence[tuple[float | None, float | None]]],
    which: int,
) -> np.ndarray:
    """Each conversation's mean of its defined values (conversations with none
    left out): the report then averages conversations, not turns, so a long
    conversation counts as much as a short one."""
    means = []
    for values in conversations.values():
        defined = [x for v in values if (x := v[which]) is not None]
        if defined:
            means.append(sum(defined) / len(defined))
    return np.array(means, dtype=np.float64)


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
) -> dict[str, Any]:
    """The summary: per strategy and budget, every metric's mean and interval,
    hard-invariant totals, expectation counts, prefix stability (in items and
    tokens); paired differences against the baseline; the oracle ceiling;
    latency; and, when the run has replays, their prompt-cache economics
    (``replay``: per profile in ``cache_profiles``, name -> profile in config
    order, and per ``static_prefix_tokens``; see replay.py)."""
    ordered = order_records(records, specs, budgets)
    by_cell: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in ordered:
        by_cell.setdefault((r["spec"], str(r["budget"])), []).append(r)
    stability = _turn_stability(ordered)
    groups = []
    for spec in specs:
        for budget in budgets:
            cells = by_cell.get((spec, str(budget)), [])
            conversations = stability.get((spec, str(budget)), {})
            passed = [c for c in cells if c["metrics"].get("expectation_pass") is not None]
            groups.append(
                {
                    "spec": spec,
                    "label": labels[spec],
                    "budget": budget,
                    "cells": len(cells),
                    "metrics": {
                        m: mean_ci(_values(cells, m), resamples, confidence, seed) for m in METRICS
                    },
                    "prefix_stability": mean_ci(
                        _conversation_means(conversations, 0), resamples, confidence, seed
                    ),
                    "prefix_stability_tokens": mean_ci(
                        _conversation_means(conversations, 1), resamples, confidence, seed
                    ),
                    "hard_invariants": {
                        **{
                            h: int(sum(c["metrics"].get(h, 0) for c in cells))
                            for h in HARD_INVARIANTS
                        },
                        # cells an external packer failed (TIMEOUT, CRASH, ...)
                        "cell_failures": sum(c.get("status", "ok") != "ok" for c in cells),
                    },
                    "expectations": {
                        "passed": sum(c["metrics"]["expectation_pass"] == 1.0 for c in passed),
                        "total": len(passed),
                    },
                }
            )
    comparisons = []
    for spec in specs:
        if spec == baseline:
            continue
        for budget in budgets:
            base = {c["key"].split("|")[0]: c for c in by_cell.get((baseline, str(budget)), [])}
            mine = {c["key"].split("|")[0]: c for c in by_cell.get((spec, str(budget)), [])}
            for metric in PAIRED:
                pairs = [
                    (mine[k]["metrics"][metric], base[k]["metrics"][metric])
                    for k in sorted(mine.keys() & base.keys())
                    if mine[k]["metrics"].get(metric) is not None
                    and base[k]["metrics"].get(metric) is not None
                ]
                if pairs:
                    a, b = (np.array(x, dtype=np.float64) for x in zip(*pairs, strict=True))
                    comparisons.append(
                        {
                            "spec": spec,
                            "label": labels[spec],
                            "budget": budget,
                            "metric": metric,
                            **(paired(a, b, resamples, confidence, seed) or {}),
                        }
                    )
    breakdown = []
    tags = sorted({t for r in ordered for t in r["tags"] if t.startswith(tuple(breakdown_tags))})
    for tag in tags if breakdown_tags else []:
        for spec in specs:
            for budget in budgets:
                cells = [c for c in by_cell.get((spec, str(budget)), []) if tag in c["tags"]]
                if cells:
                    breakdown.append(
                        {
                            "tag": tag,
                            "spec": spec,
                            "label": labels[spec],
                            "budget": budget,
                            "cells": len(cells),
                            "evidence_recall": mean_ci(
                                _values(cells, "evidence_recall"), resamples, confidence, seed
                            ),
                            "evidence_hit": mean_ci(
                                _values(cells, "evidence_hit"), resamples, confidence, seed
                            ),
                        }
                    )
    failures = [{"key": r["key"], "failures": r["failures"]} for r in ordered if r["failures"]]
    latency = {
        labels[s]: {
            "p50_ms": _percentile([r["latency_ms"] for r in ordered if r["spec"] == s], 50),
            "p95_ms": _percentile([r["latency_ms"] for r in ordered if r["spec"] == s], 95),
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
            "strategies": [{"spec": s, "label": labels[s]} for s in specs],
            "budgets": list(budgets),
            "groups": groups,
            "paired": comparisons,
            "expectation_failures": failures,
            "breakdown": breakdown,
            "run": {**dict(run), "latency": latency},
        }
    )
    replay = build_replay(
        ordered,
        specs=specs,
        labels=labels,
        budgets=budgets,
        profiles=cache_profiles or {},
        static_prefix_tokens=static_prefix_tokens,
        stats=lambda values: mean_ci(values, resamples, confidence, seed),
    )
    if replay is not None:
        summary["replay"] = replay
    return summary


@dataclass(frozen=True)
class ReportContext:
    """What every renderer reads: the summary (computed once), the records in
    cell-key order, and the scenarios by id (for prompts and item texts)."""

    summary: Mapping[str, Any]
    records: Sequence[dict[str, Any]]
    scenarios: Mapping[str, Scenario]
