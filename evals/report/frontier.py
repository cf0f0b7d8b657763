"""The recall/cost frontier of a replay report (docs/metrics.md, "Replays"):
one point per spec with both a probe recall and an input cost, the Pareto
frontier over them, the choice (the cheapest within 90% of the best recall:
maf-cachebench's rule) and the sentences that say it. Every comparison is made
on the rounded figures ``summary.json`` shows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = [
    "WITHIN",
    "build_frontier",
    "choice_sentence",
    "frontier_sentence",
    "frontier_title",
    "pareto",
]

WITHIN: Final = 0.9  # the choice's recall is at least this share of the best recall
_SLACK: Final = 1e-12  # 0.9 * best in floating point may land a hair above the recall


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
