"""Prompt-cache economics of replays: ``summary["replay"]``, built from the cells.

A replay plays a conversation forward step by step. Its records carry, besides
the cell metrics, ``probe``, ``prefix_break``, ``kept_prefix_tokens`` and
``cache``: per profile name and static prefix (a decimal string), the step's
``cached``, ``written`` and ``uncached`` tokens and its ``cost`` in input-token
units (REFERENCE.md section 5, "The cache model, exactly"). A **chain** is the
non-probe records of one (suite, scenario, spec, budget) in turn order; the
**probes** are that key's probe records (priced from the cache state reached,
their writes discarded, so they are not part of the conversation's cost).

Per chain, with N = cached + written + uncached of a step:

- ``cache_hit_rate`` = Σ cached / Σ N; ``relative_cost`` = Σ cost / Σ N (the
  cost relative to no caching); ``input_cost`` = Σ cost; ``input_tokens`` = Σ N;
- ``prefix_breaks``: steps that are breaks; ``break_share`` = breaks / (steps - 1);
- ``first_break``: the position of the first break among the chain's steps
  (0-based, probes not counted, as ``packproof cache simulate`` reports it);
- ``divergence_tokens``: the mean ``kept_prefix_tokens`` of its break steps,
  i.e. how far into the pack the packs diverged;
- ``prefix_stability`` and ``prefix_stability_tokens``: the mean of the chain's
  defined per-cell values.

A group (spec, budget, profile, static prefix) holds the mean and bootstrap
interval of each over its chains (a chain where a value is undefined is left
out), and over its probes: ``probe_recall`` (evidence recall of the probes with
gold evidence), ``probe_hit_rate`` (cached / N) and ``probe_relative_cost``
(cost / N), each per probe.

A **frontier** (profile, static prefix, budget) has one point per spec with
both a probe recall and an input cost: x the mean conversation input cost, y
the mean probe recall. A point is on the Pareto frontier unless another point
costs no more and recalls no less, and differs in one of the two; points equal
in both are all on it. The choice, ``cheapest_within_90``, is the point of
lowest input cost among those whose recall is at least 0.9 x the best recall
(maf-cachebench's rule, REFERENCE.md section 5); at equal cost the higher
recall wins, and at equal cost and recall the spec first in config order.
``best`` (highest recall; ties to the cheaper, then config order) and
``cheapest`` (lowest cost; ties to the higher recall, then config order) are
what the report's sentence compares the choice with. Every comparison is made
on the rounded figures that ``summary.json`` shows, so a reader can check it
from the file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np

from packproof.evals.metrics.cache.model import Profile
from packproof.packer.jsonio import significant

__all__ = [
    "CHAIN_STATS",
    "PROBE_STATS",
    "WITHIN",
    "build_frontier",
    "build_replay",
    "choice_sentence",
    "frontier_sentence",
    "frontier_title",
    "pareto",
]

WITHIN: Final = 0.9  # the choice's recall is at least this share of the best recall
_SLACK: Final = 1e-12  # 0.9 * best in floating point may land a hair above the recall
# Per-chain values, in the order the group lists them.
CHAIN_STATS: Final = (
    "cache_hit_rate",
    "relative_cost",
    "input_cost",
    "input_tokens",
    "prefix_breaks",
    "break_share",
    "first_break",
    "divergence_tokens",
    "prefix_stability",
    "prefix_stability_tokens",
)
PROBE_STATS: Final = ("probe_recall", "probe_hit_rate", "probe_relative_cost")
_COSTS: Final = ("cache_hit_rate", "relative_cost", "input_cost", "input_tokens")

Stat = Callable[[np.ndarray], dict[str, Any] | None]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


class _Chain:
    """One chain's values: those of the policy alone, computed once, and its cost
    sums per (profile, static prefix), from one pass over its steps."""

    def __init__(self, steps: Sequence[Mapping[str, Any]]) -> None:
        breaks = [i for i, s in enumerate(steps) if s.get("prefix_break")]
        self.steps = len(steps)
        self.base: dict[str, Any] = {
            "prefix_breaks": len(breaks),
            "break_share": len(breaks) / (len(steps) - 1) if len(steps) > 1 else None,
            "first_break": breaks[0] if breaks else None,
            "divergence_tokens": _mean([steps[i].get("kept_prefix_tokens", 0) for i in breaks]),
        }
        for name in ("prefix_stability", "prefix_stability_tokens"):
            values = [s["metrics"][name] for s in steps if s["metrics"].get(name) is not None]
            self.base[name] = _mean(values)
        # (profile, static) -> [steps priced, Σ cached, Σ N, costs in step order]
        self.sums: dict[tuple[str, str], list[Any]] = {}
        for s in steps:
            for profile, by_static in s.get("cache", {}).items():
                for static, f in by_static.items():
                    acc = self.sums.get((profile, static))
                    if acc is None:
                        acc = self.sums[profile, static] = [0, 0, 0, []]
                    acc[0] += 1
                    acc[1] += f["cached"]
                    acc[2] += f["cached"] + f["written"] + f["uncached"]
                    acc[3].append(f["cost"])

    def values(self, profile: str, static: int) -> dict[str, Any]:
        """The chain's values under one profile and static prefix: ``None`` where
        undefined, and for the cost values when a step was not priced under them."""
        acc = self.sums.get((profile, str(static)))
        if not self.steps or acc is None or acc[0] != self.steps:
            return {**self.base, **dict.fromkeys(_COSTS)}
        _, cached, tokens, costs = acc
        cost = float(sum(costs))
        return {
            **self.base,
            "cache_hit_rate": cached / tokens if tokens else None,
            "relative_cost": cost / tokens if tokens else None,
            "input_cost": cost,
            "input_tokens": tokens,
        }


def _probe_values(probes: Sequence[Mapping[str, Any]]) -> dict[Any, list[float]]:
    """``probe_recall``, and per (profile, static prefix) the probes' hit rates
    and relative costs, from one pass over the probes."""
    out: dict[Any, list[float]] = {"probe_recall": []}
    for p in probes:
        recall = p["metrics"].get("evidence_recall")
        if recall is not None:
            out["probe_recall"].append(float(recall))
        for profile, by_static in p.get("cache", {}).items():
            for static, f in by_static.items():
                tokens = f["cached"] + f["written"] + f["uncached"]
                if tokens:
                    out.setdefault(("probe_hit_rate", profile, static), []).append(
                        f["cached"] / tokens
                    )
                    out.setdefault(("probe_relative_cost", profile, static), []).append(
                        f["cost"] / tokens
                    )
    return out


def pareto(points: Sequence[Mapping[str, Any]]) -> list[bool]:
    """For each point (``input_cost``, ``recall``): is it on the Pareto frontier
    (lower cost and higher recall are better)? A point is off it when another
    costs no more, recalls no less and differs in one of the two; equal points
    are all on it, whichever comes first."""
    return [
        not any(
            q["input_cost"] <= p["input_cost"]
            and q["recall"] >= p["recall"]
            and (q["input_cost"], q["recall"]) != (p["input_cost"], p["recall"])
            for q in points
        )
        for p in points
    ]


def build_frontier(
    groups: Sequence[Mapping[str, Any]], profile: str, static: int, budget: Any
) -> dict[str, Any]:
    """One frontier from its (rounded) groups, in spec order."""
    points = [
        {
            "spec": g["spec"],
            "label": g["label"],
            "input_cost": g["input_cost"]["mean"],
            "recall": g["probe_recall"]["mean"],
            "cache_hit_rate": g["cache_hit_rate"]["mean"] if g["cache_hit_rate"] else None,
        }
        for g in groups
        if g["input_cost"] and g["probe_recall"]
    ]
    for point, on in zip(points, pareto(points), strict=True):
        point["pareto"] = on
    out: dict[str, Any] = {
        "profile": profile,
        "static_prefix_tokens": static,
        "budget": budget,
        "points": points,
        "best_recall": None,
        "best": None,
        "cheapest": None,
        "cheapest_within_90": None,
    }
    if not points:
        return out
    order = {p["spec"]: i for i, p in enumerate(points)}
    best_recall = max(p["recall"] for p in points)
    cheapest = min(p["input_cost"] for p in points)
    best = min(points, key=lambda p: (-p["recall"], p["input_cost"], order[p["spec"]]))
    low = min(points, key=lambda p: (p["input_cost"], -p["recall"], order[p["spec"]]))
    choice = min(
        (p for p in points if p["recall"] >= WITHIN * best_recall - _SLACK),
        key=lambda p: (p["input_cost"], -p["recall"], order[p["spec"]]),
    )

    def ratio(a: float, b: float) -> float | None:
        return a / b if b else None

    keep = ("spec", "label", "input_cost", "recall")
    out["best_recall"] = best_recall
    out["best"] = {
        **{k: best[k] for k in keep},
        "cost_vs_choice": ratio(best["input_cost"], choice["input_cost"]),
    }
    out["cheapest"] = {
        **{k: low[k] for k in keep},
        "cost_vs_choice": ratio(low["input_cost"], choice["input_cost"]),
    }
    out["cheapest_within_90"] = {
        **{k: choice[k] for k in keep},
        "threshold": WITHIN * best_recall,
        "cost_vs_cheapest": ratio(choice["input_cost"], cheapest),
    }
    return out


def _memo(stats: Stat) -> Stat:
    """``stats``, computed once per distinct array of values."""
    seen: dict[bytes, dict[str, Any] | None] = {}

    def cached(values: np.ndarray) -> dict[str, Any] | None:
        key = values.tobytes()
        if key not in seen:
            seen[key] = stats(values)
        found = seen[key]
        return None if found is None else dict(found)

    return cached


def build_replay(
    ordered: Sequence[dict[str, Any]],
    *,
    specs: Sequence[str],
    labels: Mapping[str, str],
    budgets: Sequence[Any],
    profiles: Mapping[str, Profile],
    static_prefix_tokens: Sequence[int],
    stats: Stat,
) -> dict[str, Any] | None:
    """``summary["replay"]`` from the records in cell-key order (``None`` when
    no record is a replay step); ``stats`` is the report's mean and interval."""
    chains: dict[tuple[str, str], dict[tuple[str, str], list[dict[str, Any]]]] = {}
    probes: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in ordered:
        if "probe" not in r:
            continue
        key = (r["spec"], str(r["budget"]))
        if r["probe"]:
            probes.setdefault(key, []).append(r)
        else:
            chains.setdefault(key, {}).setdefault((r["suite"], r["scenario"]), []).append(r)
    if not chains and not probes:
        return None
    stats = _memo(stats)  # many values (recall, breaks) repeat under every profile
    parsed = {key: [_Chain(steps) for steps in by.values()] for key, by in chains.items()}
    probed = {key: _probe_values(records) for key, records in probes.items()}
    groups: list[dict[str, Any]] = []
    frontiers: list[dict[str, Any]] = []
    for profile in profiles:
        for static in static_prefix_tokens:
            for budget in budgets:
                here = []
                for spec in specs:
                    key = (spec, str(budget))
                    per_chain = [c.values(profile, static) for c in parsed.get(key, [])]
                    probe_values = probed.get(key, {})
                    group: dict[str, Any] = {
                        "spec": spec,
                        "label": labels[spec],
                        "budget": budget,
                        "profile": profile,
                        "static_prefix_tokens": static,
                        "chains": len(per_chain),
                        "steps": sum(len(s) for s in chains.get(key, {}).values()),
                        "probes": len(probes.get(key, [])),
                    }
                    for name in CHAIN_STATS:
                        values = [c[name] for c in per_chain if c[name] is not None]
                        group[name] = stats(np.array(values, dtype=np.float64))
                    for name in PROBE_STATS:
                        values = probe_values.get(
                            name if name == "probe_recall" else (name, profile, str(static)), []
                        )
                        group[name] = stats(np.array(values, dtype=np.float64))
                    here.append(significant(group))
                groups += here
                frontiers.append(build_frontier(here, profile, static, budget))
    out: dict[str, Any] = significant(
        {
            "profiles": {name: dataclasses.asdict(p) for name, p in profiles.items()},
            "static_prefix_tokens": list(static_prefix_tokens),
            "groups": groups,
            "frontiers": frontiers,
        }
    )
    return out


def _units(value: float) -> str:
    """An input cost in input-token units, as a reader wants it."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def frontier_title(frontier: Mapping[str, Any], several_prefixes: bool) -> str:
    """``anthropic, budget 4096 tokens`` (with the static prefix when it varies)."""
    budget = frontier["budget"]
    where = "each scenario's own budget" if budget == "scenario" else f"budget {budget} tokens"
    static = frontier["static_prefix_tokens"]
    prefix = f", static prefix {static:,} tokens" if several_prefixes or static else ""
    return f"{frontier['profile']}{prefix}, {where}"


def frontier_sentence(frontier: Mapping[str, Any]) -> str:
    """The answer in words: which spec is the cheapest within 90% of the best
    probe recall, and what the best one (or, when that is the choice, the
    cheapest one) costs against it for how much recall."""
    budget = frontier["budget"]
    where = "each scenario's own budget" if budget == "scenario" else f"{budget} tokens"
    static = frontier["static_prefix_tokens"]
    head = f"Under {frontier['profile']} at {where}"
    if static:
        head += f" behind a {static:,}-token static prefix"
    choice, best = frontier["cheapest_within_90"], frontier["best"]
    if choice is None:
        return (
            f"{head}, no spec has both a probe recall and a conversation cost "
            "(no probe with gold evidence was priced)."
        )
    if best["spec"] != choice["spec"]:
        said = (
            f"{head}, {choice['label']} is the cheapest spec within 90% of the best probe "
            f"recall (recall {choice['recall']:.2f}, {_units(choice['input_cost'])} "
            "input-token units per conversation)"
        )
        other, role = best, "the best"
    else:
        said = (
            f"{head}, {choice['label']} has the best probe recall ({choice['recall']:.2f}, "
            f"{_units(choice['input_cost'])} input-token units per conversation) and no "
            "cheaper spec comes within 90% of it"
        )
        other, role = frontier["cheapest"], "the cheapest"
        if other["spec"] == choice["spec"]:
            return said + ": it is also the cheapest."
    times = other["cost_vs_choice"]
    costs = (
        f"costs {times:.2f}x as much"
        if times is not None
        else f"costs {_units(other['input_cost'] - choice['input_cost'])} units more"
    )
    gain = other["recall"] - choice["recall"]
    return f"{said}; {other['label']}, {role}, {costs} for {gain:+.2f} recall."


def choice_sentence(frontier: Mapping[str, Any]) -> str | None:
    """The line under the table: the threshold and the choice's figures."""
    choice = frontier["cheapest_within_90"]
    if choice is None:
        return None
    vs = choice["cost_vs_cheapest"]
    against = (
        "" if vs is None else ", the cheapest spec" if vs == 1 else f", {vs:.2f}x the cheapest spec"
    )
    return (
        f"Cheapest within 90% of the best probe recall ({frontier['best_recall']:.3f}; "
        f"threshold {choice['threshold']:.3f}): {choice['label']}, recall "
        f"{choice['recall']:.3f}, input cost {_units(choice['input_cost'])}{against}."
    )
