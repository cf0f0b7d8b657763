"""A memory store's own record fields, and the retrieval a request may carry.

openclaw-mem keeps, per record, when it was written, its own kind, a lifecycle
state, how often it was used, a graded importance, which records it supersedes
and, for a synthesis card, the records it summarises; its ``pack`` fuses the
ranked lists its lexical and vector searches return. These are optional request
fields (docs/request.md) that any strategy may read; the ``openclaw-mem``
strategy reads them all. A request without any of them parses to
``Items.records is None`` and is packed, and written back, exactly as before.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from .checks import (
    MISSING,
    check_object,
    check_str,
    codes,
    fail,
    int_array,
    nullable_str_column,
)
from .errors import InputError, pointer

__all__ = [
    "LANES",
    "LIFECYCLE",
    "RECORD_FIELDS",
    "RecordFields",
    "Retrieval",
    "Synthesis",
    "parse_record_fields",
    "parse_retrieval",
    "record_json",
]

# openclaw-mem's lifecycle states (openclaw_mem/core/lifecycle.py).
LIFECYCLE: Final = ("captured", "categorized", "active", "consolidated", "stale", "soft-archived")
ACTIVE: Final = LIFECYCLE.index("active")
# Item fields of this module, in the order request_to_json writes them.
RECORD_FIELDS: Final = (
    "ts",
    "record_kind",
    "lifecycle",
    "used_count",
    "importance_score",
    "supersedes",
    "synthesis",
)
# The retrieval lanes: the lexical search, the vector search, the English vector search.
LANES: Final = ("fts", "vector", "vector_en")


@dataclass(frozen=True)
class Synthesis:
    """The item is a synthesis card over ``sources`` (ids, unique, in order; they
    may name ids that are not items); ``fresh``: the card still matches them."""

    sources: tuple[str, ...]
    fresh: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"sources": list(self.sources), "fresh": self.fresh}


@dataclass(frozen=True, eq=False)
class RecordFields:
    """The record fields of every item, column-wise, in the item table's order.
    ``importance_scores`` holds NaN for null; ``lifecycle`` int8 codes into
    LIFECYCLE."""

    ts: list[str | None]
    kinds: list[str | None]
    lifecycle: np.ndarray
    used_counts: np.ndarray
    importance_scores: np.ndarray
    supersedes: list[tuple[str, ...]]
    synthesis: list[Synthesis | None]

    def take(self, index: np.ndarray) -> RecordFields:
        """The records at positions ``index``."""
        pick = index.tolist()
        return RecordFields(
            ts=[self.ts[i] for i in pick],
            kinds=[self.kinds[i] for i in pick],
            lifecycle=self.lifecycle[index],
            used_counts=self.used_counts[index],
            importance_scores=self.importance_scores[index],
            supersedes=[self.supersedes[i] for i in pick],
            synthesis=[self.synthesis[i] for i in pick],
        )

    def window(self, start: int, stop: int) -> RecordFields:
        """The records at positions ``start`` to ``stop`` (arrays as views)."""
        where = slice(start, stop)
        return RecordFields(
            ts=self.ts[where],
            kinds=self.kinds[where],
            lifecycle=self.lifecycle[where],
            used_counts=self.used_counts[where],
            importance_scores=self.importance_scores[where],
            supersedes=self.supersedes[where],
            synthesis=self.synthesis[where],
        )

    @classmethod
    def defaults(cls, n: int) -> RecordFields:
        """``n`` records with every field at its default."""
        return cls(
            ts=[None] * n,
            kinds=[None] * n,
            lifecycle=np.full(n, ACTIVE, dtype=np.int8),
            used_counts=np.zeros(n, dtype=np.int64),
            importance_scores=np.full(n, np.nan),
            supersedes=[()] * n,
            synthesis=[None] * n,
        )


def parse_record_fields(columns: dict[str, list[Any]], n: int) -> RecordFields | None:
    """The record fields of ``n`` items from their columns (``MISSING`` where an
    item lacks the key); None when no item has any of them."""
    if not any(key in columns for key in RECORD_FIELDS):
        return None
    defaults = RecordFields.defaults(n)

    return RecordFields(
        ts=nullable_str_column(columns.get("ts"), "ts", n),
        kinds=nullable_str_column(columns.get("record_kind"), "record_kind", n),
        lifecycle=codes(columns.get("lifecycle"), "lifecycle", LIFECYCLE, "active", n),
        used_counts=int_array(columns.get("used_count"), "used_count", 0, defaults.used_counts),
        importance_scores=_scores(columns.get("importance_score"), n),
        supersedes=_id_lists(columns.get("supersedes"), n),
        synthesis=_syntheses(columns.get("synthesis"), n),
    )


def _scores(values: list[Any] | None, n: int) -> np.ndarray:
    """``importance_score``: a number in [0, 1] or null (NaN)."""
    out = np.full(n, np.nan)
    for i, v in enumerate(values or ()):
        if v is MISSING or v is None:
            continue
        where = pointer("items", i, "importance_score")
        if type(v) not in (int, float) or not math.isfinite(v):
            raise fail(where, "wrong type", "a number in [0, 1] or null", v)
        if not 0 <= v <= 1:
            raise fail(where, "out of range", "a number in [0, 1] or null", v)
        out[i] = float(v)
    return out


def _ids(value: Any, where: str, what: str, *, unique: bool) -> tuple[str, ...]:
    """An array of ids (non-empty strings), unique if ``unique``."""
    if type(value) is not list:
        raise fail(where, "wrong type", f"an array of {what}", value)
    first: dict[str, int] = {}
    for k, ref in enumerate(value):
        at = f"{where}/{k}"
        check_str(ref, at, nonempty=True)
        if unique and ref in first:
            raise InputError(at, f"repeated id {ref!r} (first at {where}/{first[ref]})")
        first.setdefault(ref, k)
    return tuple(value)


def _id_lists(values: list[Any] | None, n: int) -> list[tuple[str, ...]]:
    """``supersedes``: the ids (strings) a record supersedes."""
    if values is None:
        return [()] * n
    return [
        () if v is MISSING else _ids(v, pointer("items", i, "supersedes"), "ids", unique=False)
        for i, v in enumerate(values)
    ]


_SYNTHESIS_KEYS: Final = frozenset({"sources", "fresh"})


def _syntheses(values: list[Any] | None, n: int) -> list[Synthesis | None]:
    """``synthesis``: null, or ``{"sources": [ids], "fresh": bool}``."""
    if values is None:
        return [None] * n
    out: list[Synthesis | None] = []
    for i, v in enumerate(values):
        if v is MISSING or v is None:
            out.append(None)
            continue
        where = pointer("items", i, "synthesis")
        obj = check_object(v, where, _SYNTHESIS_KEYS)
        if "sources" not in obj:
            raise InputError(where, "missing required field 'sources'")
        sources = _ids(obj["sources"], where + "/sources", "source ids", unique=True)
        fresh = obj.get("fresh", True)
        if type(fresh) is not bool:
            raise fail(where + "/fresh", "wrong type", "a boolean", fresh)
        out.append(Synthesis(sources, fresh))
    return out


def record_json(records: RecordFields, i: int) -> dict[str, Any]:
    """Item ``i``'s record fields as request JSON, every default filled."""
    score = float(records.importance_scores[i])
    synthesis = records.synthesis[i]
    return {
        "ts": records.ts[i],
        "record_kind": records.kinds[i],
        "lifecycle": LIFECYCLE[records.lifecycle[i]],
        "used_count": int(records.used_counts[i]),
        "importance_score": None if math.isnan(score) else score,
        "supersedes": list(records.supersedes[i]),
        "synthesis": None if synthesis is None else synthesis.to_json(),
    }


@dataclass(frozen=True)
class Retrieval:
    """What a memory store's searches returned for the prompt: ranked id lists,
    best first, unique within a list. Ids that are not items are allowed (a
    record deleted since): a strategy decides what they mean."""

    fts: tuple[str, ...] = ()
    vector: tuple[str, ...] = ()
    vector_en: tuple[str, ...] = ()

    def lanes(self) -> Sequence[tuple[str, ...]]:
        return (self.fts, self.vector, self.vector_en)

    def to_json(self) -> dict[str, list[str]]:
        return {lane: list(ids) for lane, ids in zip(LANES, self.lanes(), strict=True)}


def parse_retrieval(raw: Any) -> Retrieval | None:
    """The request's ``retrieval``: null or an object of optional id lanes."""
    if raw is None:
        return None
    obj = check_object(raw, "/retrieval", frozenset(LANES))
    lanes = {
        lane: _ids(obj[lane], pointer("retrieval", lane), "ids", unique=True)
        for lane in LANES
        if lane in obj
    }
    return Retrieval(**lanes)
