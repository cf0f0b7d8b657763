"""One report, computed once from the records, rendered per format.

:func:`build_report` aggregates the cell records into a plain dict (the content
of ``summary.json``); each renderer in :data:`RENDERERS` turns that dict (and the
records) into one file. Everything but ``run`` (latency, executor, jobs) is a
pure function of the records, so the reports are byte-identical whichever
executor produced them.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from ctxpack.evals.metrics.cell import HARD_INVARIANTS
from ctxpack.evals.report.html import render_html
from ctxpack.evals.report.plots import latency, recall_vs_budget, recall_vs_stability
from ctxpack.evals.run.runner import conversation_stability
from ctxpack.evals.scenarios.format import Scenario
from ctxpack.packer.jsonio import canonical_array, dumps, significant

__all__ = [
    "METRICS",
    "RENDERERS",
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


def mean_ci(
    values: np.ndarray, resamples: int, confidence: float, seed: int
) -> dict[str, Any] | None:
    """Mean with a percentile-bootstrap confidence interval (scipy.stats)."""
    if not len(values):
        return None
    mean = float(values.mean())
    if len(values) < 2 or float(values.min()) == float(values.max()):
        return {"mean": mean, "low": mean, "high": mean, "n": len(values)}
    from scipy.stats import bootstrap

    res = bootstrap(
        (values,),
        np.mean,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        random_state=np.random.default_rng(seed),
    )
    return {
        "mean": mean,
        "low": float(res.confidence_interval.low),
        "high": float(res.confidence_interval.high),
        "n": len(values),
    }


def paired(
    a: np.ndarray, b: np.ndarray, resamples: int, confidence: float, seed: int
) -> dict[str, Any] | None:
    """Mean difference a - b over paired cells, its bootstrap interval and the
    Wilcoxon signed-rank p-value (1.0 when every difference is 0)."""
    if not len(a):
        return None
    diff = a - b
    out = mean_ci(diff, resamples, confidence, seed)
    assert out is not None
    if np.all(diff == 0):
        out["p_value"] = 1.0
    else:
        from scipy.stats import wilcoxon

        out["p_value"] = float(wilcoxon(diff, zero_method="wilcox").pvalue)
    return out


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
) -> dict[str, Any]:
    """The summary: per strategy and budget, every metric's mean and interval,
    hard-invariant totals, expectation counts, prefix stability; paired
    differences against the baseline; the oracle ceiling; latency."""
    ordered = order_records(records, specs, budgets)
    by_cell: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in ordered:
        by_cell.setdefault((r["spec"], str(r["budget"])), []).append(r)
    stability = conversation_stability(ordered)
    groups = []
    for spec in specs:
        for budget in budgets:
            cells = by_cell.get((spec, str(budget)), [])
            stab = np.array(
                [
                    v
                    for (_, s, b), v in sorted(stability.items(), key=str)
                    if s == spec and str(b) == str(budget)
                ]
            )
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
                    "prefix_stability": mean_ci(stab, resamples, confidence, seed),
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
    return summary


# ---------------------------------------------------------------- renderers


@dataclass(frozen=True)
class ReportContext:
    """What every renderer reads: the summary (computed once), the records in
    cell-key order, and the scenarios by id (for prompts and item texts)."""

    summary: Mapping[str, Any]
    records: Sequence[dict[str, Any]]
    scenarios: Mapping[str, Scenario]


_KEYS: Final = (
    "key",
    "status",
    "suite",
    "scenario",
    "turn",
    "strategy",
    "spec",
    "budget",
    "budget_tokens",
    "mode",
)


def render_csv(ctx: ReportContext) -> str:
    """metrics.csv: one row per cell, every metric a column (latency excluded:
    it is the one figure that differs between identical runs)."""
    summary, records = ctx.summary, ctx.records
    names = sorted({m for r in records for m in r["metrics"]})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*_KEYS, *names])
    specs = [s["spec"] for s in summary["strategies"]]
    ordered = order_records(records, specs, summary["budgets"])
    values = [[r["metrics"].get(m) for m in names] for r in ordered]
    # Every float rounded as canonical() does, in one pass over the table.
    floats = [v for row in values for v in row if isinstance(v, float)]
    rounded = iter(canonical_array(floats))
    for r, row in zip(ordered, values, strict=True):
        metrics = ["" if v is None else next(rounded) if isinstance(v, float) else v for v in row]
        writer.writerow([*(r.get(k, "") for k in _KEYS), *metrics])
    return out.getvalue()


def render_json(ctx: ReportContext) -> str:
    return dumps(ctx.summary, indent=2, prepared=True) + "\n"  # floats already significant()


def _fmt(stat: Mapping[str, Any] | None, digits: int = 3) -> str:
    if not stat:
        return "–"
    if stat["low"] == stat["high"]:
        return f"{stat['mean']:.{digits}f}"
    return f"{stat['mean']:.{digits}f} [{stat['low']:.{digits}f}, {stat['high']:.{digits}f}]"


def render_markdown(ctx: ReportContext) -> str:
    """summary.md: per budget, every strategy's means with confidence intervals,
    the oracle ceiling, paired differences against the baseline, latency."""
    summary = ctx.summary
    m = summary["manifest"]
    conf = round(summary["confidence"] * 100)
    lines = [
        f"# ctxpack eval: {m['name']}",
        "",
        f"{summary['cells']} cells; ctxpack {m['ctxpack_version']}, "
        f"commit {m['git_commit'] or '?'}; "
        f"{len(m['suites'])} suites; means with {conf}% bootstrap intervals "
        f"({m['bootstrap_resamples']} resamples, seed {m['seed']}).",
        "",
    ]
    for budget in summary["budgets"]:
        rows = [g for g in summary["groups"] if str(g["budget"]) == str(budget)]
        title = "each scenario's own budget" if budget == "scenario" else f"budget {budget} tokens"
        lines += [
            f"## {title}",
            "",
            "| strategy | evidence recall | full hit | nDCG@10 | MRR | regret | prefix stability "
            "| expectations | hard invariants |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for g in rows:
            mm = g["metrics"]
            hard = sum(g["hard_invariants"].values())
            exp = g["expectations"]
            lines.append(
                f"| `{g['label']}` | {_fmt(mm['evidence_recall'])} | {_fmt(mm['evidence_hit'])} "
                f"| {_fmt(mm['ndcg@10'])} | {_fmt(mm['mrr'])} | {_fmt(mm['regret'])} "
                f"| {_fmt(g['prefix_stability'])} | {exp['passed']}/{exp['total']} | {hard} |"
            )
        oracle = next(
            (g["metrics"]["oracle_recall"] for g in rows if g["metrics"]["oracle_recall"]), None
        )
        lines += ["", f"Oracle ceiling (best achievable evidence recall): {_fmt(oracle)}", ""]
        diffs = [p for p in summary["paired"] if str(p["budget"]) == str(budget)]
        if diffs:
            base = next(
                s["label"] for s in summary["strategies"] if s["spec"] == summary["baseline"]
            )
            lines += [
                f"Paired differences against `{base}` (Wilcoxon signed-rank p):",
                "",
                "| strategy | metric | difference | p | cells |",
                "|---|---|---|---|---|",
            ]
            lines += [
                f"| `{p['label']}` | {p['metric']} | {_fmt(p)} | {p['p_value']:.3g} | {p['n']} |"
                for p in diffs
            ]
            lines.append("")
    if summary.get("breakdown"):
        tags = sorted({b["tag"] for b in summary["breakdown"]})
        lines += ["## Evidence recall by tag", ""]
        for budget in summary["budgets"]:
            rows = [b for b in summary["breakdown"] if str(b["budget"]) == str(budget)]
            if not rows:
                continue
            title = "each scenario's own budget" if budget == "scenario" else f"budget {budget}"
            lines += [
                f"### {title}",
                "",
                "| strategy | " + " | ".join(tags) + " |",
                "|---|" + "---|" * len(tags),
            ]
            for s in summary["strategies"]:
                cell = {b["tag"]: b for b in rows if b["spec"] == s["spec"]}
                lines.append(
                    f"| `{s['label']}` | "
                    + " | ".join(
                        f"{_fmt(cell[t]['evidence_recall'])} (n={cell[t]['cells']})"
                        if t in cell
                        else "–"
                        for t in tags
                    )
                    + " |"
                )
            lines.append("")
    lines += [
        "## Latency (per cell; differs run to run)",
        "",
        "| strategy | p50 ms | p95 ms |",
        "|---|---|---|",
    ]
    for label, lat in summary["run"]["latency"].items():
        lines.append(f"| `{label}` | {lat['p50_ms']:.3f} | {lat['p95_ms']:.3f} |")
    fails = summary["expectation_failures"]
    lines += ["", f"## Expectation failures: {len(fails)}", ""]
    lines += [f"- `{f['key']}`: {'; '.join(f['failures'])}" for f in fails[:50]]
    if len(fails) > 50:
        lines.append(f"- ... and {len(fails) - 50} more (summary.json lists all)")
    return "\n".join(lines).rstrip() + "\n"


def render_junit(ctx: ReportContext) -> str:
    """junit.xml: every scenario expectation as a JUnit test case (evals/junit.py)."""
    from ctxpack.evals.report.junit import (
        render_junit as render,  # lazily: junit.py refers back to ReportContext
    )

    return render(ctx)


# Renderers by output file name; a renderer returns text (str) or bytes (images).
Renderer = Callable[[ReportContext], str | bytes]
RENDERERS: dict[str, Renderer] = {
    "junit.xml": render_junit,
    "metrics.csv": render_csv,
    "summary.json": render_json,
    "summary.md": render_markdown,
    "report.html": render_html,
    "recall_vs_budget.png": recall_vs_budget,
    "recall_vs_stability.png": recall_vs_stability,
    "latency.png": latency,
}
