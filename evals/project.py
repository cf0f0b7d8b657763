"""A packproof project's files: the starter set ``packproof init`` writes, the
baseline ``packproof baseline`` records, and the defaults ``packproof eval`` and
``packproof gate`` fall back to.

The starter set ships as package data (``evals/data/``), so an installed packproof
works outside this repository: ``packproof init``, ``packproof scenarios compile``,
``packproof baseline``, ``packproof eval`` and ``packproof gate`` run it as it is.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import Any, Final, NamedTuple

from packproof.evals.run.folder import INCOMPLETE
from packproof.evals.run.journal import LEGACY_RESULTS, RESULTS
from packproof.packer.errors import InputError
from packproof.packer.files import Input, write_files
from packproof.packer.jsonio import loads

__all__ = [
    "BASELINE",
    "CONFIG",
    "GATES",
    "RUN_FILES",
    "STARTER",
    "Baseline",
    "baseline_files",
    "complete_run",
    "default_gates",
    "init_project",
    "run_files",
    "shipped_space",
    "space_file",
    "write_baseline",
]

DATA: Final = Path(__file__).resolve().parent / "data"
CONFIG: Final = "packproof.yaml"  # `packproof eval` reads it from the working folder
GATES: Final = "gates.yaml"  # `packproof gate` prefers it there to the shipped one
# `packproof baseline` writes here, and `packproof gate --baseline` defaults to its summary
BASELINE: Final = Path("reports") / "baseline"
# what `packproof init DIR` writes (relative to DIR) from which shipped file
STARTER: Final = {
    CONFIG: "packproof.yaml",
    GATES: "gates.yaml",
    "scenarios/example.yaml": "example.yaml",
}
# a run's files that commands read (the gate, compare, baseline), by what each holds:
# the summary, the cells (metrics.csv, or the baseline's gzipped copy) and the journal
RUN_FILES: Final = {
    "summary.json": "summary",
    "metrics.csv": "cells",
    "metrics.csv.gz": "cells",
    RESULTS: "results",
    LEGACY_RESULTS: "results",
}


def default_gates() -> Path:
    """``gates.yaml`` in the working folder when there is one, else the shipped gates."""
    local = Path(GATES)
    return local if local.exists() else DATA / "gates.yaml"


def _shipped_spaces() -> list[str]:
    return sorted(p.stem for p in (DATA / "spaces").glob("*.yaml"))


def shipped_space(strategy: str) -> Path:
    """The search space ``packproof tune`` uses for ``strategy`` when given none."""
    path = DATA / "spaces" / f"{strategy}.yaml"
    if not path.exists():
        raise InputError(
            "--space",
            f"no shipped search space for strategy {strategy!r}; pass --space FILE, or "
            f"--space with a shipped space's name: {', '.join(_shipped_spaces())}",
        )
    return path


def space_file(given: str | None, strategy: str) -> Path:
    """The search space of ``packproof tune --space``: a file, or a shipped space by
    name (``bm25-cache``: the shipped files are out of reach of an installed
    package's user otherwise); with none given, the strategy's shipped space."""
    if given is None:
        return shipped_space(strategy)
    path = Path(given)
    shipped = DATA / "spaces" / f"{given}.yaml"
    if path.exists() or not shipped.exists():
        return path  # a missing file is named by the loader, as any missing input
    return shipped


def run_files(path: Path, who: str) -> list[Input]:
    """The files of the run at ``path`` (a run folder, or a summary file and the
    files beside it) that a command reads and so must never write, each named
    for errors as ``who``'s summary, cells or results."""
    folder, summary = (path, path / "summary.json") if path.is_dir() else (path.parent, path)
    beside = [(folder / n, what) for n, what in RUN_FILES.items() if n != "summary.json"]
    return [Input(summary, f"{who}'s summary"), *(Input(p, f"{who}'s {w}") for p, w in beside)]


def init_project(folder: Path) -> list[Path]:
    """Write the starter set into ``folder``, all or nothing: refused, writing
    nothing, when any of its files already exists (a user's file is never
    overwritten), and undone when a write fails midway, so that it can be run
    again."""
    shipped = {folder / rel: DATA / name for rel, name in STARTER.items()}
    contents = {target: source.read_text("utf-8") for target, source in shipped.items()}
    reads = [Input(source, "a shipped starter file") for source in shipped.values()]
    return write_files(contents, inputs=reads, mode="create")


def baseline_files(out: Path) -> list[Path]:
    """What :func:`write_baseline` writes into ``out``: the cells first, then the
    summary the gate reads them beside."""
    return [out / "metrics.csv.gz", out / "summary.json"]


class Baseline(NamedTuple):
    """What :func:`write_baseline` recorded: the run folder it took, that run's id,
    and the files it wrote."""

    run: Path
    run_id: str
    files: list[Path]


def complete_run(path: Path) -> tuple[Path, str]:
    """The run folder at ``path`` (a run folder, ``reports/<name>/latest``, or a
    run's ``summary.json``) and its run id, refused with one line unless the run is
    complete: its ``summary.json`` (an eval summary) and ``metrics.csv`` written and
    no ``INCOMPLETE`` marker left (``evals/run/folder.py``)."""
    folder = path.parent if path.name == "summary.json" and path.is_file() else path
    where = str(folder)
    if not folder.is_dir():
        raise InputError("", "no such run folder", source=where)
    if (folder / INCOMPLETE).exists():
        raise InputError(
            "",
            "an incomplete run (interrupted, or still running): finish it with "
            "`packproof eval --resume`, or give a complete run",
            source=where,
        )
    missing = [n for n in ("summary.json", "metrics.csv") if not (folder / n).is_file()]
    if missing:
        raise InputError(
            "",
            "not a complete run folder",
            expected="summary.json and metrics.csv, as `packproof eval` writes them",
            found=f"no {' and no '.join(missing)}",
            source=where,
        )
    summary: Any = loads((folder / "summary.json").read_bytes(), source=f"{where}/summary.json")
    manifest = summary.get("manifest") if isinstance(summary, dict) else None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("run_id"), str):
        raise InputError(
            "/manifest/run_id", "not an eval summary (no run id)", source=f"{where}/summary.json"
        )
    return folder, manifest["run_id"]


def _gzipped(data: bytes) -> bytes:
    """``data`` gzipped with ``gzip -n -9``'s settings: best compression, no file
    name, mtime 0, so the same cells give the same bytes and a committed baseline's
    diff is real. The deflate stream is zlib's, so the bytes are not GNU gzip's,
    but they decompress to the same cells."""
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=out, mtime=0) as f:
        f.write(data)
    return out.getvalue()


def write_baseline(run: Path, out: Path = BASELINE) -> Baseline:
    """Record the complete run at ``run`` as the baseline in ``out``: its
    ``summary.json`` byte for byte, and its ``metrics.csv`` gzipped as
    ``metrics.csv.gz`` (the cells ``packproof gate --significance`` pairs).
    Returns the run taken and the files written.

    Both files are built in memory and written all or nothing
    (:func:`~packproof.packer.files.write_files`): the baseline is never half of
    one run and half of another. Neither may be one of the run's own files."""
    folder, run_id = complete_run(run)
    cells, summary = baseline_files(out)
    contents = {
        cells: _gzipped((folder / "metrics.csv").read_bytes()),
        summary: (folder / "summary.json").read_bytes(),
    }
    write_files(contents, inputs=run_files(folder, "the run"))
    return Baseline(folder, run_id, list(contents))
