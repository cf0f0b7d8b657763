"""The item vocabulary and the column-wise item table every pipeline step reads."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from operator import itemgetter
from typing import Any, Final, Literal

import numpy as np

from .lcm import scored_texts
from .records import RecordFields
from .termstats import MemoStats, SliceStats, SubsetStats, TermStats
from .text import Tokenizer

__all__ = [
    "IMPORTANCE",
    "KINDS",
    "MESSAGE",
    "QUARANTINED",
    "ROLES",
    "SUMMARY",
    "TRUST",
    "TRUST_POLICIES",
    "UNKNOWN_TRUST",
    "USER",
    "FreshTail",
    "Items",
    "TextView",
    "content_block_mask",
]

# Closed sets; an item's value is stored as its index in the tuple (int8 code).
ROLES: Final = ("user", "assistant", "tool", "system")
KINDS: Final = ("message", "summary", "memory")
TRUST: Final = ("trusted", "unknown", "untrusted", "quarantined")
IMPORTANCE: Final = ("must_remember", "nice_to_have", "unknown", "ignore")
TRUST_POLICIES: Final = ("off", "exclude_quarantined")

USER: Final = ROLES.index("user")
# Roles whose messages lossless-claw carries as a content array of blocks.
BLOCK_ROLES: Final = (ROLES.index("assistant"), ROLES.index("tool"))
MESSAGE: Final = KINDS.index("message")
SUMMARY: Final = KINDS.index("summary")
QUARANTINED: Final = TRUST.index("quarantined")
UNKNOWN_TRUST: Final = TRUST.index("unknown")

# The text a tokenizer analyses: the item's own text, or the text lossless-claw's
# BM25-lite scores (packer.lcm.scored_texts).
TextView = Literal["raw", "lcm"]


def content_block_mask(roles: np.ndarray, kinds: np.ndarray) -> np.ndarray:
    """Which items lossless-claw renders as JSON content blocks: assistant and
    tool messages (a ``memory`` item is rendered as a message of its role)."""
    mask: np.ndarray = np.isin(roles, BLOCK_ROLES) & (kinds != SUMMARY)
    return mask


@dataclass(frozen=True, eq=False)
class Items:
    """Normalised items, column-wise, sorted by ordinal (position ``i`` is the
    ``i``-th oldest item). Categorical columns hold int8 codes into ROLES, KINDS,
    TRUST and IMPORTANCE."""

    ids: list[str]
    texts: list[str]
    ordinals: np.ndarray
    roles: np.ndarray
    kinds: np.ndarray
    tokens: np.ndarray
    trust: np.ndarray
    importance: np.ndarray
    anchored: np.ndarray
    categories: list[str | None]
    turns: np.ndarray
    mentions: np.ndarray
    references: np.ndarray
    last_mention_turns: np.ndarray
    urls: list[str | None]
    # A memory store's record fields (packer/records.py); None: no item has any.
    records: RecordFields | None = None
    # Term statistics per tokenizer, shared by every strategy packing these items.
    _stats: dict[Any, TermStats] = field(default_factory=dict, repr=False)
    # The table these items were taken from, and where: positions (ascending for
    # a subset), or a slice (a window, whose columns are views of the parent's).
    _origin: tuple[Items, np.ndarray | slice] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.ids)

    @cached_property
    def position(self) -> Mapping[str, int]:
        """Each id's position (ids are unique). A window reads its base table's
        (built once), bounded to the window: a replay's steps share one."""
        base, start = self.base_window()
        if base is self:
            return {ref: i for i, ref in enumerate(self.ids)}
        return _WindowPosition(base.position, start, start + len(self))

    @cached_property
    def ascending(self) -> bool:
        """Whether the ordinals ascend strictly (as every parsed table's do). A
        window reads its base table's (found once): a window of it ascends too."""
        base, _ = self.base_window()
        if base is not self:
            return base.ascending
        ordinals = self.ordinals
        return bool(np.all(ordinals[1:] > ordinals[:-1]))

    @cached_property
    def unset(self) -> frozenset[str]:
        """The optional list columns that no item sets (every value None)."""
        return frozenset(
            name for name in ("categories", "urls") if getattr(self, name).count(None) == len(self)
        )

    def base_window(self) -> tuple[Items, int]:
        """The table this one is a window of (through windows of windows), and the
        window's start in it; ``(self, 0)`` for a table of its own."""
        items, start = self, 0
        while items._origin is not None:
            parent, where = items._origin
            if not isinstance(where, slice):
                break
            start += where.start
            items = parent
        return items, start

    def ids_at(self, positions: list[int]) -> list[str]:
        """``[self.ids[i] for i in positions]``; a window reads its base table's
        ids (a replay step's own id list is never copied out)."""
        base, start = self.base_window()
        if start:
            positions = [start + i for i in positions]
        return list(map(base.ids.__getitem__, positions))

    @cached_property
    def record_fields(self) -> RecordFields:
        """The record fields, with every default filled when no item has any."""
        return self.records if self.records is not None else RecordFields.defaults(len(self))

    def window(self, start: int, stop: int) -> Items:
        """The items at positions ``start`` to ``stop`` (exclusive), as a subset
        that shares this table's arrays (read-only views) and term statistics: a
        replay step's prefix of its conversation costs no per-item work (its
        lists are sliced when first read)."""
        where = slice(start, stop)
        window = object.__new__(_Window)
        state = window.__dict__
        for name in _WINDOW_ARRAYS:
            view = getattr(self, name)[where]
            view.flags.writeable = False  # shared with the parent table
            state[name] = view
        state["records"] = None if self.records is None else self.records.window(start, stop)
        state["_stats"] = {}
        state["_origin"] = (self, where)
        return window

    def take(self, index: np.ndarray, *, subset: bool = True) -> Items:
        """The items at ``index`` (positions, ascending for a subset). A subset
        derives its term statistics from this table's; ``subset=False`` (a
        re-ordering) starts a table of its own. A subset of consecutive positions
        is a :meth:`window`."""
        n = len(index)
        if subset and (n == 0 or int(index[-1]) - int(index[0]) == n - 1):
            start = int(index[0]) if n else 0
            return self.window(start, start + n)
        pick = index.tolist()
        return Items(
            ids=_picked(self.ids, pick),
            texts=_picked(self.texts, pick),
            ordinals=self.ordinals[index],
            roles=self.roles[index],
            kinds=self.kinds[index],
            tokens=self.tokens[index],
            trust=self.trust[index],
            importance=self.importance[index],
            anchored=self.anchored[index],
            categories=_picked(self.categories, pick),
            turns=self.turns[index],
            mentions=self.mentions[index],
            references=self.references[index],
            last_mention_turns=self.last_mention_turns[index],
            urls=_picked(self.urls, pick),
            records=None if self.records is None else self.records.take(index),
            _origin=(self, index) if subset else None,
        )

    def term_stats(self, tokenizer: Tokenizer, view: TextView = "raw") -> TermStats:
        """Term statistics under ``tokenizer`` of the ``view`` of each item's text,
        computed once per item table; a subset derives its own from the table it
        was taken from (a window: a window of the base table's, never a copy)."""
        key = (tokenizer, view)
        cached = self._stats.get(key)
        if cached is None:
            if self._origin is not None:
                parent, where = self._origin
                stats = parent.term_stats(tokenizer, view)
                if isinstance(where, slice):
                    cached = SliceStats.of(stats, where.start, where.stop)
                else:
                    cached = SubsetStats(stats, where)
            else:
                texts = self.texts
                if view == "lcm":
                    texts = scored_texts(texts, content_block_mask(self.roles, self.kinds))
                cached = MemoStats(tokenizer.stats(texts))
            self._stats[key] = cached
        return cached


_WINDOW_ARRAYS: Final = (
    "ordinals",
    "roles",
    "kinds",
    "tokens",
    "trust",
    "importance",
    "anchored",
    "turns",
    "mentions",
    "references",
    "last_mention_turns",
)


class _Window(Items):
    """:meth:`Items.window`'s table: its list columns are sliced from the
    parent's when first read (a replay step's candidates seldom read them)."""

    def __len__(self) -> int:
        return len(self.ordinals)  # the arrays are views, never sliced late

    def _sliced(self, name: str) -> list[Any]:
        base, start = self.base_window()
        if name in base.unset:  # all None: no need to read the base's
            return [None] * len(self)
        values: list[Any] = getattr(base, name)[start : start + len(self)]
        return values

    @cached_property
    def ids(self) -> list[str]:
        return self._sliced("ids")

    @cached_property
    def texts(self) -> list[str]:
        return self._sliced("texts")

    @cached_property
    def categories(self) -> list[str | None]:
        return self._sliced("categories")

    @cached_property
    def urls(self) -> list[str | None]:
        return self._sliced("urls")


def _picked(values: list[Any], pick: list[int]) -> list[Any]:
    """``[values[i] for i in pick]``, in C."""
    if len(pick) > 1:
        return list(itemgetter(*pick)(values))
    return [values[i] for i in pick]


class _WindowPosition(Mapping[str, int]):
    """A base table's id positions seen through a window ``[start, stop)`` of it:
    ids outside the window are absent."""

    __slots__ = ("_of", "_start", "_stop")

    def __init__(self, of: Mapping[str, int], start: int, stop: int) -> None:
        self._of, self._start, self._stop = of, start, stop

    def __getitem__(self, ref: str) -> int:
        i = self._of[ref]
        if not self._start <= i < self._stop:
            raise KeyError(ref)
        return i - self._start

    def __contains__(self, ref: object) -> bool:
        i = self._of.get(ref) if isinstance(ref, str) else None
        return i is not None and self._start <= i < self._stop

    def __iter__(self) -> Iterator[str]:
        # the base's ids are in position order
        return islice(iter(self._of), self._start, self._stop)

    def __len__(self) -> int:
        return self._stop - self._start


@dataclass(frozen=True)
class FreshTail:
    """lossless-claw's protected fresh tail: ``count`` newest raw messages (extended
    to the newest user message), optionally capped at ``max_tokens``."""

    count: int = 0
    max_tokens: int | None = None
