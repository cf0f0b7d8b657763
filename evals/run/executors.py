"""Executors: where the runner's tasks run. Serial, a process pool, or Dask (a
LocalCluster, or a remote scheduler); each is a function mapping a task function
over tasks to record batches, in finishing order (the runner sorts records)."""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from functools import partial
from types import FrameType
from typing import Any, TypeVar

from packproof.evals.run.external import kill_packers
from packproof.evals.run.process import die_with_parent
from packproof.packer.errors import InputError, require

__all__ = ["Map", "check_executor", "executor_map", "run_on", "run_serial", "ships"]

T = TypeVar("T")


def _end_worker(signum: int, frame: FrameType | None) -> None:
    """A pool worker told to stop: the pool's terminate (Ctrl-C, an error) or
    its parent-death signal (a ``kill -9`` of the eval). Its packers' process
    groups are ended first: past a signal, no finalizer or atexit hook runs,
    and a packer's own children do not get a parent-death signal. Killed, not
    closed: closing waits, under a lock the interrupted code may hold."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut this short
    kill_packers()
    os._exit(128 + signum)


def _worker_init(parent: int) -> None:
    """In each pool worker: stop with the parent (a ``kill -9`` of the eval must
    not leave workers, or their packers, holding the caller's stdout), and leave
    Ctrl-C to the parent, which prints one line instead of a traceback per worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_worker)
    die_with_parent(signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before prctl took effect
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


def ships(executor: str, jobs: int) -> bool:
    """Whether the tasks run in other processes (a function packer must then
    pickle, and packers are started there, not here)."""
    return executor == "dask" or (executor == "process" and jobs > 1)


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
    if executor in ("serial", "process") and not ships(executor, jobs):
        yield run_serial
    elif executor == "process":
        pool = ProcessPoolExecutor(
            max_workers=jobs, initializer=_worker_init, initargs=(os.getpid(),)
        )
        try:
            yield partial(run_on, pool)
        except BaseException:  # Ctrl-C or an error: drop the queued tasks, do not wait
            # for the running ones either (a replay is one long task): the workers
            # are stopped (SIGTERM), and end their packers' process groups first.
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
