"""A run's folder: named safely under ``--out``, owned by one run at a time,
marked incomplete until its reports are written, and published as ``latest``
only then, in one atomic step.

- A config's ``name`` becomes a safe path component, so ``../../x`` or ``/abs``
  never writes outside ``--out``.
- A run holds an exclusive lock on its folder (``fcntl.flock``); a second eval
  into a folder a running eval holds is refused with one line, before it can
  touch the first run's ``results.jsonl.gz``. The lock goes with the process, so a
  killed run leaves nothing stale.
- ``INCOMPLETE`` sits in the folder until every report is written; ``latest`` is
  a symbolic link to the newest complete run, switched by one ``rename``, so it
  never mixes two runs' files.
- ``prune`` (``packproof eval --keep N``) removes a config's older complete runs,
  keeping the newest N and always the one ``latest`` points at; an incomplete
  run (interrupted, to resume, or still running) is never removed.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from packproof.packer.errors import InputError
from packproof.packer.files import write_atomic

__all__ = [
    "INCOMPLETE",
    "LATEST",
    "check_out",
    "owned",
    "prune",
    "safe_component",
    "switch_latest",
]

INCOMPLETE: Final = "INCOMPLETE"
LATEST: Final = "latest"
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]+")


def safe_component(name: str) -> str:
    """``name`` as one path component: runs of other characters become ``_`` and
    leading dots go (no ``..``, no hidden folder); never empty."""
    return _UNSAFE.sub("_", name).lstrip(".") or "run"


@contextmanager
def owned(run_dir: Path) -> Iterator[None]:
    """Hold ``run_dir`` for this run, marked incomplete until the block ends
    without an error."""
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        lock = os.open(run_dir / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise InputError(
            "", f"cannot use the run folder: {exc.strerror}", source=str(run_dir)
        ) from None
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(
                "",
                "another packproof run is writing into this folder; wait for it, or pass --out",
                source=str(run_dir),
            ) from None
        write_atomic(run_dir / INCOMPLETE, "this run has not finished its reports\n")
        yield
        (run_dir / INCOMPLETE).unlink()
    finally:
        os.close(lock)


def check_out(out_root: Path, config_root: Path) -> None:
    """Refuse, before anything is written, an ``--out`` that is not a folder and a
    ``latest`` under it that packproof did not make: a file, or a folder without
    a run's ``summary.json`` (an older packproof copied the run there)."""
    for folder in (out_root, config_root):
        if folder.exists() and not folder.is_dir():
            raise InputError(
                "",
                "not a folder (expected a folder to hold run folders, found a file)",
                source=str(folder),
            )
    latest = config_root / LATEST
    if latest.is_symlink() or not latest.exists():
        return
    if not (latest.is_dir() and (latest / "summary.json").is_file()):
        found = "a folder that is not a run" if latest.is_dir() else "a file"
        raise InputError(
            "",
            f"not packproof's link to the newest run (expected a symbolic link, found {found});"
            " move it away or pass another --out",
            source=str(latest),
        )


def switch_latest(out_root: Path, run_dir: Path) -> None:
    """Point ``out_root/latest`` at ``run_dir`` in one atomic rename. A ``latest``
    folder left by an older packproof (a copy, not a link) is replaced."""
    latest = out_root / LATEST
    fresh = out_root / f".{LATEST}.{os.getpid()}.tmp"
    fresh.unlink(missing_ok=True)
    try:
        os.symlink(run_dir.name, fresh, target_is_directory=True)
        if latest.is_dir() and not latest.is_symlink():
            old = out_root / f".{LATEST}.{os.getpid()}.old"
            os.replace(latest, old)
            shutil.rmtree(old, ignore_errors=True)
        os.replace(fresh, latest)
    except OSError as exc:
        fresh.unlink(missing_ok=True)
        raise InputError("", f"cannot switch latest: {exc.strerror}", source=str(latest)) from None


def prune(config_root: Path, keep: int) -> list[Path]:
    """Remove all but the ``keep`` newest complete runs under ``config_root``
    (newest by when their summary was written); returns what was removed."""
    latest = config_root / LATEST
    current = latest.resolve() if latest.is_symlink() else None
    runs = [
        d
        for d in config_root.iterdir()
        if d.is_dir()
        and not d.is_symlink()
        and not d.name.startswith(".")
        and (d / "summary.json").is_file()
        and not (d / INCOMPLETE).exists()
    ]
    runs.sort(key=lambda d: ((d / "summary.json").stat().st_mtime_ns, d.name), reverse=True)
    kept = runs[:keep]
    if current is not None and current not in [d.resolve() for d in kept]:
        kept = [*kept[: max(0, keep - 1)], current]
    removed = [d for d in runs if d.resolve() not in {k.resolve() for k in kept}]
    for d in removed:
        shutil.rmtree(d, ignore_errors=True)
    return removed
