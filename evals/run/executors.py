"""Executors: where the runner's tasks run. Serial, a process pool, or Dask (a
LocalCluster, or a remote scheduler); each is a function mapping a task function
over tasks to record batches, in finishing order (the runner sorts records).

A worker process that dies under a task (the out-of-memory killer's
``kill -9``, a packer that kills it) stops the run with :class:`WorkerDied`,
which says how it died; the batches written before stay for ``--resume``.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

from packproof.evals.run.external import kill_packers
from packproof.evals.run.folder import INCOMPLETE
from packproof.evals.run.journal import Batch
from packproof.evals.run.process import die_with_parent
from packproof.packer.errors import InputError, RunError, require

__all__ = [
    "Map",
    "WorkerDied",
    "check_executor",
    "executor_map",
    "run_on",
    "run_serial",
    "ships",
]

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
    gc.enable()  # forked from an eval that pauses it while its records live
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_worker)
    die_with_parent(signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


# the records of one task, as the journal stores them (evals/run/journal.py)
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


class WorkerDied(RunError):
    """A worker process died under a task: ``cause`` says how; once the run
    folder is known (:meth:`left`), also that it is left ``INCOMPLETE`` with
    its finished cells and how to continue it (``resume``)."""

    def __init__(
        self, cause: str, run_dir: Path | None = None, resume: str = "rerun it with --resume"
    ) -> None:
        self.cause, self.run_dir, self.resume = cause, run_dir, resume
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.run_dir is None:
            return self.cause
        return (
            f"{self.cause}: {self.run_dir} is left {INCOMPLETE} with its finished cells; "
            f"{self.resume} to continue it"
        )

    def left(self, run_dir: Path, resume: str | None = None) -> WorkerDied:
        """The same death, in ``run_dir``, continued by ``resume``."""
        return WorkerDied(self.cause, run_dir, resume or self.resume)


# How long the workers of a broken pool are waited for, for their exit codes.
REAP_S = 30.0


def _how_they_died(workers: Sequence[Any]) -> str:
    """Which of a broken pool's worker processes died, and how, as far as its
    exit code says, once each has exited (a worker stops with SIGTERM, on which
    it exits 128 + 15, :func:`_end_worker`: another code is the one that died).
    A process's exit code is known only once it is reaped, which may come a
    moment after its death broke the pool."""
    deadline = time.monotonic() + REAP_S
    for worker in workers:
        while worker.exitcode is None and time.monotonic() < deadline:
            worker.join(max(0.0, min(0.1, deadline - time.monotonic())))
    codes = [worker.exitcode for worker in workers]
    stopped = 128 + signal.SIGTERM
    died = [c for c in codes if c not in (None, 0)]
    code = next((c for c in died if c != stopped), died[0] if died else None)
    if code is None:
        return "a worker process died"
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else "?"
        oom = ", as the out-of-memory killer does" if -code == signal.SIGKILL else ""
        return f"a worker process died (killed by signal {-code}, {name}{oom})"
    if code == stopped:
        return "a worker process died (stopped by SIGTERM)"
    return f"a worker process died (exit code {code})"


def run_on(executor: Executor, fn: Callable[[T], Batch], work: Sequence[T]) -> Iterator[Batch]:
    futures: list[Future[Batch]] = [executor.submit(fn, t) for t in work]
    for future in as_completed(futures):
        try:
            batch = future.result()
        except BrokenProcessPool:  # which one died is told once the pool is down
            raise WorkerDied("a worker process died") from None
        except Exception as exc:
            if type(exc).__name__ != "KilledWorker":  # Dask's: a task outlived its workers
                raise
            raise WorkerDied(f"Dask workers died running a task ({exc})") from None
        yield batch


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
        except BaseException as exc:  # Ctrl-C or an error: drop the queued tasks, do not
            # wait for the running ones either (a replay is one long task): the workers
            # are stopped (SIGTERM), and end their packers' process groups first.
            workers = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for worker in workers:
                worker.terminate()
            if isinstance(exc, WorkerDied):
                raise WorkerDied(_how_they_died(workers)) from None
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
