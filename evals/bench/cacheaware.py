"""The cache-aware packing target, measured on a replay run:
``python -m packproof.evals.bench.cacheaware RUN_DIR`` (``make bench`` runs it on
the LoCoMo replay grid's eval, :mod:`packproof.evals.bench.replay`).

The target: under ``anthropic`` at
2,048 and 4,096 tokens, behind each static prefix of the run, a cache-aware
**configuration** keeps at least 90% of plain ``bm25``'s probe evidence recall
at no more than 1.25x the input cost of the cheapest configuration measured. A
configuration is a (spec, breakpoint placement) pair: the default placement,
and for a spec whose packs suggest breakpoints each placement a caller would
choose (docs/metrics.md, "Breakpoint placements"). Input cost counts every
request, the conversation's steps and its probes. The figures are read from
the run's ``summary.json`` replay groups (those the report shows).

It prints one line per profile, static prefix and budget, ending with ``target
met by SPEC (recall R of bm25's, cost C x the cheapest)`` or ``target not met
(best: ...)``. Where it is not met, two more lines say why, from the run's
journal (``results.jsonl.gz``): the cost terms (read x cached, write x written, uncached
tokens, per conversation) of the best configuration beside the cheapest's, and
the term whose excess over the cheapest's is largest (the one that stops it);
and the **physical limit** (:func:`physical_limit`): the cheapest cost found at
which every probe's pack holds that probe's evidence, computed from the run's
scenarios. A limit above 1.25x the cheapest puts the target out of reach.

``--out FILE`` also writes every figure as JSON, with each configuration's
Pareto flag (the frontier over configurations) and each spec's conversation
cost split into **cold** steps (the first, or ``ttl_s`` or more after the one
before: the provider's cache is gone whatever the pack), **break** steps (warm,
but the pack does not start with the previous one), **append** steps (warm,
the previous pack kept as the prefix) and **probes**. Targets are reported,
never asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from packproof.evals.bench.cachelimit import TERMS, find_suites, physical_limit
from packproof.evals.bench.common import EXIT_OK, EXIT_USAGE
from packproof.evals.metrics.cache.files import load_profiles
from packproof.evals.metrics.cache.model import Profile
from packproof.evals.report.frontier import pareto
from packproof.evals.report.replay import DEFAULT_PLACEMENT, PLACEMENT_ORDER
from packproof.evals.run.journal import journal_path, read_results
from packproof.evals.run.suites import load_suite
from packproof.packer.errors import InputError

__all__ = [
    "cost_breakdown",
    "cost_terms",
    "format_report",
    "main",
    "measure",
    "target",
]

PROFILE: Final = "anthropic"
BUDGETS: Final = (2048, 4096)
RECALL_SHARE: Final = 0.9  # of plain bm25's probe recall
COST_RATIO: Final = 1.25  # of the cheapest configuration's input cost
REFERENCE_LABEL: Final = "bm25"
CACHE_MARK: Final = "+cache"
_SLACK: Final = 1e-12


def _configurations(groups: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each (spec, placement) of one (profile, static prefix, budget): its probe
    recall and its mean input cost per conversation (every request)."""
    out = []
    for g in groups:
        if not g.get("probe_recall") or not g.get("input_cost"):
            continue
        costs = {DEFAULT_PLACEMENT: g["input_cost"]["mean"]}
        placements = g.get("placements") or {}
        for placement in PLACEMENT_ORDER[1:]:  # (summary.json sorts its keys)
            if placements.get(placement) is not None:
                costs[placement] = placements[placement]["mean"]
        for placement, cost in costs.items():
            out.append(
                {
                    "spec": g["spec"],
                    "label": g["label"],
                    "placement": placement,
                    "recall": g["probe_recall"]["mean"],
                    "input_cost": cost,
                }
            )
    return out


def _name(c: Mapping[str, Any]) -> str:
    """A configuration as the report names it: its label, and its placement
    unless the default."""
    placement = c["placement"]
    return c["label"] if placement == DEFAULT_PLACEMENT else f"{c['label']} @ {placement}"


def target(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per (static prefix, budget) under PROFILE: bm25's recall, the cheapest
    configuration, each cache-aware configuration's share of that recall and
    multiple of that cost, and whether any meets both."""
    replay = summary.get("replay") or {}
    by_where: dict[tuple[int, Any], list[Mapping[str, Any]]] = {}
    for g in replay.get("groups", []):
        if g["profile"] == PROFILE and g["budget"] in BUDGETS:
            by_where.setdefault((g["static_prefix_tokens"], g["budget"]), []).append(g)
    out = []
    for (static, budget), groups in by_where.items():
        configs = _configurations(groups)
        reference = next(
            (c for c in configs if c["label"] == REFERENCE_LABEL and c["placement"] == "default"),
            None,
        )
        if reference is None:
            continue
        order = {id(c): i for i, c in enumerate(configs)}
        cheapest = min(configs, key=lambda c: (c["input_cost"], -c["recall"], order[id(c)]))
        for c, on in zip(configs, pareto(configs), strict=True):
            c["pareto"] = on
            c["cost_vs_cheapest"] = c["input_cost"] / cheapest["input_cost"]
            c["recall_share_of_bm25"] = (
                c["recall"] / reference["recall"] if reference["recall"] else None
            )
            c["cost_vs_bm25"] = c["input_cost"] / reference["input_cost"]
            c["cache_aware"] = CACHE_MARK in c["label"]
            c["met"] = (
                c["cache_aware"]
                and c["recall_share_of_bm25"] is not None
                and c["recall_share_of_bm25"] >= RECALL_SHARE - _SLACK
                and c["cost_vs_cheapest"] <= COST_RATIO + _SLACK
            )
        aware = [c for c in configs if c["cache_aware"]]
        met = [c for c in aware if c["met"]]
        keeping = [c for c in aware if (c["recall_share_of_bm25"] or 0) >= RECALL_SHARE - _SLACK]
        # the one named: the cheapest that meets it; else the cheapest keeping the
        # recall; else the best recall (ties to the cheaper)
        best: dict[str, Any] | None
        if met or keeping:
            best = min(met or keeping, key=lambda c: (c["input_cost"], -c["recall"]))
        else:
            best = min(aware, key=lambda c: (-c["recall"], c["input_cost"])) if aware else None
        out.append(
            {
                "profile": PROFILE,
                "budget": budget,
                "static_prefix_tokens": static,
                "bm25_recall": reference["recall"],
                "bm25_input_cost": reference["input_cost"],
                "cheapest": {
                    k: cheapest[k] for k in ("spec", "label", "placement", "recall", "input_cost")
                },
                "configurations": configs,
                "best": best,
                "met": bool(met),
            }
        )
    return sorted(out, key=lambda r: (r["static_prefix_tokens"], r["budget"]))


_KEEP: Final = (
    "spec",
    "budget",
    "suite",
    "scenario",
    "turn",
    "t",
    "probe",
    "status",
    "prefix_break",
    "recall_tokens",
    "cache_action",
)


def _records(path: Path) -> list[dict[str, Any]]:
    """The replay records at the target's budgets, with only what the bench
    reads (PROFILE's figures)."""
    out = []
    for record in read_results(path):
        if record.get("budget") not in BUDGETS or "cache" not in record:
            continue
        kept: dict[str, Any] = {k: record[k] for k in _KEEP if k in record}
        kept["cache"] = {PROFILE: record["cache"].get(PROFILE, {})}
        placements = record.get("cache_placements") or {}
        kept["cache_placements"] = {
            p: {PROFILE: by[PROFILE]} for p, by in placements.items() if PROFILE in by
        }
        out.append(kept)
    return out


def cost_terms(
    records: Iterable[Mapping[str, Any]], profile: Profile
) -> dict[tuple[str, Any, str, str], dict[str, float]]:
    """Per (spec, budget, static prefix, placement) under PROFILE: the mean per
    conversation of each cost term over every request (``read`` x cached,
    ``write`` x written, ``uncached``), and of the cost."""
    sums: dict[tuple[str, Any, str, str], dict[str, float]] = {}
    chains: dict[tuple[str, Any, str, str], set[tuple[str, str]]] = {}
    for r in records:
        if r.get("status") != "ok":
            continue
        chain = (r["suite"], r["scenario"])
        priced = [(DEFAULT_PLACEMENT, r["cache"].get(PROFILE, {}))]
        priced += [(p, by.get(PROFILE, {})) for p, by in r.get("cache_placements", {}).items()]
        for placement, by_static in priced:
            for static, f in by_static.items():
                key = (r["spec"], r["budget"], static, placement)
                acc = sums.setdefault(key, dict.fromkeys((*TERMS, "cost"), 0.0))
                acc["write"] += profile.write * f["written"]
                acc["read"] += profile.read * f["cached"]
                acc["uncached"] += f["uncached"]
                acc["cost"] += f["cost"]
                chains.setdefault(key, set()).add(chain)
    return {key: {k: v / len(chains[key]) for k, v in acc.items()} for key, acc in sums.items()}


def cost_breakdown(records: Iterable[Mapping[str, Any]], ttl_s: float) -> list[dict[str, Any]]:
    """Per (spec, budget, static prefix): the input cost under PROFILE (default
    placement) split into cold, break and append steps and probes (see the
    module docstring), with request counts and the recall blocks' tokens."""
    chains: dict[tuple[str, int, str, str], list[Mapping[str, Any]]] = {}
    for r in records:
        if r.get("status") != "ok":
            continue
        chains.setdefault((r["spec"], r["budget"], r["suite"], r["scenario"]), []).append(r)
    kinds = ("cold", "break", "append", "probe")
    sums: dict[tuple[str, int, str], dict[str, float]] = {}
    for (spec, budget, _, _), steps in chains.items():
        steps.sort(key=lambda r: r["turn"])
        last_t: float | None = None
        for r in steps:
            if r.get("probe"):
                kind = "probe"
            else:
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
        total = sum(acc.get(f"{k}_cost", 0.0) for k in kinds)
        out.append(
            {
                "spec": spec,
                "budget": budget,
                "static_prefix_tokens": int(static),
                "input_cost": total,
                **{
                    f"{k}_share": acc.get(f"{k}_cost", 0.0) / total if total else None
                    for k in kinds
                },
                **{f"{k}_steps": int(acc.get(f"{k}_steps", 0)) for k in kinds},
                "recall_tokens": int(acc.get("recall_tokens", 0)),
                "actions": {
                    k.removeprefix("action_"): int(v)
                    for k, v in acc.items()
                    if k.startswith("action_")
                },
            }
        )
    return out


def measure(run_dir: Path, suites: Sequence[Path] | None = None) -> dict[str, Any]:
    """The target, the cost terms, the physical limit and the cost breakdown of
    a replay run directory (``suites``: its scenarios; found from its manifest
    when not given)."""
    summary = json.loads((run_dir / "summary.json").read_text("utf-8"))
    profiles = load_profiles()
    profile = profiles[PROFILE]
    results = journal_path(run_dir)
    rows = target(summary)
    records = _records(results) if results.exists() else []
    terms = cost_terms(records, profile)
    breakdown = cost_breakdown(records, profile.ttl_s)
    paths = list(suites) if suites is not None else find_suites(run_dir, summary)
    ran = {(r["suite"], r["scenario"]) for r in records}
    scenarios = [
        sc for path in paths for sc in load_suite(path) if not ran or (path.stem, sc.id) in ran
    ]
    limits = {
        static: physical_limit(scenarios, profile, static)
        for static in sorted({r["static_prefix_tokens"] for r in rows})
    }
    for row in rows:
        static = str(row["static_prefix_tokens"])
        for role in ("best", "cheapest"):
            c = row[role]
            if c is not None:
                c["terms"] = terms.get((c["spec"], row["budget"], static, c["placement"]))
        limit = limits.get(row["static_prefix_tokens"])
        row["physical_limit"] = (
            None
            if limit is None
            else {**limit, "cost_vs_cheapest": limit["input_cost"] / row["cheapest"]["input_cost"]}
        )
        row["stopped_by"] = _stopped_by(row)
    return {
        "target": {
            "profile": PROFILE,
            "budgets": list(BUDGETS),
            "recall_share_of_bm25": RECALL_SHARE,
            "cost_vs_cheapest": COST_RATIO,
            "input_cost": "every request: conversation steps and probes",
        },
        "suites": [str(p) for p in paths],
        "results": rows,
        "cost_breakdown": breakdown,
    }


def _stopped_by(row: Mapping[str, Any]) -> str | None:
    """The cost term of the best configuration furthest above the cheapest's."""
    best, cheapest = row["best"], row["cheapest"]
    if row["met"] or best is None or not best.get("terms") or not cheapest.get("terms"):
        return None
    return max(TERMS, key=lambda t: best["terms"][t] - cheapest["terms"][t])


def _units(value: float) -> str:
    return f"{value:,.0f}"


def format_report(report: Mapping[str, Any]) -> str:
    lines = [
        f"cache-aware target: >= {RECALL_SHARE:.0%} of bm25's probe recall at <= "
        f"{COST_RATIO}x the cheapest configuration's input cost (every request, probes "
        "included); a configuration is a (spec, breakpoint placement) pair",
    ]
    for row in report["results"]:
        head = (
            f"{row['profile']}, static prefix {row['static_prefix_tokens']}, "
            f"budget {row['budget']}: "
        )
        best = row["best"]
        if best is None:
            lines.append(head + "target not met (best: no cache-aware configuration)")
            continue
        said = (
            f"recall {best['recall_share_of_bm25']:.2f} of bm25's, "
            f"cost {best['cost_vs_cheapest']:.2f}x the cheapest"
        )
        if row["met"]:
            lines.append(head + f"target met by {_name(best)} ({said})")
            continue
        lines.append(head + f"target not met (best: {_name(best)}, {said})")
        cheapest = row["cheapest"]
        if best.get("terms") and cheapest.get("terms"):
            split = ", ".join(f"{t} {_units(best['terms'][t])}" for t in TERMS)
            low = ", ".join(f"{t} {_units(cheapest['terms'][t])}" for t in TERMS)
            lines.append(
                f"    per conversation, {split}; the cheapest ({_name(cheapest)}): {low}; "
                f"{row['stopped_by']} stops it"
            )
        limit = row["physical_limit"]
        if limit is None:
            lines.append("    physical limit: the run's scenarios were not found (--scenarios)")
        else:
            design = min(limit["designs"], key=lambda d: limit["designs"][d])
            verdict = (
                "the target is out of reach"
                if limit["cost_vs_cheapest"] > COST_RATIO + _SLACK
                else "within the target's cost"
            )
            lines.append(
                f"    physical limit: {_units(limit['input_cost'])} per conversation, "
                f"{limit['cost_vs_cheapest']:.2f}x the cheapest (cheaper overall: {design}; "
                + ", ".join(f"{t} {_units(limit[t])}" for t in TERMS)
                + f"): {verdict}"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path, help="a replay run (summary.json, results.jsonl.gz)")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    parser.add_argument(
        "--scenarios",
        type=Path,
        action="append",
        help="the run's suite (repeatable; default: found by its manifest's name and sha256)",
    )
    args = parser.parse_args(argv)
    summary = args.run_dir / "summary.json"
    if not summary.is_file():
        where = f"{parser.prog}: error: {args.run_dir}"
        print(f"{where}: not a run folder (expected {summary.name} in it)", file=sys.stderr)
        return EXIT_USAGE
    try:
        report = measure(args.run_dir, args.scenarios)
    except (InputError, OSError, ValueError) as exc:  # one line, as every command's
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(format_report(report))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", "utf-8")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
