"""The eval benchmark's cost of an extra strategy on a cached scenario.

``run_task`` parses a task's turns once and packs them under every spec and
budget. It is timed over a config's tasks and budgets with specs ``[S]``,
``[S, T]`` and ``[T]``; the extra strategy's cost is t([S, T]) - t([S]),
compared with t([S]), which also pays for what is shared. What is shared and
what is not:

- per task (up to 32 turns of one scenario): a conversation's item list is
  parsed and counted once; each turn takes its prefix of the item table;
- per item table and tokenizer: term statistics (document lengths, the scanned
  text) and each query term's counts (``termstats.MemoStats``), so bm25 and
  hybrid, which share the default analyzer, count a prompt's terms once;
  ``bm25(stopwords=english)`` has its own analyzer; ``clarity`` reads no text;
- per turn: the reservation (fresh tail, anchors, candidates), packproof's own
  pack entries for the citation check, and the oracle at each budget;
- per spec and turn: the ranking (the scoring arithmetic) and the ranking
  metrics (nDCG, MRR);
- per cell (spec x budget): the fill, the rest of the metrics and the record.

So an extra strategy is never free: it pays its scoring and its cells' fills,
metrics and records, the same per-cell work as the first strategy. To show
where the time goes the first strategy is split into parse, term statistics,
packing (reserve, rank and decide at every budget, no metrics) and the rest
(metrics and records), and each extra strategy into packing and the rest, by
timing the same loops cut short. The variants are interleaved within each pass
so that drift of the machine hits every one alike.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from packproof.evals.bench.common import log_eval as log
from packproof.evals.bench.common import timed
from packproof.evals.run.config import SCENARIO_BUDGET, EvalConfig
from packproof.evals.run.runner import Task, parsed_turns, run_task, tasks
from packproof.packer.pipeline import cyclic_gc_paused, decide, rank, reserve
from packproof.packer.strategies import build_strategy, parse_spec
from packproof.packer.strategies.bm25 import Bm25Params

__all__ = ["measure_extra"]


def _run_tasks(work: Sequence[Task], specs: Sequence[str], budgets: Sequence[int | str]) -> None:
    for task in work:
        run_task(task, specs, budgets)


def _parse_only(work: Sequence[Task], first: str, stats: bool) -> None:
    """What ``run_task`` does before packing: parse the turns (a conversation's
    items once per task); with ``stats``, also count the terms the first
    strategy's tokenizer needs (once per item table)."""
    name, params = parse_spec(first)
    strategy = build_strategy(name, params)
    analyzer = strategy.analyzer() if stats and isinstance(strategy, Bm25Params) else None
    with cyclic_gc_paused():
        for task in work:
            for _, base, _ in parsed_turns(task.scenario, task.turns):
                if analyzer is not None:
                    base.items.term_stats(analyzer)


def _pack_only(work: Sequence[Task], specs: Sequence[str], budgets: Sequence[int | str]) -> None:
    """``run_task`` without the per-cell metrics and records: parse, reserve
    once per turn, rank once per spec, and decide every budget, as ``run_task``
    does."""
    strategies = [build_strategy(*parse_spec(spec)) for spec in specs]
    with cyclic_gc_paused():
        for task in work:
            for _, base, _ in parsed_turns(task.scenario, task.turns):
                reserved = reserve(base)
                for strategy in strategies:
                    ranked = rank(dataclasses.replace(base, strategy=strategy), reserved)
                    for budget in budgets:
                        tokens = base.budget_tokens if budget == SCENARIO_BUDGET else int(budget)
                        req = dataclasses.replace(base, strategy=strategy, budget_tokens=tokens)
                        decide(req, reserved, ranked)


def measure_extra(
    config: EvalConfig, first: str, extras: Sequence[str], repeats: int
) -> dict[str, Any]:
    work = tasks(config)
    budgets = config.budgets
    turns = sum(len(t.turns) for t in work)
    cells = turns * len(budgets)  # cells per strategy
    variants: dict[str, Callable[[], None]] = {
        "parse": partial(_parse_only, work, first, stats=False),
        "parse+stats": partial(_parse_only, work, first, stats=True),
        "pack[S]": partial(_pack_only, work, [first], budgets),
        "run[S]": partial(_run_tasks, work, [first], budgets),
    }
    for extra in extras:
        variants[f"run[S,{extra}]"] = partial(_run_tasks, work, [first, extra], budgets)
        variants[f"run[{extra}]"] = partial(_run_tasks, work, [extra], budgets)
        variants[f"pack[S,{extra}]"] = partial(_pack_only, work, [first, extra], budgets)
    best = dict.fromkeys(variants, math.inf)
    for attempt in range(1, repeats + 1):
        for key, fn in variants.items():
            best[key] = min(best[key], timed(fn)[0])
        log(f"extra strategy pass {attempt}/{repeats}: {first} alone {best['run[S]']:.4f} s")

    def ms(seconds: float) -> float:
        return seconds / cells * 1000

    t_first = best["run[S]"]
    parse, stats = best["parse"], best["parse+stats"]
    pack = best["pack[S]"]
    out_extras: dict[str, Any] = {}
    for extra in extras:
        both, alone = best[f"run[S,{extra}]"], best[f"run[{extra}]"]
        added = both - t_first
        added_pack = best[f"pack[S,{extra}]"] - pack
        out_extras[extra] = {
            "seconds_with_first": both,
            "seconds_alone": alone,
            "extra_seconds": added,
            "extra_ms_per_cell": ms(added),
            "alone_ms_per_cell": ms(alone),
            "extra_pack_ms_per_cell": ms(added_pack),
            "extra_rest_ms_per_cell": ms(added - added_pack),
            "shared_saving_ms_per_cell": ms(t_first + alone - both),
            "extra_over_first": added / t_first if t_first > 0 else None,
        }
    return {
        "first": first,
        "tasks": len(work),
        "turns": turns,
        "budgets": list(budgets),
        "cells_per_strategy": cells,
        "first_seconds": t_first,
        "first_ms_per_cell": ms(t_first),
        "first_breakdown_ms_per_cell": {
            "parse": ms(parse),
            "term_stats": ms(stats - parse),
            "pack": ms(pack - stats),
            "metrics_and_records": ms(t_first - pack),
        },
        "extras": out_extras,
    }
