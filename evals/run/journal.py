"""The run's journal, ``results.jsonl.gz``: one record per finished cell, written
as tasks finish, so an interrupted run resumes with nothing lost. Reading it
back checks what a crash, a hand edit or another run could leave.

The journal is JSON lines, gzipped: each batch of a task's records is one gzip
member appended and flushed (gzip readers, ``zcat`` and pandas read the
members as one stream). A crash mid-write leaves at most a torn last member,
which reading drops and truncates away (the resume runs that task again).
Replay records are stored compactly (evals/run/compact.py) and read back whole.
A run written before the journal was gzipped, ``results.jsonl`` (plain lines),
is read, and resumed, as it is.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Set
from pathlib import Path
from typing import Any, BinaryIO, Final, NamedTuple

import orjson

from packproof.evals.run.compact import CHAIN_COLUMNS, decode, encode
from packproof.packer.errors import InputError
from packproof.packer.jsonio import dumpb, loads, prepare
from packproof.packer.result import cyclic_gc_paused

__all__ = [
    "LEGACY_RESULTS",
    "RESULTS",
    "Batch",
    "Reader",
    "gzip_member",
    "journal_path",
    "open_journal",
    "read_journal",
    "read_results",
]

RESULTS: Final = "results.jsonl.gz"
LEGACY_RESULTS: Final = "results.jsonl"  # plain lines, as runs wrote them before
# gzip's level 4: on a LoCoMo replay's lines 1.25x level 6's bytes in 0.43x its
# time (level 1: 1.8x the bytes); reading is as fast
LEVEL: Final = 4
_CHUNK: Final = 1 << 20  # bytes of the journal fed to the decompressor at a time
_METRIC_TYPES: Final = frozenset((int, float, type(None)))
# A record's fields that hold no float, whatever the packer: ids (strings, of the
# turn's item table) and token counts (its ints), and the scenario's tags.
_NO_FLOATS: Final = frozenset(("selected", "segments", "pack_delta", "tags"))
_PLAIN: Final = frozenset((str, int, bool, type(None)))  # values written as they are


def journal_path(run_dir: Path) -> Path:
    """The journal of the run in ``run_dir``: a plain one when that run wrote
    one (and no gzipped one), else ``results.jsonl.gz``."""
    legacy = run_dir / LEGACY_RESULTS
    gzipped = run_dir / RESULTS
    return legacy if legacy.exists() and not gzipped.exists() else gzipped


def gzip_member(lines: Iterable[bytes]) -> bytes:
    """``lines`` (each ending in a newline) as one gzip member, with no file
    name and no time in its header (the same lines give the same bytes)."""
    out = zlib.compressobj(LEVEL, zlib.DEFLATED, 31)
    return b"".join((*(out.compress(line) for line in lines), out.flush()))


class Batch(NamedTuple):
    """A task's records as the journal stores them: their keys (a chain's
    columns after its records), which keys are cells (not columns), and the
    lines as one gzip member. Made where the records were (a worker), so they
    never travel between processes as objects."""

    keys: list[str]
    cells: list[bool]
    member: bytes

    @classmethod
    def of(cls, records: Iterable[dict[str, Any]]) -> Batch:
        encoded = encode(records)  # compact (evals/run/compact.py)
        return cls(
            [key for key, _, _ in encoded],
            [cell for _, _, cell in encoded],
            # a chain's columns are prepared (compact.encode): no walk over their numbers
            gzip_member(
                dumpb(_prepared(obj) if cell else obj, prepared=True) + b"\n"
                for _, obj, cell in encoded
            ),
        )

    def write(self, sink: BinaryIO, finished: Set[str], plain: bool = False) -> tuple[int, bytes]:
        """Append the lines whose keys are not ``finished`` to ``sink`` (one gzip
        member, or plain lines when ``plain``) and flush; the cells written, and
        the text of the lines written (for a :class:`Reader` that follows the file)."""
        member, cells = self.member, self.cells
        if plain or not finished.isdisjoint(self.keys):
            lines = zlib.decompress(member, 31).splitlines(keepends=True)
            kept = [i for i, key in enumerate(self.keys) if key not in finished]
            lines, cells = [lines[i] for i in kept], [cells[i] for i in kept]
            text = b"".join(lines)
            member = (text if plain else gzip_member(lines)) if lines else b""
        else:
            text = zlib.decompress(member, 31)
        if member:
            sink.write(member)
            sink.flush()
        return sum(cells), text


def _prepared(record: dict[str, Any]) -> dict[str, Any]:
    """A record fit for ``dumpb(prepared=True)``: its floats rounded and marked,
    with no walk over the fields that hold none (:data:`_NO_FLOATS`), most of a
    replay record's values."""
    return {k: v if k in _NO_FLOATS or type(v) in _PLAIN else prepare(v) for k, v in record.items()}


def _members(path: Path, data: bytes) -> tuple[bytes, int]:
    """The text of every whole gzip member of ``data``, and where the whole
    ones end (a torn last member starts there). The input is fed a bounded
    chunk at a time, so a journal of many members is never copied whole per
    member."""
    parts: list[bytes] = []
    view = memoryview(data)
    at = 0
    while at < len(data):
        member, pos, text = zlib.decompressobj(31), at, []
        try:
            while not member.eof and pos < len(data):
                piece = view[pos : pos + _CHUNK]
                text.append(member.decompress(piece))
                pos += len(piece)
        except zlib.error as exc:
            raise InputError(
                f"byte {at}", f"not a gzip member of a journal ({exc})", source=str(path)
            ) from None
        if not member.eof:
            break  # torn: a crash mid-write
        parts += text
        at = pos - len(member.unused_data)
    return b"".join(parts), at


def read_results(
    path: Path, expected: Set[str] | None = None, *, whole: bool = True
) -> list[dict[str, Any]]:
    """The records of :func:`read_journal`."""
    return read_journal(path, expected, whole=whole)[0]


def read_journal(
    path: Path, expected: Set[str] | None = None, *, whole: bool = True
) -> tuple[list[dict[str, Any]], set[str]]:
    """Records already in the journal at ``path`` (``results.jsonl.gz``, or a
    plain ``results.jsonl``), made whole. A torn end (a crash mid-write) is
    dropped and truncated away; anything else wrong is an error naming the line:
    a line that is not a result record (a key, numeric or null metrics), a key
    seen twice, a compact record that does not resolve, or (given the
    ``expected`` keys) a record of another grid. With them, every key of the
    journal (cells and chains' columns). Without ``whole``, a replay record's
    cache figures stay in its chain's columns (``compact.CACHE_ROW``), which
    the report sums, and its pack stays as the journal stores it
    (``packs.PACK_ROW``; ``packs.selected_ids`` reads its selected ids);
    every other field is whole."""
    return open_journal(path, expected, whole).finish()


def open_journal(path: Path, expected: Set[str] | None = None, whole: bool = True) -> Reader:
    """A :class:`Reader` that has read the journal at ``path`` (as
    :func:`read_journal` does; none there: nothing), to follow the lines a run
    then appends."""
    reader = Reader(path, expected, whole)
    if not path.exists():
        return reader
    try:
        data = path.read_bytes()
        if path.name.endswith(".gz"):
            complete, end = _members(path, data)
            if end < len(data):
                with path.open("r+b") as f:
                    f.truncate(end)
        else:
            complete, _, torn = data.rpartition(b"\n")
            if torn:
                path.write_bytes(complete + b"\n" if complete else b"")
    except OSError as exc:
        raise InputError("", f"cannot read results: {exc.strerror}", source=str(path)) from None
    reader.feed(complete)
    return reader


def _parse(line: bytes, source: str) -> Any:
    """One line: orjson, and the strict reader for its error (one line naming it)."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return loads(line, source=source)


class Reader:
    """A journal's records read as its text is fed, a part at a time, in file
    order (whole lines: what :meth:`Batch.write` wrote, or a file's whole
    members), so a run's records are read as its tasks finish; :meth:`finish`
    gives what reading the whole text at once gives (the checks of
    :func:`read_journal`, each error naming its line)."""

    def __init__(self, path: Path, expected: Set[str] | None = None, whole: bool = True) -> None:
        self.path, self.expected, self.whole = path, expected, whole
        self.records: list[dict[str, Any]] = []
        self.lines: dict[str, int] = {}  # every key, and its line
        self.n = 0  # lines read
        self.decoder = decode(str(path), packs=whole)  # without whole: packs left as rows

    def feed(self, text: bytes) -> None:
        path, lines, expected, decoder = self.path, self.lines, self.expected, self.decoder
        parts = text.split(b"\n")
        if parts and not parts[-1]:  # the newline that ends the last line
            parts.pop()
        with cyclic_gc_paused():  # millions of acyclic objects: collections scan them for nothing
            for n, line in enumerate(parts, self.n + 1):
                if not line.strip():
                    continue
                record = _parse(line, f"{path}:{n}")
                columns = isinstance(record, dict) and CHAIN_COLUMNS in record
                if not (columns and isinstance(record.get("key"), str)) and not _is_record(record):
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
                lines[key] = n
                if columns:
                    decoder.chain_columns(n, record)
                    continue
                if expected is not None and key not in expected:
                    raise InputError(
                        f"line {n}",
                        f"cell {key!r} is not in this config's grid (a results file of another "
                        "run?)",
                        source=str(path),
                    )
                decoder.record(n, record)
                self.records.append(record)
        self.n += len(parts)

    def finish(self, whole: bool | None = None) -> tuple[list[dict[str, Any]], set[str]]:
        """Every record (replay figures spread and packs made whole, or left in
        columns and rows: ``whole``, by default the reader's) and every key."""
        with cyclic_gc_paused():
            self.decoder.finish(self.whole if whole is None else whole)
        return self.records, set(self.lines)


def _is_record(record: Any) -> bool:
    if not isinstance(record, dict) or not isinstance(record.get("key"), str):
        return False
    metrics = record.get("metrics")
    if not isinstance(metrics, dict):
        return False
    kinds = set(map(type, metrics.values()))  # numbers or null (not a bool), finite
    return kinds <= _METRIC_TYPES and (
        float not in kinds or all(map(math.isfinite, filter(None, metrics.values())))
    )
