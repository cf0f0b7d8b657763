"""Benchmark of the eval grid: ``python -m packproof.evals.bench.eval`` (``make bench``).

Two measurements, written to ``reports/bench/eval.json`` and printed as a table.

**The grid.** Cells per second of one full ``run_cells`` over a config (default
``evals/default.yaml``) with each executor: ``serial``; ``process`` at 1 and 2
workers; ``dask`` on a LocalCluster of 2 worker processes. Every run starts from
an empty temporary directory (nothing resumed) and includes what a user waits
for: building the task list, writing and re-reading ``results.jsonl.gz`` and, for
the pools, starting and stopping them (for Dask, the whole LocalCluster). Note
that the runner runs ``process`` at one job in-process, with no pool (see
``packproof.evals.run.executors.executor_map``), so that figure is the serial
path by construction. The serial-to-Dask overhead is Dask seconds over serial
seconds, and (Dask - serial) seconds per cell in ms; Dask also gets a second
worker, so the figure nets parallelism against overhead. The fixed part of it, starting and stopping
the cluster, is measured apart as a resumed run with nothing left to do, Dask
minus serial.

**An extra strategy on a cached scenario.** ``run_task`` parses a task's turns
once and packs them under every spec and budget. It is timed over the config's
tasks and budgets with specs ``[S]``, ``[S, T]`` and ``[T]`` (by default S = bm25
and T = hybrid, bm25(stopwords=english), clarity), on the config's suite and,
when the data is there, on LoCoMo (real conversation sizes). The extra
strategy's cost is t([S, T]) - t([S]), compared with t([S]), which also pays for
what is shared (``extra`` says what is and what is not); the target is
a ratio under 10%. The first strategy's time is split into parse, term
statistics, packing and the rest (metrics and records), and each extra
strategy's into packing and the rest.

Every figure is the best of its repeats (``--repeats`` full grid runs; and
``--task-repeats`` passes over the tasks, interleaved so that drift of the
machine hits every variant alike), each after a full ``gc.collect()``.
Targets are evaluated and reported, never asserted: the exit code is 0 whatever
they say, and 2 only for bad arguments or a bad config. No date is written.

This module is the run and the command line; the parts are beside it:
``grid``, ``extra``, ``locomo`` and ``report`` (the targets
and the table).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from packproof.evals.bench.common import EXIT_OK, EXIT_USAGE, positive, version
from packproof.evals.bench.common import log_eval as log
from packproof.evals.bench.common import machine as pack_machine
from packproof.evals.bench.eval.extra import measure_extra
from packproof.evals.bench.eval.grid import DASK_WORKERS, dask_available, measure_grid
from packproof.evals.bench.eval.locomo import LOCOMO_TASK_REPEATS, measure_locomo
from packproof.evals.bench.eval.report import evaluate_targets, format_report
from packproof.evals.run.config import load_config
from packproof.packer.errors import InputError
from packproof.packer.files import write_atomic
from packproof.packer.jsonio import dumps
from packproof.packer.strategies import build_strategy, parse_spec

__all__ = ["main", "run"]

SCHEMA: Final = "packproof.bench.eval.v1"
DEFAULT_CONFIG: Final = Path("evals/default.yaml")
DEFAULT_OUT: Final = Path("reports/bench/eval.json")
DEFAULT_FIRST: Final = "bm25"
DEFAULT_EXTRA: Final = ("hybrid", "bm25(stopwords=english)", "clarity")


@dataclass(frozen=True)
class Config:
    config: Path
    repeats: int
    task_repeats: int
    first: str
    extras: list[str]
    out: Path


def machine() -> dict[str, Any]:
    """The packer benchmark's machine block, with the Dask versions."""
    return {
        **pack_machine(),
        "dask": version("dask"),
        "distributed": version("distributed"),
    }


def run(config: Config) -> dict[str, Any]:
    """The whole benchmark; returns the report written to ``config.out``."""
    eval_config = load_config(config.config)
    dask = dask_available()
    if not dask:
        log("distributed is not installed (pip install 'packproof[dask]'): no Dask figures")
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


# ---------------------------------------------------------------- command line


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
        prog="python -m packproof.evals.bench.eval",
        description="Benchmark the eval grid's executors and the cost of an extra strategy.",
    )
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="eval config YAML")
    parser.add_argument(
        "--repeats", type=positive, default=3, help="full grid runs per executor (best)"
    )
    parser.add_argument(
        "--task-repeats", type=positive, default=10, help="passes per extra-strategy figure"
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
