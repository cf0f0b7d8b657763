"""The eval benchmark's grid figure: cells per second of one full ``run_cells``
with each executor (serial, process at 1 and 2 workers, Dask on a LocalCluster
of 2), every run from an empty directory; and Dask's fixed cost, a resumed run
with nothing left to do, Dask minus serial."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any, Final

from packproof.evals.bench.common import log_eval as log
from packproof.evals.bench.common import timed
from packproof.evals.run.config import EvalConfig
from packproof.evals.run.runner import run_cells, tasks

__all__ = ["DASK_WORKERS", "dask_available", "grid_run", "measure_grid"]

DASK_WORKERS: Final = 2
# (label, executor, jobs) of the grid runs.
GRID_RUNS: Final[tuple[tuple[str, str, int], ...]] = (
    ("serial", "serial", 1),
    ("process-1", "process", 1),
    ("process-2", "process", 2),
    ("dask-2", "dask", DASK_WORKERS),
)


def dask_available() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


def grid_run(config: EvalConfig, executor: str, jobs: int, root: Path) -> tuple[float, int]:
    """Seconds of one full run into a fresh directory under ``root``, and its records."""
    out = Path(tempfile.mkdtemp(prefix="run-", dir=root))
    try:
        count = 0

        def go() -> None:
            nonlocal count
            count = len(run_cells(config, out, jobs=jobs, executor=executor))

        return timed(go)[0], count
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _noop_run(config: EvalConfig, executor: str, jobs: int, done: Path) -> float:
    """Seconds of a resumed run that finds every cell done: the executor's fixed
    cost (for Dask, starting and stopping the cluster) plus reading the results."""
    return timed(lambda: run_cells(config, done, jobs=jobs, executor=executor, resume=True))[0]


def measure_grid(config: EvalConfig, repeats: int, dask: bool) -> dict[str, Any]:
    work = tasks(config)
    turns = sum(len(t.turns) for t in work)
    cells = turns * len(config.specs) * len(config.budgets)
    runs = [r for r in GRID_RUNS if dask or r[1] != "dask"]
    seconds: dict[str, list[float]] = {label: [] for label, _, _ in runs}
    noop: dict[str, list[float]] = {"serial": [], "dask": []}
    with tempfile.TemporaryDirectory(prefix="packproof-bench-eval-") as tmp:
        root = Path(tmp)
        done = root / "done"
        run_cells(config, done, executor="serial")  # a finished run for the no-op timings
        for attempt in range(1, repeats + 1):
            for label, executor, jobs in runs:
                s, count = grid_run(config, executor, jobs, root)
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
