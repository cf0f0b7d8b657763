"""The verdict a report opens with, per budget: the best spec on the headline
metric, its margin over the runner-up and over the baseline (interval and p,
at the cluster unit when the cells cluster), what it costs, and the cheapest
spec within 90% of it.

Cost is what the run measured: with replays, the input cost of a conversation
(every request: its steps and its probes) under the first cache profile and
static prefix (with the hit rate); without,
the share of the pack the provider's prompt cache cannot reuse from one turn to
the next (1 - prefix stability in tokens), when the run has conversations;
otherwise the tokens packed per cell.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

__all__ = ["HEADLINE", "best_specs", "verdicts"]

# The metric a verdict ranks on, and the one it falls back to without gold evidence.
HEADLINE: Final = ("evidence_recall", "expectation_pass")
WITHIN: Final = 0.9  # the cheapest spec keeping this share of the best's headline


def _mean(stat: Mapping[str, Any] | None) -> float | None:
    return None if not stat else float(stat["mean"])


def headline(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The first headline metric any of these groups has a value of."""
    return next(
        (m for m in HEADLINE if any(_mean(g["metrics"].get(m)) is not None for g in rows)), None
    )


def best_specs(groups: Sequence[Mapping[str, Any]], budgets: Sequence[Any]) -> dict[str, str]:
    """Per budget (as text), the spec with the highest mean headline metric
    (ties: the first in config order)."""
    out = {}
    for budget in budgets:
        rows = [g for g in groups if str(g["budget"]) == str(budget)]
        metric = headline(rows)
        ranked = _ranked(rows, metric) if metric else []
        if ranked:
            out[str(budget)] = ranked[0]["spec"]
    return out


def _ranked(rows: Sequence[Mapping[str, Any]], metric: str) -> list[Mapping[str, Any]]:
    scored = [(i, g) for i, g in enumerate(rows) if _mean(g["metrics"].get(metric)) is not None]
    scored.sort(key=lambda p: (-(_mean(p[1]["metrics"][metric]) or 0.0), p[0]))
    return [g for _, g in scored]


def _cost(
    group: Mapping[str, Any], replay: Mapping[str, Any] | None
) -> tuple[str, float | None, dict[str, Any]]:
    """(basis, value where lower is cheaper, the figures shown)."""
    shown: dict[str, Any] = {
        "prefix_stability": group.get("prefix_stability"),
        "prefix_stability_tokens": group.get("prefix_stability_tokens"),
    }
    if replay is not None:
        shown.update(
            relative_cost=replay.get("relative_cost"),
            cache_hit_rate=replay.get("cache_hit_rate"),
            input_cost=replay.get("input_cost"),
        )
        return "input_cost", _mean(replay.get("input_cost")), shown
    stable = _mean(group.get("prefix_stability_tokens"))
    if stable is not None:
        return "uncached_share", 1.0 - stable, shown
    shown["tokens_used"] = group["metrics"].get("tokens_used")
    return "tokens_used", _mean(group["metrics"].get("tokens_used")), shown


def _difference(
    paired: Callable[[str, str, str], Mapping[str, Any] | None], a: str, b: str, metric: str
) -> dict[str, Any] | None:
    row = paired(a, b, metric)
    if row is None:
        return None
    unit = "conversation" if row.get("cluster") else "cell"
    stat = row.get("cluster") or row
    return {
        "mean": stat["mean"],
        "low": stat["low"],
        "high": stat["high"],
        "p_value": stat.get("p_value"),
        "n": stat["clusters"] if unit == "conversation" else stat["n"],
        "unit": unit,
        "test": "sign-flip permutation on conversation means"
        if unit == "conversation"
        else "Wilcoxon signed-rank on cells",
    }


def verdicts(
    groups: Sequence[Mapping[str, Any]],
    *,
    budgets: Sequence[Any],
    baseline: str,
    paired: Callable[[str, str, str, Any], Mapping[str, Any] | None],
    replay: Mapping[str, Any] | None,
) -> list[dict[str, Any]]:
    """One verdict per budget (see the module docstring). ``paired(a, b,
    metric, budget)`` gives the comparison a - b (aggregate.compare's row)."""
    out = []
    first = None
    if replay and replay.get("profiles"):
        first = (next(iter(replay["profiles"])), replay["static_prefix_tokens"][0])
    for budget in budgets:
        rows = [g for g in groups if str(g["budget"]) == str(budget)]
        metric = headline(rows)
        ranked = _ranked(rows, metric) if metric else []
        if not ranked or metric is None:
            out.append({"budget": budget, "metric": None})
            continue

        def here(a: str, b: str, m: str, budget: Any = budget) -> Mapping[str, Any] | None:
            return paired(a, b, m, budget)

        replay_rows = {
            g["spec"]: g
            for g in (replay or {}).get("groups", [])
            if first
            and (g["profile"], g["static_prefix_tokens"]) == first
            and str(g["budget"]) == str(budget)
        }
        # with replays every spec is priced on the same basis, or not at all
        costs = {
            g["spec"]: _cost(g, replay_rows.get(g["spec"]))
            if g["spec"] in replay_rows or not first
            else ("input_cost", None, {})
            for g in rows
        }
        best = ranked[0]
        top = _mean(best["metrics"][metric]) or 0.0
        within = [g for g in ranked if (_mean(g["metrics"][metric]) or 0.0) >= WITHIN * top]
        priced = [g for g in within if costs[g["spec"]][1] is not None]
        cheapest = min(priced, key=lambda g: costs[g["spec"]][1] or 0.0) if priced else None
        verdict: dict[str, Any] = {
            "budget": budget,
            "metric": metric,
            "best": _entry(best, metric),
            "runner_up": None,
            "baseline": None,
            "cost_basis": costs[best["spec"]][0],
            "cost": costs[best["spec"]][2],
            "cheapest_within_90": None,
        }
        if first:
            verdict["cost_profile"] = {"profile": first[0], "static_prefix_tokens": first[1]}
        if len(ranked) > 1:
            verdict["runner_up"] = {
                **_entry(ranked[1], metric),
                "difference": _difference(here, best["spec"], ranked[1]["spec"], metric),
            }
        base = next((g for g in rows if g["spec"] == baseline), None)
        if base is not None and base["spec"] != best["spec"] and base in ranked:
            verdict["baseline"] = {
                **_entry(base, metric),
                "difference": _difference(here, best["spec"], base["spec"], metric),
            }
        if cheapest is not None:
            verdict["cheapest_within_90"] = {
                **_entry(cheapest, metric),
                "cost": costs[cheapest["spec"]][1],
                "best_cost": costs[best["spec"]][1],
            }
        out.append(verdict)
    return out


def _entry(group: Mapping[str, Any], metric: str) -> dict[str, Any]:
    stat = group.get("cluster", {}).get(metric) or group["metrics"][metric]
    return {
        "spec": group["spec"],
        "label": group["label"],
        "mean": stat["mean"],
        "low": stat["low"],
        "high": stat["high"],
        "unit": "conversation" if group.get("cluster", {}).get(metric) else "cell",
    }
