"""The run's journal, ``results.jsonl``: one record per finished cell, appended
and flushed as tasks finish, so an interrupted run resumes with nothing lost.
Reading it back checks what a crash, a hand edit or another run could leave."""

from __future__ import annotations

import math
from collections.abc import Set
from pathlib import Path
from typing import Any, Final

from packproof.packer.errors import InputError
from packproof.packer.jsonio import loads
from packproof.packer.result import cyclic_gc_paused

__all__ = ["RESULTS", "read_results"]

RESULTS: Final = "results.jsonl"


def read_results(path: Path, expected: Set[str] | None = None) -> list[dict[str, Any]]:
    """Records already in ``results.jsonl``. A torn last line (a crash mid-write)
    is dropped and truncated away; anything else wrong is an error naming the line:
    a line that is not a result record (a key, numeric or null metrics), a key seen
    twice, or (given the ``expected`` keys) a record of another grid."""
    if not path.exists():
        return []
    try:
        data = path.read_bytes()
        complete, _, torn = data.rpartition(b"\n")
        if torn:
            path.write_bytes(complete + b"\n" if complete else b"")
    except OSError as exc:
        raise InputError("", f"cannot read results: {exc.strerror}", source=str(path)) from None
    with cyclic_gc_paused():  # millions of acyclic objects: collections scan them for nothing
        return _records(path, complete, expected)


def _records(path: Path, complete: bytes, expected: Set[str] | None) -> list[dict[str, Any]]:
    records = []
    lines: dict[str, int] = {}
    for n, line in enumerate(complete.split(b"\n"), 1):
        if not line.strip():
            continue
        record = loads(line, source=f"{path}:{n}")
        if not _is_record(record):
            raise InputError(
                f"line {n}",
                "not a result record (a string key and numeric or null metrics expected)",
                source=str(path),
            )
        key = record["key"]
        if key in lines:
            raise InputError(
                f"line {n}",
                f"cell {key!r} recorded twice (first on line {lines[key]})",
                source=str(path),
            )
        if expected is not None and key not in expected:
            raise InputError(
                f"line {n}",
                f"cell {key!r} is not in this config's grid (a results file of another run?)",
                source=str(path),
            )
        lines[key] = n
        records.append(record)
    return records


def _is_record(record: Any) -> bool:
    if not isinstance(record, dict) or not isinstance(record.get("key"), str):
        return False
    metrics = record.get("metrics")
    return isinstance(metrics, dict) and all(
        v is None or (type(v) in (int, float) and math.isfinite(v)) for v in metrics.values()
    )
