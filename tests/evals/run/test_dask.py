"""The Dask executor: the same reports as the serial one, every cluster it starts
stopped again, and an unreachable scheduler one clear line, fast."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import time
from pathlib import Path

import pytest

from packproof.evals.run.config import load_config
from packproof.evals.run.evaluate import evaluate
from packproof.evals.run.runner import run_cells
from packproof.packer import InputError
from tests.evals.run.test_runner import reports, write_config
from tests.journal import records as journal_records
from tests.paths import ROOT

pytest.importorskip(
    "distributed", reason="the Dask executor needs the dask extra: pip install 'packproof[dask]'"
)

UNREACHABLE = "tcp://127.0.0.1:1"  # nothing listens on port 1: connection refused
CONNECT_TIMEOUT_S = 10  # what the runner gives Client(...)
REPORTS = ("summary.json", "summary.md", "metrics.csv")


def small_config(tmp: Path) -> Path:
    return write_config(
        tmp,
        suites=[
            str(ROOT / "scenarios/compiled/lossless-claw.jsonl"),
            str(ROOT / "scenarios/compiled/conversations.jsonl"),
        ],
        strategies=["chronological", "bm25"],
        budgets=["scenario", 32],
    )


@pytest.fixture(scope="module")
def dask_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, set[int]]:
    """One Dask run on the runner's own LocalCluster (2 workers), the serial run of
    the same config, and the pids of any child processes the Dask run left behind.
    LocalCluster startup is slow: one cluster for the whole module."""
    tmp = tmp_path_factory.mktemp("dask")
    cfg = small_config(tmp)
    serial = evaluate(cfg, out_root=tmp / "serial", jobs=1, executor="serial", resume=False)
    before = {p.pid for p in multiprocessing.active_children()}
    dask = evaluate(cfg, out_root=tmp / "dask", jobs=2, executor="dask", resume=False)
    left = {p.pid for p in multiprocessing.active_children()} - before
    return serial, dask, left


def test_dask_reports_match_serial(dask_run: tuple[Path, Path, set[int]]) -> None:
    serial, dask, _ = dask_run
    assert reports(dask) == reports(serial)
    assert len(journal_records(dask)) == len(journal_records(serial)) > 0


def test_dask_run_stops_its_cluster(dask_run: tuple[Path, Path, set[int]]) -> None:
    _, _, left = dask_run
    assert left == set(), "the LocalCluster's worker processes outlived the run"


def test_unreachable_scheduler_is_one_line_and_fast(tmp_path: Path) -> None:
    cfg = small_config(tmp_path)
    out = tmp_path / "cli"
    # The command line first, in the background: both wait out the same timeout.
    cli = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "packproof",
            "eval",
            "--config",
            str(cfg),
            "--executor",
            "dask",
            "--scheduler",
            UNREACHABLE,
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    earlier = tmp_path / "api" / "results.jsonl.gz"  # a previous run's results: must survive
    earlier.parent.mkdir()
    earlier.write_text('{"key": "k", "metrics": {}}\n')
    try:
        start = time.perf_counter()
        with pytest.raises(InputError, match=r"--scheduler: cannot reach the Dask scheduler"):
            run_cells(
                load_config(cfg),
                tmp_path / "api",
                jobs=2,
                executor="dask",
                scheduler=UNREACHABLE,
            )
        assert time.perf_counter() - start < 3 * CONNECT_TIMEOUT_S
        stdout, stderr = cli.communicate(timeout=6 * CONNECT_TIMEOUT_S)
    finally:
        cli.kill()
        cli.wait()
    assert cli.returncode == 2, stderr
    assert stderr.startswith("packproof: error: --scheduler: cannot reach the Dask scheduler")
    assert len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr
    assert stdout == ""
    written = {p.name for p in out.rglob("*")} if out.exists() else set()
    assert not written & {*REPORTS, "latest"}, f"reports written: {sorted(written)}"
    assert earlier.read_text() == '{"key": "k", "metrics": {}}\n'  # nothing a user had is lost
