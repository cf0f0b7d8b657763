"""Benchmark of the eval grid: ``python -m evals.bench_eval`` (``make bench``).

Two measurements, written to ``reports/bench/eval.json`` and printed as a table.

**The grid.** Cells per second of one full ``run_cells`` over a config (default
``evals/default.yaml``) with each executor: ``serial``; ``process`` at 1 and 2
workers; ``dask`` on a LocalCluster of 2 worker processes. Every run starts from
an empty temporary directory (nothing resumed) and includes what a user waits
for: building the task list, writing and re-reading ``results.jsonl`` and, for
the pools, starting and stopping them (for Dask, the whole LocalCluster). Note
that the runner runs ``process`` at one job in-process, with no pool (see
``evals.runner._execute``), so that figure is the serial path by construction.
The serial-to-Dask overhead is Dask seconds over serial seconds, and (Dask -
serial) seconds per cell in ms; Dask also gets a second worker, so the figure
nets parallelism against overhead. The fixed part of it, starting and stopping
the cluster, is measured apart as a resumed run with nothing left to do, Dask
minus serial.

**An extra strategy on a cached scenario.** ``run_task`` parses a task's turns
once and packs them under every spec and budget. It is timed over the config's
tasks and budgets with specs ``[S]``, ``[S, T]`` and ``[T]`` (by default S = bm25
and T = hybrid, bm25(stopwords=english), clarity), on the config's suite and,
when the data is there, on LoCoMo (real conversation sizes). The extra
strategy's cost is t([S, T]) - t([S]), compared with t([S]), which also pays for
what is shared; the target is a ratio under 10%. What is shared and what is not:

- per task (up to 32 turns of one scenario): a conversation's item list is
  parsed and counted once; each turn takes its prefix of the item table;
- per item table and tokenizer: term statistics (document lengths, the scanned
  text) and each query term's counts (``termstats.MemoStats``), so bm25 and
  hybrid, which share the default analyzer, count a prompt's terms once;
  ``bm25(stopwords=english)`` has its own analyzer; ``clarity`` reads no text;
- per turn: the reservation (fresh tail, anchors, candidates), ctxpack's own
  pack entries for the citation check, and the oracle at each budget;
- per spec and turn: the ranking (the scoring arithmetic) and the ranking
  metrics (nDCG, MRR);
- per cell (spec x budget): the fill, the rest of the metrics and the record.

So an extra strategy is never free: it pays its scoring and its cells' fills,
metrics and records, the same per-cell work as the first strategy. To show
where the time goes the first strategy is split into parse, term statistics,
packing (reserve, rank and decide at every budget, no metrics) and the rest
(metrics and records), and each extra strategy into packing and the rest, by
timing the same loops cut short.

Every figure is the best of its repeats (``--repeats`` full grid runs; and
``--task-repeats`` passes over the tasks, interleaved so that drift of the
machine hits every variant alike), each after a full ``gc.collect()``.
Targets are evaluated and reported, never asserted: the exit code is 0 whatever
they say, and 2 only for bad arguments or a bad config. No date is written.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import math
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final

from ctxpack.evals.bench import pack as bench
from ctxpack.evals.run.runner import (
    SCENARIO_BUDGET,
    EvalConfig,
    Task,
    load_config,
    parsed_turns,
    run_cells,
    run_task,
    tasks,
)
from ctxpack.packer.errors import InputError
from ctxpack.packer.files import write_atomic
from ctxpack.packer.jsonio import dumps
from ctxpack.packer.pipeline import cyclic_gc_paused, decide, rank, reserve
from ctxpack.packer.strategies import build_strategy, parse_spec
from ctxpack.packer.strategies.bm25 import Bm25Params

__all__ = ["main", "run"]

SCHEMA: Final = "ctxpack.bench.eval.v1"
DEFAULT_CONFIG: Final = Path("evals/default.yaml")
DEFAULT_OUT: Final = Path("reports/bench/eval.json")
DEFAULT_FIRST: Final = "bm25"
DEFAULT_EXTRA: Final = ("hybrid", "bm25(stopwords=english)", "clarity")
DASK_WORKERS: Final = 2
# (label, executor, jobs) of the grid runs.
GRID_RUNS: Final[tuple[tuple[str, str, int], ...]] = (
    ("serial", "serial", 1),
    ("process-1", "process", 1),
    ("process-2", "process", 2),
    ("dask-2", "dask", DASK_WORKERS),
)
MAX_EXTRA_RATIO: Final = 0.10

EXIT_OK, EXIT_USAGE = 0, 2


def log(message: str) -> None:
    """A progress line on stderr (stdout carries the table)."""
    print(f"bench_eval: {message}", file=sys.stderr, flush=True)


def timed(fn: Callable[[], object]) -> float:
    """Seconds of one call of ``fn``, after a full collection."""
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _dask_available() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


# ---------------------------------------------------------------- the grid


def _grid_run(config: EvalConfig, executor: str, jobs: int, root: Path) -> tuple[float, int]:
    """Seconds of one full run into a fresh directory under ``root``, and its records."""
    out = Path(tempfile.mkdtemp(prefix="run-", dir=root))
    try:
        count = 0

        def go() -> None:
            nonlocal count
            count = len(run_cells(config, out, jobs=jobs, executor=executor))

        return timed(go), count
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _noop_run(config: EvalConfig, executor: str, jobs: int, done: Path) -> float:
    """Seconds of a resumed run that finds every cell done: the executor's fixed
    cost (for Dask, starting and stopping the cluster) plus reading the results."""
    return timed(lambda: run_cells(config, done, jobs=jobs, executor=executor, resume=True))


def measure_grid(config: EvalConfig, repeats: int, dask: bool) -> dict[str, Any]:
    work = tasks(config)
    turns = sum(len(t.turns) for t in work)
    cells = turns * len(config.specs) * len(config.budgets)
    runs = [r for r in GRID_RUNS if dask or r[1] != "dask"]
    seconds: dict[str, list[float]] = {label: [] for label, _, _ in runs}
    noop: dict[str, list[float]] = {"serial": [], "dask": []}
    with tempfile.TemporaryDirectory(prefix="ctxpack-bench-eval-") as tmp:
        root = Path(tmp)
        done = root / "done"
        run_cells(config, done, executor="serial")  # a finished run for the no-op timings
        for attempt in range(1, repeats + 1):
            for label, executor, jobs in runs:
                s, count = _grid_run(config, executor, jobs, root)
                if count != cells:
                    raise RuntimeError(f"{label} run wrote {count} records, expected {cells}")
                seconds[label].append(s)
                log(f"grid {label} run {attempt}/{repeats}: {s:.3f} s ({cells / s:.0f} cells/s)")
            if dask:
                noop["serial"].append(_noop_run(config, "serial", 1, done))
                noop["dask"].append(_noop_run(config, "dask", DASK_WORKERS, done))
    best = {label: min(values) for label, values in seconds.items()}
    out: dict[str, Any] = {
        "cells": cells,
        "tasks": len(work),
        "turns": turns,
        "runs": {
            label: {
                "executor": executor,
                "jobs": jobs,
                "in_process": executor == "serial" or (executor == "process" and jobs <= 1),
                "seconds": best[label],
                "cells_per_second": cells / best[label],
                "seconds_per_run": seconds[label],
            }
            for label, executor, jobs in runs
        },
        "dask_over_serial": None,
        "dask_overhead_ms_per_cell": None,
        "dask_over_process_2": None,
        "dask_fixed_seconds": None,
    }
    if dask:
        d, s = best["dask-2"], best["serial"]
        out["dask_over_serial"] = d / s
        out["dask_overhead_ms_per_cell"] = (d - s) / cells * 1000
        out["dask_over_process_2"] = d / best["process-2"]
        out["dask_fixed_seconds"] = min(noop["dask"]) - min(noop["serial"])
    return out


# ---------------------------------------------------------------- extra strategy


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
            best[key] = min(best[key], timed(fn))
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


# ---------------------------------------------------------------- the run


@dataclass(frozen=True)
class Config:
    config: Path
    repeats: int
    task_repeats: int
    first: str
    extras: list[str]
    out: Path


LOCOMO: Final = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo" / "locomo_dev.json"
)
LOCOMO_CONFIG: Final = Path(__file__).resolve().parent / "locomo.yaml"
LOCOMO_MAX_SECONDS: Final = 60.0
LOCOMO_WORKERS: Final = 2
LOCOMO_TASK_REPEATS: Final = 3  # passes per extra-strategy figure on LoCoMo (seconds each)


def measure_locomo(first: str, extras: Sequence[str], task_repeats: int) -> dict[str, Any] | None:
    """The full LoCoMo development grid (evals/locomo.yaml: every question x
    strategy x budget) with two workers, import included, once; and the cost of
    an extra strategy over its tasks (real conversation sizes, which the toy
    default suite is not). None when the data is not beside the project (it is
    never committed)."""
    if not LOCOMO.exists():
        log(f"LoCoMo is not at {LOCOMO}: no LoCoMo grid figure")
        return None
    from ctxpack.evals.scenarios.importers.locomo import import_locomo

    with tempfile.TemporaryDirectory(prefix="ctxpack-locomo-") as tmp:
        root = Path(tmp)
        (root / "evals").mkdir()
        suite = root / "reports" / "imports" / "locomo_dev.jsonl"
        start = time.perf_counter()
        scenarios, _ = import_locomo(LOCOMO)
        suite.parent.mkdir(parents=True)
        suite.write_text("".join(dumps(sc.to_json()) + "\n" for sc in scenarios), "utf-8")
        imported = time.perf_counter() - start
        shutil.copy(LOCOMO_CONFIG, root / "evals" / "locomo.yaml")
        config = load_config(root / "evals" / "locomo.yaml")
        log(f"LoCoMo grid: {len(scenarios)} conversations, {LOCOMO_WORKERS} workers")
        seconds, cells = _grid_run(config, "process", LOCOMO_WORKERS, root)
        extra = measure_extra(config, first, extras, task_repeats)
    return {
        "extra_strategy": extra,
        "cells": cells,
        "workers": LOCOMO_WORKERS,
        "import_seconds": imported,
        "run_seconds": seconds,
        "total_seconds": imported + seconds,
        "cells_per_second": cells / seconds if seconds else None,
    }


def _extra_targets(extra: dict[str, Any], suite: str) -> list[dict[str, Any]]:
    return [
        {
            "target": (
                f"{suite}: extra strategy {name} on a cached scenario < {MAX_EXTRA_RATIO:.0%} "
                f"of the first ({extra['first']}) per cell"
            ),
            "measured": figures["extra_over_first"],
            "met": figures["extra_over_first"] is not None
            and figures["extra_over_first"] < MAX_EXTRA_RATIO,
        }
        for name, figures in extra["extras"].items()
    ]


def evaluate_targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    evaluated = _extra_targets(report["extra_strategy"], report["config"]["name"])
    locomo = report.get("locomo")
    if locomo is not None:
        evaluated.extend(_extra_targets(locomo["extra_strategy"], "locomo-dev"))
        evaluated.append(
            {
                "target": f"full LoCoMo dev grid with {locomo['workers']} workers "
                f"< {LOCOMO_MAX_SECONDS:.0f} s",
                "measured": locomo["total_seconds"],
                "met": locomo["total_seconds"] < LOCOMO_MAX_SECONDS,
            }
        )
    return evaluated


def machine() -> dict[str, Any]:
    """The packer benchmark's machine block, with the Dask versions."""
    return {
        **bench.machine(),
        "dask": bench._version("dask"),
        "distributed": bench._version("distributed"),
    }


def run(config: Config) -> dict[str, Any]:
    """The whole benchmark; returns the report written to ``config.out``."""
    eval_config = load_config(config.config)
    dask = _dask_available()
    if not dask:
        log("distributed is not installed (pip install 'ctxpack[dask]'): no Dask figures")
    report: dict[str, Any] = {
        "schema": SCHEMA,
        "config": {
            "file": str(config.config),
            "name": eval_config.name,
            "specs": list(eval_config.specs),
            "budgets": list(eval_config.budgets),
            "suites": [p.name for p in eval_config.suites],
            "repeats": config.repeats,
            "task_repeats": config.task_repeats,
            "dask_workers": DASK_WORKERS,
            "dask_available": dask,
            "statistic": "seconds; best of repeats",
        },
        "machine": machine(),
        "grid": measure_grid(eval_config, config.repeats, dask),
        "extra_strategy": measure_extra(
            eval_config, config.first, config.extras, config.task_repeats
        ),
        "locomo": measure_locomo(config.first, config.extras, LOCOMO_TASK_REPEATS),
    }
    report["targets"] = evaluate_targets(report)
    return report


# ---------------------------------------------------------------- output


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _format_extra(ex: dict[str, Any], suite: str, repeats: int) -> list[str]:
    b = ex["first_breakdown_ms_per_cell"]
    lines = [
        f"extra strategy on a cached scenario ({suite}): first {ex['first']}, "
        f"{ex['cells_per_strategy']} cells per strategy ({ex['turns']} turns in {ex['tasks']} "
        f"tasks x {len(ex['budgets'])} budgets), best of {repeats}; ms per cell",
        f"  {ex['first'] + ' (first)':<28}{ex['first_ms_per_cell']:>8.4f}   parse {b['parse']:.4f}"
        f", term stats {b['term_stats']:.4f}, pack {b['pack']:.4f}, "
        f"metrics+records {b['metrics_and_records']:.4f}",
    ]
    for name, e in ex["extras"].items():
        lines.append(
            f"  {'+ ' + name:<28}{e['extra_ms_per_cell']:>8.4f}   pack "
            f"{e['extra_pack_ms_per_cell']:.4f}, metrics+records "
            f"{e['extra_rest_ms_per_cell']:.4f}; ratio {_num(e['extra_over_first'], '.1%')}; "
            f"alone {e['alone_ms_per_cell']:.4f} (sharing saves "
            f"{e['shared_saving_ms_per_cell']:.4f})"
        )
    return lines


def format_report(report: dict[str, Any]) -> str:
    grid = report["grid"]
    cfg = report["config"]
    lines = [
        f"eval grid: {cfg['name']}, {grid['cells']} cells ({grid['turns']} turns x "
        f"{len(cfg['specs'])} specs x {len(cfg['budgets'])} budgets), best of {cfg['repeats']}",
        f"  {'executor':<22}{'seconds':>10}{'cells/s':>10}",
    ]
    for label, r in grid["runs"].items():
        pool_of_one = r["executor"] == "process" and r["in_process"]
        note = "  (in-process: the runner uses no pool at 1 job)" if pool_of_one else ""
        lines.append(f"  {label:<22}{r['seconds']:>10.3f}{r['cells_per_second']:>10.0f}{note}")
    if grid["dask_over_serial"] is not None:
        lines.append(
            f"  dask/serial {grid['dask_over_serial']:.2f}x, overhead "
            f"{grid['dask_overhead_ms_per_cell']:.3f} ms/cell; dask/process-2 "
            f"{grid['dask_over_process_2']:.2f}x; cluster start+stop "
            f"{grid['dask_fixed_seconds']:.2f} s"
        )
    else:
        lines.append("  dask: not measured (distributed is not installed)")
    lines += _format_extra(report["extra_strategy"], cfg["name"], cfg["task_repeats"])
    lo = report.get("locomo")
    if lo is not None:
        lines.append(
            f"LoCoMo dev grid: {lo['cells']} cells with {lo['workers']} workers in "
            f"{lo['total_seconds']:.1f} s (import {lo['import_seconds']:.1f} s, run "
            f"{lo['run_seconds']:.1f} s, {lo['cells_per_second']:.0f} cells/s)"
        )
        lines += _format_extra(lo["extra_strategy"], "locomo-dev", LOCOMO_TASK_REPEATS)
    lines.append("targets")
    for t in report["targets"]:
        verdict = "met" if t["met"] else "NOT MET"
        shown = f"{t['measured']:.1f} s" if "LoCoMo" in t["target"] else _num(t["measured"], ".1%")
        lines.append(f"  [{verdict:>7}] {t['target']}: measured {shown}")
    return "\n".join(lines)


# ---------------------------------------------------------------- command line


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _spec(text: str) -> str:
    """A checked strategy spec, as its label: the spec without default-valued
    parameters (it builds the same strategy and keeps the table readable)."""
    try:
        name, params = parse_spec(text, "spec")
        return build_strategy(name, params, "spec").label()
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evals.bench_eval",
        description="Benchmark the eval grid's executors and the cost of an extra strategy.",
    )
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="eval config YAML")
    parser.add_argument(
        "--repeats", type=_positive, default=3, help="full grid runs per executor (best)"
    )
    parser.add_argument(
        "--task-repeats", type=_positive, default=10, help="passes per extra-strategy figure"
    )
    parser.add_argument("--first", type=_spec, default=DEFAULT_FIRST, help="the first strategy S")
    parser.add_argument(
        "--extra",
        type=_spec,
        action="append",
        help="an extra strategy T (repeatable; default: " + ", ".join(DEFAULT_EXTRA) + ")",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="report JSON path")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    extras = list(dict.fromkeys(args.extra or [_spec(s) for s in DEFAULT_EXTRA]))
    if args.first in extras:
        parser.error(f"--extra {args.first} is the first strategy")
    config = Config(args.config, args.repeats, args.task_repeats, args.first, extras, args.out)
    try:
        report = run(config)
    except InputError as exc:
        print(f"bench_eval: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(format_report(report))
    # Canonical JSON (sorted keys, fixed float digits) and no date: runs diff cleanly.
    write_atomic(config.out, dumps(report, indent=2) + "\n")
    log(f"wrote {config.out}")
    return EXIT_OK


if __name__ == "__main__":  # the guard matters: Dask's workers re-import this module
    sys.exit(main())
