"""``packproof tune`` on replays: probe recall under a cost ceiling, or cost under a recall floor.

A space's ``objective`` block replaces its single ``metric``. Each conversation
(replay scenario) at each budget is one **unit**, with two values per candidate
spec: its *probe recall* (the mean ``evidence_recall`` of its probes that have
gold evidence) and its *relative cost* (Σ cost / Σ input tokens over every
request it makes, conversation steps and probes alike (a policy that recalls
only on probes is not free), priced under the objective's profile
behind its static prefix; 1.0 = no caching). A mean is over units, so the
conversation is the unit: cells are never pooled across conversations.

Per fold, the candidates whose mean over the training conversations satisfies
the constraint (relative cost <= ceiling, or probe recall >= floor) compete on
the objective (ties: the earlier candidate). If none satisfies it, the one
closest to satisfying it (lowest cost for a ceiling, highest recall for a
floor) is taken and the fold is flagged ``feasible: false``. The chosen
candidate is scored on the held-out conversations only; the units of all folds
give the tuned policy's held-out recall and cost, compared, unit by unit, with
the strategy's plain defaults (:func:`~packproof.evals.report.stats.paired`).

The block itself is read and checked against what the config prices by
:mod:`packproof.evals.tune.search`. This module also holds what both kinds of search
share: a :class:`Candidate` (strategy parameters, optionally cache-aware
options) and the folds.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from packproof.evals.report.stats import mean_ci, paired
from packproof.evals.run.config import EvalConfig
from packproof.evals.run.replay import PLACEMENTS
from packproof.packer.cacheaware import build_cache_aware
from packproof.packer.errors import InputError
from packproof.packer.packspec import PackSpec
from packproof.packer.strategies import build_strategy

__all__ = [
    "Candidate",
    "Objective",
    "choose",
    "cross_validate",
    "folds",
    "make_candidate",
    "objective_result",
    "require_two",
    "unit_values",
]

SIGNIFICANCE: Final = 0.05
_AT: Final = " @ "  # between a spec and the breakpoint placement it is priced under
RECALL, COST = "probe_recall", "relative_cost"
Unit = tuple[str, str]  # (conversation, budget)
Pair = tuple[float | None, float | None]  # (probe recall, relative cost); None: undefined


@dataclass(frozen=True)
class Candidate:
    """One point of the search: strategy parameters and, with a ``cache`` block,
    cache-aware options (only the searched ones; the rest are defaults)."""

    params: dict[str, Any]
    cache: dict[str, Any] | None
    spec: str  # canonical: strategy(...) or strategy(...)+cache(...)
    label: str

    def fields(self) -> dict[str, Any]:
        """``params`` and, cache-aware, ``cache``: what tune.json reports as chosen."""
        return {"params": self.params, **({} if self.cache is None else {"cache": self.cache})}


def make_candidate(
    strategy: str, params: Mapping[str, Any], cache: Mapping[str, Any] | None
) -> Candidate:
    pack = PackSpec(
        build_strategy(strategy, params), None if cache is None else build_cache_aware(cache)
    )
    return Candidate(
        dict(params), None if cache is None else dict(cache), pack.spec_string(), pack.label()
    )


def folds(groups: Sequence[str], k: int, seed: int) -> list[list[str]]:
    """The conversations dealt into at most ``k`` folds (seeded shuffle)."""
    order = sorted(groups)
    random.Random(seed).shuffle(order)
    k = max(1, min(k, len(order)))
    return [order[i::k] for i in range(k)]


@dataclass(frozen=True)
class Objective:
    goal: str  # RECALL (maximized under a cost ceiling) or COST (minimized above a recall floor)
    bound: float
    profile: str
    static: int

    @property
    def maximize(self) -> bool:
        return self.goal == RECALL

    def satisfied(self, pair: Pair) -> bool:
        recall, cost = pair
        if self.maximize:
            return cost is not None and cost <= self.bound
        return recall is not None and recall >= self.bound

    def score(self, pair: Pair) -> float:
        """The objective, higher is better (undefined: worst)."""
        value = pair[0] if self.maximize else pair[1]
        return -math.inf if value is None else value if self.maximize else -value

    def closeness(self, pair: Pair) -> float:
        """Higher is closer to the constraint: -cost for a ceiling, recall for a floor."""
        value = pair[1] if self.maximize else pair[0]
        return -math.inf if value is None else -value if self.maximize else value

    def constraint(self) -> str:
        return (
            f"relative cost <= {self.bound:g}"
            if self.maximize
            else f"probe recall >= {self.bound:g}"
        )

    def to_json(self) -> dict[str, Any]:
        head = {"maximize": RECALL, "cost_ceiling": self.bound}
        if not self.maximize:
            head = {"minimize": COST, "recall_floor": self.bound}
        return {**head, "profile": self.profile, "static_prefix_tokens": self.static}


def unit_values(
    records: Iterable[Mapping[str, Any]], objective: Objective
) -> dict[str, dict[Unit, Pair]]:
    """Per spec and unit (conversation, budget): probe recall and relative cost
    (of every request, steps and probes) from the replay records whose status is ok."""
    acc: dict[str, dict[Unit, list[Any]]] = {}
    static = str(objective.static)
    for r in records:
        if "probe" not in r:  # not a replay record
            continue
        unit = (r["scenario"], str(r["budget"]))
        a = acc.setdefault(r["spec"], {}).setdefault(unit, [[], 0.0, 0])
        if r["status"] != "ok":
            continue
        recall = r["metrics"].get("evidence_recall") if r["probe"] else None
        if recall is not None:
            a[0].append(float(recall))
        f = r["cache"][objective.profile][static]  # every request costs, probes too
        a[1] += f["cost"]
        a[2] += f["cached"] + f["written"] + f["uncached"]
        # each breakpoint placement a caller could choose is a configuration too
        for placement, priced in r.get("cache_placements", {}).items():
            f = priced.get(objective.profile, {}).get(static)
            if f is None:
                continue
            b = acc.setdefault(placed(r["spec"], placement), {}).setdefault(unit, [[], 0.0, 0])
            if r["probe"] and recall is not None:
                b[0].append(float(recall))
            b[1] += f["cost"]
            b[2] += f["cached"] + f["written"] + f["uncached"]
    return {
        spec: {
            unit: (
                float(np.mean(recalls)) if recalls else None,
                cost / tokens if tokens else None,
            )
            for unit, (recalls, cost, tokens) in units.items()
        }
        for spec, units in acc.items()
    }


def placed(spec: str, placement: str) -> str:
    """A configuration's key: the spec priced under a breakpoint placement."""
    return f"{spec}{_AT}{placement}"


def configurations(specs: Sequence[str], values: Mapping[str, Any]) -> list[str]:
    """Each spec, then the spec under each breakpoint placement it was priced
    under (a caller chooses where its breakpoints go: docs/metrics.md,
    "Breakpoint placements"), in spec order."""
    out = []
    for spec in specs:
        out.append(spec)
        out += [placed(spec, p) for p in PLACEMENTS if placed(spec, p) in values]
    return out


def _split(key: str) -> tuple[str, str | None]:
    spec, _, placement = key.partition(_AT)
    return spec, placement or None


def means(values: Mapping[Unit, Pair], keep: set[str]) -> Pair:
    """Mean probe recall and mean relative cost over the units of the conversations
    in ``keep`` (each over the units where it is defined)."""
    recalls = [p[0] for u, p in values.items() if u[0] in keep and p[0] is not None]
    costs = [p[1] for u, p in values.items() if u[0] in keep and p[1] is not None]
    return (
        float(np.mean(recalls)) if recalls else None,
        float(np.mean(costs)) if costs else None,
    )


def choose(
    specs: Sequence[str], train: Mapping[str, Pair], objective: Objective
) -> tuple[str, bool]:
    """The best of ``specs`` on the objective among those whose training values
    satisfy the constraint; if none does, the closest to it (``feasible`` False).
    Ties go to the earlier spec."""
    feasible = [s for s in specs if objective.satisfied(train[s])]
    pool, key = (feasible, objective.score) if feasible else (list(specs), objective.closeness)
    _, best = max(enumerate(pool), key=lambda p: (key(train[p[1]]), -p[0]))
    return best, bool(feasible)


def _pair(pair: Pair) -> dict[str, float | None]:
    return {RECALL: pair[0], COST: pair[1]}


def cross_validate(
    values: Mapping[str, Mapping[Unit, Pair]],
    specs: Sequence[str],
    default: str,
    parts: Sequence[Sequence[str]],
    objective: Objective,
) -> tuple[list[dict[str, Any]], list[tuple[Unit, Pair, Pair]]]:
    """Per fold (``parts``: held-out conversations), the spec chosen on the other
    folds' units and its values on this fold's; and the held-out units of all
    folds as (unit, tuned values, default values)."""
    units = sorted(values[default])
    groups = {u[0] for u in units}
    out: list[dict[str, Any]] = []
    held: list[tuple[Unit, Pair, Pair]] = []
    for part in parts:
        test = set(part)
        train = groups - test
        best, feasible = choose(
            specs, {s: means(values.get(s, {}), train) for s in specs}, objective
        )
        held += [
            (u, values[best].get(u, (None, None)), values[default][u])
            for u in units
            if u[0] in test
        ]
        out.append(
            {
                "held_out": sorted(test),
                "spec": best,
                "feasible": feasible,
                "train": _pair(means(values[best], train)),
                "held_out_values": _pair(means(values[best], test)),
                "default_held_out": _pair(means(values[default], test)),
            }
        )
    return out, held


def _held_out(held: Sequence[tuple[Unit, Pair, Pair]], config: EvalConfig) -> dict[str, Any]:
    stat = (config.resamples, config.confidence, config.seed)
    out: dict[str, Any] = {"tuned": {}, "default": {}, "versus_default": {}}
    for k, name in enumerate((RECALL, COST)):
        tuned = [h[1][k] for h in held if h[1][k] is not None]
        default = [h[2][k] for h in held if h[2][k] is not None]
        both = [(h[1][k], h[2][k]) for h in held if h[1][k] is not None and h[2][k] is not None]
        out["tuned"][name] = mean_ci(np.array(tuned, dtype=float), *stat)
        out["default"][name] = mean_ci(np.array(default, dtype=float), *stat)
        a = np.array([p[0] for p in both], dtype=float)
        b = np.array([p[1] for p in both], dtype=float)
        out["versus_default"][name] = paired(a, b, *stat)
    return out


def _mean_of(stats: Mapping[str, Any]) -> Pair:
    recall, cost = (None if stats[n] is None else float(stats[n]["mean"]) for n in (RECALL, COST))
    return recall, cost


def require_two(groups: Sequence[str], what: str) -> None:
    """Cross-validation holds one conversation out: refuse fewer than two."""
    if len(groups) < 2:
        raise InputError(
            "--config", f"tuning needs at least two {what} to hold one out", found=len(groups)
        )


def objective_result(
    records: Sequence[Mapping[str, Any]],
    candidates: Sequence[Candidate],
    default: Candidate,
    space: Mapping[str, Any],
    objective: Objective,
    config: EvalConfig,
) -> dict[str, Any]:
    """tune.json's content for an objective search (before the common fields)."""
    values = unit_values(records, objective)
    units = sorted(values.get(default.spec, {}))
    groups = sorted({u[0] for u in units})
    require_two(groups, "replay conversations")
    specs = configurations([c.spec for c in candidates], values)
    by_spec = {c.spec: c for c in reversed(candidates)}  # a repeated spec: its first candidate
    parts = folds(groups, space.get("folds", 5), space.get("seed", 0))
    fold_rows, held = cross_validate(values, specs, default.spec, parts, objective)
    for row in fold_rows:
        spec, placement = _split(row.pop("spec"))
        chosen = by_spec[spec]
        row.update({"chosen": _fields(chosen, placement), "label": chosen.label})
    stats = _held_out(held, config)
    tuned_ok = objective.satisfied(_mean_of(stats["tuned"]))
    default_ok = objective.satisfied(_mean_of(stats["default"]))
    vs = stats["versus_default"][objective.goal]
    better = vs is not None and vs["p_value"] < SIGNIFICANCE
    better = better and (vs["mean"] > 0 if objective.maximize else vs["mean"] < 0)
    final, feasible = choose(
        specs, {s: means(values.get(s, {}), set(groups)) for s in specs}, objective
    )
    return {
        "objective": objective.to_json(),
        "conversations": len(groups),
        "units": len(units),
        "default": {
            "spec": default.spec,
            "label": default.label,
            "held_out": stats["default"],
            "satisfies_on_held_out": default_ok,
        },
        "tuned": {
            "held_out": stats["tuned"],
            "versus_default": stats["versus_default"],
            "satisfies_on_held_out": tuned_ok,
        },
        "chosen": {
            **_fields(by_spec[_split(final)[0]], _split(final)[1]),
            "spec": _split(final)[0],
            "label": by_spec[_split(final)[0]].label,
            "all_conversations": _pair(means(values[final], set(groups))),
            "feasible": feasible,
        },
        # the tuned policy meets the constraint on held-out conversations, and
        # the defaults do not or it is significantly better on the objective
        "wins_on_held_out": tuned_ok and (not default_ok or better),
        "folds": fold_rows,
    }


def _fields(candidate: Candidate, placement: str | None) -> dict[str, Any]:
    """A candidate's searched values, and the breakpoint placement chosen with
    it (``default``: the profile's own)."""
    return {**candidate.fields(), "placement": placement or "default"}
