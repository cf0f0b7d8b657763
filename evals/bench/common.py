"""What both benchmarks share: exit codes, progress lines, the timer, optional
imports and versions, the machine block of a report, and a command-line type."""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.metadata
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

import numpy as np

import packproof.packer as packer

__all__ = [
    "EXIT_OK",
    "EXIT_USAGE",
    "log_eval",
    "log_pack",
    "machine",
    "optional_module",
    "positive",
    "seconds_in_fresh_process",
    "timed",
    "version",
]

EXIT_OK, EXIT_USAGE = 0, 2
T = TypeVar("T")


def _progress(prog: str, message: str) -> None:
    # stderr: stdout carries the table.
    print(f"{prog}: {message}", file=sys.stderr, flush=True)


def log_pack(message: str) -> None:
    """A progress line of the packer benchmark on stderr."""
    _progress("bench", message)


def log_eval(message: str) -> None:
    """A progress line of the eval-grid benchmark on stderr."""
    _progress("bench_eval", message)


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    """Seconds of one call of ``fn`` (after a full collection) and its result."""
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def seconds_in_fresh_process(module: str, function: str, *args: str) -> float:
    """The seconds ``module.function(*args)`` returns, called in a fresh
    interpreter (``python -c``): what it times runs with none of this process's
    heap, as a pool's worker or a new command would."""
    code = f"import sys; from {module} import {function}; print({function}(*sys.argv[1:]))"
    run = [sys.executable, "-c", code, *args]
    return float(subprocess.run(run, check=True, capture_output=True, text=True).stdout)


def optional_module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "numpy": np.__version__,
        "packproof": packer.__version__,
        "bm25s": version("bm25s"),
    }


def positive(text: str) -> int:
    """An argparse type: a positive integer."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value
