"""The time a finished run's reports take, measured as the eval writes them.

An eval writes its reports in its own process after its cells: the records are
in memory by then (read from the journal as each task finished) and the
libraries only the reports use (``evaluate.REPORT_MODULES``) were imported in
a thread while the cells ran, and its suites read (once per process) before
them. :func:`reports_alone` measures the same: a fresh interpreter reads a
finished run's journal and suites and imports those libraries untimed, then
times ``write_reports`` alone. (Timed in the process of a bench
that had run a grid before, the same reports took 1-2 s more.)
"""

from __future__ import annotations

import importlib
from functools import partial
from pathlib import Path

import orjson

from packproof.evals.bench.common import seconds_in_fresh_process, timed
from packproof.evals.run.config import load_config
from packproof.evals.run.evaluate import REPORT_MODULES, write_reports
from packproof.evals.run.journal import RESULTS, read_results
from packproof.evals.run.tasks import tasks
from packproof.packer.result import cyclic_gc_paused

__all__ = ["reports_alone", "reports_once"]


def reports_alone(config: Path, run_dir: Path, out: Path, jobs: int) -> float:
    """Seconds of ``write_reports`` of the finished run ``run_dir`` (of the eval
    config ``config``, run with ``jobs`` workers) into the new folder ``out``,
    in a fresh interpreter (:func:`reports_once`)."""
    return seconds_in_fresh_process(
        "packproof.evals.bench.reports",
        "reports_once",
        str(config),
        str(run_dir),
        str(out),
        str(jobs),
    )


def reports_once(config: str, run_dir: str, out: str, jobs: str) -> float:
    """:func:`reports_alone`'s side: the seconds of writing the reports once."""
    for module in REPORT_MODULES:
        importlib.import_module(module)
    loaded, finished, target_dir = load_config(Path(config)), Path(run_dir), Path(out)
    tasks(loaded)  # the eval has read its suites before its cells (the reports ask again)
    info = orjson.loads((finished / "summary.json").read_bytes())["manifest"]
    target_dir.mkdir()
    with cyclic_gc_paused():
        records = read_results(finished / RESULTS, whole=False)
        write = partial(write_reports, loaded, records, info, target_dir, "process", int(jobs))
        return timed(write)[0]
