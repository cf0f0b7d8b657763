"""Prompt-cache economics of replays: ``summary["replay"]``, built from the cells.

A replay plays a conversation forward step by step. Its records carry, besides
the cell metrics, ``probe``, ``prefix_break``, ``kept_prefix_tokens`` and
``cache``: per profile name and static prefix (a decimal string), the step's
``cached``, ``written`` and ``uncached`` tokens and its ``cost`` in input-token
units (REFERENCE.md section 5, "The cache model, exactly"); a cache-aware
chain's records also carry ``cache_placements``, the same figures under each
breakpoint placement a caller would choose (evals/run/replay.py). Records the
eval reads from its journal without making these figures whole point into
their chain's columns instead (evals/run/compact.py), and are summed from
them in the same order, to the same values. A **chain**
is the records of one (suite, scenario, spec, budget) in turn order: its
conversation **steps** and its **probes** (each priced from the cache state
reached, its writes discarded). Every request counts: a chain's cost is its
steps' and its probes' (a policy that recalls only on probes would otherwise
look free).

Per chain, with N = cached + written + uncached of a request, over every
request (steps and probes):

- ``cache_hit_rate`` = Σ cached / Σ N; ``relative_cost`` = Σ cost / Σ N (the
  cost relative to no caching); ``input_cost`` = Σ cost; ``input_tokens`` = Σ N;
  the split: ``conversation_cost`` (Σ cost of the steps) and ``probe_cost``
  (of the probes), which add up to ``input_cost``;
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
(cost / N), each per probe. Its ``placements`` hold the mean input cost (and
interval) under ``default`` (the profile's breakpoints: the figures above) and
each placement priced, and ``cheapest_placement`` the lowest of them (ties to
the default, then ``static+stable+end``); both None for a spec whose packs
suggest no breakpoints or a profile in ``prefix`` mode.

A **frontier** (profile, static prefix, budget) has one point per spec with
both a probe recall and an input cost: x the mean input cost of a conversation
(every request, under the default placement), y the mean probe recall. A point
is on the Pareto frontier unless another point costs no more and recalls no
less, and differs in one of the two; points equal in both are all on it. The
choice, ``cheapest_within_90``, is the point of lowest input cost among those
whose recall is at least 0.9 x the best recall (maf-cachebench's rule,
REFERENCE.md section 5); at equal cost the higher recall wins, and at equal
cost and recall the spec first in config order. ``best`` (highest recall; ties
to the cheaper, then config order) and ``cheapest`` (lowest cost; ties to the
higher recall, then config order) are what the report's sentence compares the
choice with. Every comparison is made on the rounded figures that
``summary.json`` shows, so a reader can check it from the file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from itertools import compress, groupby
from operator import add, itemgetter, truediv
from typing import Any, Final

import numpy as np

from packproof.evals.metrics.cache.model import Profile
from packproof.evals.report.frontier import build_frontier
from packproof.evals.run.compact import CACHE_ROW, FIGURES
from packproof.evals.run.replay import PLACEMENTS
from packproof.packer.jsonio import significant

__all__ = [
    "CHAIN_STATS",
    "DEFAULT_PLACEMENT",
    "PLACEMENT_ORDER",
    "PROBE_STATS",
    "build_replay",
    "cheapest_placement",
]

# The per-chain values that come from the priced requests (None when a request
# was not priced under the profile), then the others: the order a group lists them.
_COSTS: Final = (
    "cache_hit_rate",
    "relative_cost",
    "input_cost",
    "input_tokens",
    "conversation_cost",
    "probe_cost",
)
CHAIN_STATS: Final = (
    *_COSTS,
    "prefix_breaks",
    "break_share",
    "first_break",
    "divergence_tokens",
    "prefix_stability",
    "prefix_stability_tokens",
)
PROBE_STATS: Final = ("probe_recall", "probe_hit_rate", "probe_relative_cost")
# The default placement (the profile's breakpoints), then those a caller would
# choose (evals/run/replay.py); a group's cheapest is the first of the lowest.
DEFAULT_PLACEMENT: Final = "default"
PLACEMENT_ORDER: Final = (DEFAULT_PLACEMENT, *PLACEMENTS)

Stat = Callable[[np.ndarray], dict[str, Any] | None]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


class _Chain:
    """One chain's values: those of the policy alone, computed once, and its cost
    sums per (profile, static prefix), from one pass over its requests: the
    conversation steps and the probes asked along it. Under each placement a
    caller would choose (records' ``cache_placements``), its input cost too."""

    def __init__(
        self, steps: Sequence[Mapping[str, Any]], probes: Sequence[Mapping[str, Any]]
    ) -> None:
        breaks = [i for i, s in enumerate(steps) if s.get("prefix_break")]
        self.steps, self.requests = len(steps), len(steps) + len(probes)
        self.base: dict[str, Any] = {
            "prefix_breaks": len(breaks),
            "break_share": len(breaks) / (len(steps) - 1) if len(steps) > 1 else None,
            "first_break": breaks[0] if breaks else None,
            "divergence_tokens": _mean([steps[i].get("kept_prefix_tokens", 0) for i in breaks]),
        }
        for name in ("prefix_stability", "prefix_stability_tokens"):
            values = [s["metrics"][name] for s in steps if s["metrics"].get(name) is not None]
            self.base[name] = _mean(values)
        # (profile, static) -> [requests priced, Σ cached, Σ N, step costs, probe costs]
        self.sums: dict[tuple[str, str], list[Any]] = {}
        # (placement, profile, static) -> [requests priced, costs]
        self.placed: dict[tuple[str, str, str], list[Any]] = {}
        requests = (*steps, *probes)
        if any(CACHE_ROW in r for r in requests):
            self._sum_columns(requests)
            return
        for r in requests:
            probe = bool(r.get("probe"))
            for profile, by_static in r.get("cache", {}).items():
                for static, f in by_static.items():
                    acc = self.sums.get((profile, static))
                    if acc is None:
                        acc = self.sums[profile, static] = [0, 0, 0, [], []]
                    acc[0] += 1
                    acc[1] += f["cached"]
                    acc[2] += f["cached"] + f["written"] + f["uncached"]
                    acc[4 if probe else 3].append(f["cost"])
            for placement, by_profile in r.get("cache_placements", {}).items():
                for profile, by_static in by_profile.items():
                    for static, f in by_static.items():
                        placed = self.placed.setdefault((placement, profile, static), [0, []])
                        placed[0] += 1
                        placed[1].append(f["cost"])

    def _sum_columns(self, requests: Sequence[Mapping[str, Any]]) -> None:
        """The same sums from the chain's columns (records read without their
        figures made whole): the same values, added in the same order."""
        rows = [(r[CACHE_ROW], bool(r.get("probe"))) for r in requests if CACHE_ROW in r]
        figures = rows[0][0][0]
        if any(row[0] is not figures for row, _ in rows):
            raise ValueError("a chain's records point into another chain's cache figures")
        every = [i for (_, i), _ in rows]
        steps = [not probe for _, probe in rows]
        probes = [probe for _, probe in rows]
        for (placement, profile, static), lists in figures.columns.items():
            cached, written, uncached, cost = _at(every, lists)
            if placement is None:
                self.sums[profile, static] = [
                    len(every),
                    sum(cached),
                    sum(map(add, map(add, cached, written), uncached)),
                    list(compress(cost, steps)),
                    list(compress(cost, probes)),
                ]
            else:
                self.placed[placement, profile, static] = [len(every), list(cost)]

    def values(self, profile: str, static: int) -> dict[str, Any]:
        """The chain's values under one profile and static prefix: ``None`` where
        undefined, and for the cost values when a request was not priced under them."""
        acc = self.sums.get((profile, str(static)))
        if not self.steps or acc is None or acc[0] != self.requests:
            return {**self.base, **dict.fromkeys(_COSTS)}
        _, cached, tokens, step_costs, probe_costs = acc
        conversation, probes = float(sum(step_costs)), float(sum(probe_costs))
        cost = conversation + probes
        return {
            **self.base,
            "cache_hit_rate": cached / tokens if tokens else None,
            "relative_cost": cost / tokens if tokens else None,
            "input_cost": cost,
            "input_tokens": tokens,
            "conversation_cost": conversation,
            "probe_cost": probes,
        }

    def placement_costs(self, profile: str, static: int) -> dict[str, float] | None:
        """The chain's input cost (every request) under the default placement and
        each placement priced on every request for this profile and static
        prefix; None when the default is undefined."""
        default = self.values(profile, static)["input_cost"]
        if default is None:
            return None
        out = {DEFAULT_PLACEMENT: default}
        for placement in PLACEMENTS:
            acc = self.placed.get((placement, profile, str(static)))
            if acc is not None and acc[0] == self.requests:
                out[placement] = float(sum(acc[1]))
        return out


def _at(rows: Sequence[int], lists: Sequence[Sequence[Any]]) -> Sequence[Sequence[Any]]:
    """Each of ``lists`` at ``rows`` (each list whole when ``rows`` is all of it, in order)."""
    if len(rows) == len(lists[0]) and rows == list(range(len(rows))):
        return lists
    if len(rows) < 2:
        return [[values[i] for i in rows] for values in lists]
    pick = itemgetter(*rows)
    return [pick(values) for values in lists]


def _probe_values(probes: Sequence[Mapping[str, Any]]) -> dict[Any, list[float]]:
    """``probe_recall``, and per (profile, static prefix) the probes' hit rates
    and relative costs, from one pass over the probes (a run of them read
    without their figures made whole, from their chain's columns at once)."""
    out: dict[Any, list[float]] = {"probe_recall": []}
    for p in probes:
        recall = p["metrics"].get("evidence_recall")
        if recall is not None:
            out["probe_recall"].append(float(recall))
    for figures, run in groupby(probes, lambda p: _figures_of(p.get(CACHE_ROW))):
        if figures is None:  # made whole: each probe's own figures
            for p in run:
                for profile, by_static in p.get("cache", {}).items():
                    for static, f in by_static.items():
                        _add_rates(out, profile, static, *([f[k]] for k in FIGURES))
            continue
        rows = [p[CACHE_ROW][1] for p in run]
        for (placement, profile, static), lists in figures.columns.items():
            if placement is None:
                _add_rates(out, profile, static, *_at(rows, lists))
    return out


def _figures_of(row: Any) -> Any:
    return None if row is None else row[0]


def _add_rates(
    out: dict[Any, list[float]],
    profile: str,
    static: str,
    cached: Sequence[Any],
    written: Sequence[Any],
    uncached: Sequence[Any],
    cost: Sequence[Any],
) -> None:
    """The hit rate and relative cost of each request priced (of some tokens)."""
    tokens = list(map(add, map(add, cached, written), uncached))
    if not any(tokens):
        return
    out.setdefault(("probe_hit_rate", profile, static), []).extend(
        map(truediv, compress(cached, tokens), filter(None, tokens))
    )
    out.setdefault(("probe_relative_cost", profile, static), []).extend(
        map(truediv, compress(cost, tokens), filter(None, tokens))
    )


def cheapest_placement(placements: Mapping[str, Mapping[str, Any] | None]) -> str | None:
    """The placement of lowest mean input cost (on the rounded figures; ties to
    the first in :data:`PLACEMENT_ORDER`, the default first)."""
    priced = [(p, stat["mean"]) for p, stat in placements.items() if stat is not None]
    if not priced:
        return None
    order = {name: i for i, name in enumerate(PLACEMENT_ORDER)}
    return min(priced, key=lambda pc: (pc[1], order.get(pc[0], len(order))))[0]


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
    starting: Callable[[], None] | None = None,
) -> dict[str, Any] | None:
    """``summary["replay"]`` from the records in cell-key order (``None`` when
    no record is a replay step); ``stats`` is the report's mean and interval.
    ``starting`` is called once the records are known to hold replays, before
    their figures are computed."""
    # (spec, budget) -> (suite, scenario) -> (conversation steps, probes)
    chains: dict[tuple[str, str], dict[tuple[str, str], tuple[list[Any], list[Any]]]] = {}
    probes: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in ordered:
        if "probe" not in r:
            continue
        key = (r["spec"], str(r["budget"]))
        chain = chains.setdefault(key, {}).setdefault((r["suite"], r["scenario"]), ([], []))
        chain[1 if r["probe"] else 0].append(r)
        if r["probe"]:
            probes.setdefault(key, []).append(r)
    if not chains:
        return None
    if starting is not None:
        starting()
    stats = _memo(stats)  # many values (recall, breaks) repeat under every profile
    parsed = {
        key: [_Chain(steps, asked) for steps, asked in by.values() if steps]
        for key, by in chains.items()
    }
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
                        "steps": sum(len(s) for s, _ in chains.get(key, {}).values()),
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
                    group["placements"] = _placements(
                        [c.placement_costs(profile, static) for c in parsed.get(key, [])], stats
                    )
                    group = significant(group)
                    group["cheapest_placement"] = (
                        None
                        if group["placements"] is None
                        else cheapest_placement(group["placements"])
                    )
                    here.append(group)
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


def _placements(
    per_chain: Sequence[Mapping[str, float] | None], stats: Stat
) -> dict[str, Any] | None:
    """A group's input cost under each placement, over its chains: a placement
    counts only when every chain priced under the default was priced under it
    too, so that the placements compare the same conversations (None when no
    placement besides the default does)."""
    priced = [c for c in per_chain if c is not None]  # (as input_cost counts them)
    names = [p for p in PLACEMENT_ORDER if all(p in c for c in priced)]
    if len(names) < 2:
        return None
    return {p: stats(np.array([c[p] for c in priced], dtype=np.float64)) for p in names}
