"""A run's journal as the tests read it: its records made whole (the reader
every report uses), or its lines as stored (compact, gzip members undone)."""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

from packproof.evals.run.journal import journal_path, read_results


def records(run: Path) -> list[dict[str, Any]]:
    """The records of the run in folder ``run``, whole, in journal order."""
    return read_results(journal_path(run))


def stored_lines(run: Path) -> list[bytes]:
    """The journal's lines as stored (each ending in a newline)."""
    return journal_lines(journal_path(run))


def journal_lines(path: Path) -> list[bytes]:
    """The lines of the gzipped journal at ``path``, its members undone."""
    data = path.read_bytes()
    text = b""
    while data:
        member = zlib.decompressobj(31)
        text += member.decompress(data)
        data = member.unused_data
    return text.splitlines(keepends=True)
