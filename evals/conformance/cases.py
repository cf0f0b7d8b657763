"""Reading a peer's case file and checking every case: what every adapter shares.

A case file holds one JSON object a line, UTF-8, gzipped when its name ends in ``.gz``.
A line that is not a JSON object, or a case without the fields its adapter reads, is
bad input: one :class:`~packproof.packer.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packproof.packer.errors import InputError
from packproof.packer.jsonio import loads

__all__ = [
    "PEERS",
    "Difference",
    "Outcome",
    "Peer",
    "check_file",
    "read_cases",
    "read_json_lines",
    "register",
]


@dataclass(frozen=True)
class Difference:
    """One way packproof's result differs from the peer's recording."""

    what: str  # which output, e.g. "bm25lite: selected"
    expected: Any  # the peer's
    found: Any  # packproof's


@dataclass(frozen=True)
class Mismatch:
    """A case that differs: where it is, how, and the inputs that explain it."""

    case: str
    line: int
    differences: tuple[Difference, ...]
    inputs: str  # the adapter's diagnosis of the inputs behind the differences


@dataclass(frozen=True)
class Peer:
    """A peer system's adapter.

    ``check(case)`` returns the differences of one case (empty when it matches) and
    ``diagnose(case)`` says which of its inputs explain them; both raise
    :class:`InputError` (pointer inside the case) when the case lacks what they read.
    ``default_file`` is the shared recording, relative to the project's folder;
    ``also_files`` are further shared recordings checked with it, when present,
    when no file is named."""

    name: str
    system: str  # the peer's code the recording came from
    default_file: Path
    check: Callable[[Mapping[str, Any]], list[Difference]]
    diagnose: Callable[[Mapping[str, Any]], str]
    also_files: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """Every case of one file checked."""

    peer: str
    source: str
    cases: int
    mismatches: list[Mismatch] = field(default_factory=list)

    @property
    def matched(self) -> int:
        return self.cases - len(self.mismatches)


PEERS: dict[str, Peer] = {}


def register(peer: Peer) -> Peer:
    """Add an adapter to :data:`PEERS`; a name already taken is a bug, refused."""
    if peer.name in PEERS:
        raise ValueError(f"peer {peer.name!r} is registered twice")
    PEERS[peer.name] = peer
    return peer


def read_json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Each JSON value of a JSON-lines file (gzipped when its name ends in ``.gz``)
    with its 1-based line number, blank lines skipped; a line that is not JSON is
    bad input naming the file and line."""
    source = str(path)
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
    except OSError as exc:  # missing, unreadable, or not gzip data (gzip.BadGzipFile)
        raise InputError("", f"cannot read file: {exc}", source=source) from None
    except (EOFError, zlib.error):
        raise InputError("", "the gzip data is cut short or corrupt", source=source) from None
    for number, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            yield number, loads(line)
        except InputError as exc:
            raise InputError(f"line {number}", exc.message, source=source) from None


def read_cases(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each case of a file with its 1-based line number (blank lines skipped)."""
    for number, case in read_json_lines(path):
        if not isinstance(case, dict):
            raise InputError(
                f"line {number}",
                "a case is a JSON object",
                expected="object",
                found=type(case).__name__,
                source=str(path),
            )
        yield number, case


def check_file(peer: Peer, path: Path) -> Outcome:
    """Check every case of ``path`` with ``peer``; bad input names the file and line."""
    source = str(path)
    count = 0
    mismatches = []
    for number, case in read_cases(path):
        count += 1
        try:
            differences = peer.check(case)
            if differences:
                mismatches.append(
                    Mismatch(
                        str(case.get("id", f"line {number}")),
                        number,
                        tuple(differences),
                        peer.diagnose(case),
                    )
                )
        except InputError as exc:
            where = f"line {number}: {exc.where}" if exc.where else f"line {number}"
            raise InputError(
                where, exc.message, expected=exc.expected, found=exc.found, source=source
            ) from None
    if not count:
        raise InputError(
            "",
            "the case file holds no case",
            expected="one JSON object a line",
            found="nothing",
            source=source,
        )
    return Outcome(peer.name, source, count, mismatches)
