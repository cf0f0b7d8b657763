"""The cache-aware packing target, measured on a LoCoMo replay run:
``python -m packproof.evals.bench.cacheaware RUN_DIR`` (``make bench`` runs it on
the replay grid's eval, :mod:`packproof.evals.bench.replay`).

The issue's target: at 2,048 and 4,096 tokens under ``anthropic``, a cache-aware
configuration keeps at least 90% of plain ``bm25``'s probe evidence recall at no
more than 1.25x the conversation input cost of the cheapest configuration
measured. It is read from the run's ``summary.json`` frontiers (the figures the
report shows), for each static prefix size of the run.

Where it is not met, the run's ``results.jsonl`` says why: each spec's
conversation input cost split by what happened at the step, under the
profile's lifetime: **cold** (the first step, or ``ttl_s`` or more since the step
before: the provider's cache is gone whatever the pack), **break** (warm, but
the pack does not start with the previous one: the cache misses from the first
changed item) and **append** (warm, the previous pack kept as the prefix: only
what is appended is written), and for cache-aware specs the tokens their recall
blocks added. Targets are reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from packproof.evals.bench.common import EXIT_OK
from packproof.evals.metrics.cache.files import load_profiles

__all__ = ["cost_breakdown", "main", "measure", "target"]

PROFILE: Final = "anthropic"
BUDGETS: Final = (2048, 4096)
RECALL_SHARE: Final = 0.9  # of plain bm25's probe recall
COST_RATIO: Final = 1.25  # of the cheapest configuration's input cost
REFERENCE_LABEL: Final = "bm25"
CACHE_MARK: Final = "+cache"


def target(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per (budget, static prefix) under PROFILE: bm25's recall, the cheapest
    configuration, each cache-aware point's share of that recall and multiple
    of that cost, and whether any meets both."""
    out = []
    for frontier in summary.get("replay", {}).get("frontiers", []):
        if frontier["profile"] != PROFILE or frontier["budget"] not in BUDGETS:
            continue
        points = frontier["points"]
        reference = next((p for p in points if p["label"] == REFERENCE_LABEL), None)
        if reference is None or not points:
            continue
        cheapest = min(points, key=lambda p: (p["input_cost"], -p["recall"]))
        rows = []
        for p in points:
            if CACHE_MARK not in p["label"]:
                continue
            share = p["recall"] / reference["recall"] if reference["recall"] else None
            ratio = p["input_cost"] / cheapest["input_cost"]
            rows.append(
                {
                    "label": p["label"],
                    "recall": p["recall"],
                    "recall_share_of_bm25": share,
                    "input_cost": p["input_cost"],
                    "cost_vs_cheapest": ratio,
                    "cost_vs_bm25": p["input_cost"] / reference["input_cost"],
                    "met": share is not None
                    and share >= RECALL_SHARE
                    and ratio <= COST_RATIO + 1e-12,
                }
            )
        # The nearest miss: among those keeping the recall, the cheapest.
        keeping = [r for r in rows if (r["recall_share_of_bm25"] or 0) >= RECALL_SHARE]
        out.append(
            {
                "profile": PROFILE,
                "budget": frontier["budget"],
                "static_prefix_tokens": frontier["static_prefix_tokens"],
                "bm25_recall": reference["recall"],
                "bm25_input_cost": reference["input_cost"],
                "cheapest": {k: cheapest[k] for k in ("label", "recall", "input_cost")},
                "cache_aware": rows,
                "best_keeping_recall": min(keeping, key=lambda r: r["cost_vs_cheapest"])
                if keeping
                else None,
                "met": any(r["met"] for r in rows),
            }
        )
    return out


def _records(path: Path) -> Iterable[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if record.get("budget") in BUDGETS and "cache" in record:
                yield record


def cost_breakdown(records: Iterable[Mapping[str, Any]], ttl_s: float) -> list[dict[str, Any]]:
    """Per (spec, budget, static prefix): the conversations' input cost
    under PROFILE split into cold, break and append steps (see the module
    docstring), with step counts and the recall blocks' tokens."""
    chains: dict[tuple[str, int, str, str], list[Mapping[str, Any]]] = {}
    for r in records:
        if r.get("probe") or r.get("status") != "ok":
            continue
        chains.setdefault((r["spec"], r["budget"], r["suite"], r["scenario"]), []).append(r)
    sums: dict[tuple[str, int, str], dict[str, float]] = {}
    for (spec, budget, _, _), steps in chains.items():
        steps.sort(key=lambda r: r["turn"])
        last_t: float | None = None
        for r in steps:
            cold = last_t is None or r["t"] - last_t >= ttl_s
            kind = "cold" if cold else ("break" if r["prefix_break"] else "append")
            last_t = r["t"]
            for static, figures in r["cache"].get(PROFILE, {}).items():
                acc = sums.setdefault((spec, budget, static), {})
                acc[f"{kind}_cost"] = acc.get(f"{kind}_cost", 0.0) + figures["cost"]
                acc[f"{kind}_steps"] = acc.get(f"{kind}_steps", 0) + 1
                acc["recall_tokens"] = acc.get("recall_tokens", 0) + r.get("recall_tokens", 0)
                for action in ("compact", "cold", "append", "first"):
                    if r.get("cache_action") == action:
                        key = f"action_{action}"
                        acc[key] = acc.get(key, 0) + 1
    out = []
    for (spec, budget, static), acc in sorted(sums.items()):
        total = sum(acc.get(f"{k}_cost", 0.0) for k in ("cold", "break", "append"))
        out.append(
            {
                "spec": spec,
                "budget": budget,
                "static_prefix_tokens": int(static),
                "input_cost": total,
                **{
                    f"{k}_share": acc.get(f"{k}_cost", 0.0) / total if total else None
                    for k in ("cold", "break", "append")
                },
                **{
                    f"{k}_steps": int(acc.get(f"{k}_steps", 0)) for k in ("cold", "break", "append")
                },
                "recall_tokens": int(acc.get("recall_tokens", 0)),
                "actions": {
                    k.removeprefix("action_"): int(v)
                    for k, v in acc.items()
                    if k.startswith("action_")
                },
            }
        )
    return out


def measure(run_dir: Path) -> dict[str, Any]:
    """The target and the cost breakdown of a replay run directory."""
    summary = json.loads((run_dir / "summary.json").read_text("utf-8"))
    profiles = load_profiles()
    ttl = profiles[PROFILE].ttl_s
    results = run_dir / "results.jsonl"
    breakdown = cost_breakdown(_records(results), ttl) if results.exists() else []
    return {
        "target": {
            "profile": PROFILE,
            "budgets": list(BUDGETS),
            "recall_share_of_bm25": RECALL_SHARE,
            "cost_vs_cheapest": COST_RATIO,
        },
        "results": target(summary),
        "cost_breakdown": breakdown,
    }


def format_report(report: Mapping[str, Any]) -> str:
    lines = [
        f"cache-aware target under {PROFILE}: >= {RECALL_SHARE:.0%} of bm25's probe recall "
        f"at <= {COST_RATIO}x the cheapest configuration's input cost",
    ]
    for row in report["results"]:
        best = row["best_keeping_recall"]
        lines.append(
            f"  budget {row['budget']}, static {row['static_prefix_tokens']}: "
            f"{'met' if row['met'] else 'NOT met'}; bm25 recall {row['bm25_recall']:.3f}, "
            f"cheapest {row['cheapest']['label']} ({row['cheapest']['input_cost']:,.0f})"
        )
        for r in row["cache_aware"]:
            lines.append(
                f"    {r['label']}: recall {r['recall']:.3f} "
                f"({r['recall_share_of_bm25']:.0%} of bm25), cost {r['cost_vs_cheapest']:.2f}x "
                f"cheapest, {r['cost_vs_bm25']:.2f}x bm25"
            )
        if best is not None:
            lines.append(f"    cheapest keeping 90%: {best['label']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path, help="a replay run (summary.json, results.jsonl)")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    report = measure(args.run_dir)
    print(format_report(report))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", "utf-8")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
