"""Executors: where the runner's tasks run. Serial, a process pool, or Dask (a
LocalCluster, or a remote scheduler); each is a function mapping a task function
over tasks to record batches, in finishing order (the runner sorts records)."""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from functools import partial
from typing import Any, Final, TypeVar

from packproof.packer.errors import InputError, require

__all__ = ["Map", "check_executor", "executor_map", "run_on", "run_serial"]

T = TypeVar("T")
_PR_SET_PDEATHSIG: Final = 1  # linux/prctl.h


def _worker_init() -> None:
    """In each pool worker: die with the parent (a ``kill -9`` of the eval must
    not leave workers holding the caller's stdout), and leave Ctrl-C to the
    parent, which prints one line instead of a traceback per worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):  # no prctl: workers still end with the pool
            return
        if os.getppid() == 1:  # the parent died before prctl took effect
            os._exit(1)


Batch = list[tuple[str, str]]  # the records of one task: (cell key, JSON line)
Map = Callable[[Callable[[Any], Batch], Sequence[Any]], Iterator[Batch]]


def check_executor(executor: str) -> None:
    """A known executor whose extra is installed: checked before a run touches its
    folder."""
    if executor not in ("serial", "process", "dask"):
        raise InputError(
            "--executor", "unknown executor", expected="serial|process|dask", found=executor
        )
    if executor == "dask":
        require("distributed", "dask", "--executor dask")


def run_serial(fn: Callable[[T], Batch], work: Iterable[T]) -> Iterator[Batch]:
    for task in work:
        yield fn(task)


def run_on(executor: Executor, fn: Callable[[T], Batch], work: Sequence[T]) -> Iterator[Batch]:
    futures: list[Future[Batch]] = [executor.submit(fn, t) for t in work]
    for future in as_completed(futures):
        yield future.result()


@contextmanager
def executor_map(jobs: int, executor: str, scheduler: str | None) -> Iterator[Map]:
    """A function mapping tasks to record batches, on the chosen executor."""
    if executor == "serial" or (jobs <= 1 and executor == "process"):
        yield run_serial
    elif executor == "process":
        pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init)
        try:
            yield partial(run_on, pool)
        except BaseException:  # Ctrl-C or an error: drop the queued tasks, do not wait
            # for the running ones either (a replay is one long task): the workers
            # are stopped, and their external packers die with them.
            workers = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for worker in workers:
                worker.terminate()
            raise
        pool.shutdown()
    elif executor == "dask":
        distributed = require("distributed", "dask", "--executor dask")
        # Any: distributed ships py.typed but leaves Client and LocalCluster unannotated.
        dask: Any = distributed
        # pure=False: a record carries its latency, and uuid keys spare dask
        # tokenising every scenario to name its task.
        if scheduler:
            try:
                client = dask.Client(scheduler, timeout="10s")
            except OSError as exc:  # refused or unreachable: fails after the timeout
                raise InputError("--scheduler", f"cannot reach the Dask scheduler: {exc}") from None
            with client:
                yield partial(run_on, client.get_executor(pure=False))
        else:
            # A Client handed a cluster object does not close it: close both, or
            # every run leaks a scheduler and its worker processes until exit.
            with (
                dask.LocalCluster(
                    n_workers=max(1, jobs),
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    # a worker's bad-input error reaches the user as one line:
                    # its "Compute Failed" warning would repeat it with a traceback
                    silence_logs=logging.CRITICAL,
                ) as cluster,
                dask.Client(cluster) as client,
            ):
                yield partial(run_on, client.get_executor(pure=False))
    else:
        raise InputError(
            "--executor", "unknown executor", expected="serial|process|dask", found=executor
        )
