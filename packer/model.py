"""The item vocabulary and the column-wise item table every pipeline step reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, Literal

import numpy as np

from .lcm import scored_texts
from .records import RecordFields
from .termstats import MemoStats, SubsetStats, TermStats
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
    _origin: tuple[Items, np.ndarray] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.ids)

    @cached_property
    def position(self) -> dict[str, int]:
        """Each id's position (ids are unique)."""
        return {ref: i for i, ref in enumerate(self.ids)}

    @cached_property
    def record_fields(self) -> RecordFields:
        """The record fields, with every default filled when no item has any."""
        return self.records if self.records is not None else RecordFields.defaults(len(self))

    def take(self, index: np.ndarray, *, subset: bool = True) -> Items:
        """The items at ``index`` (positions, ascending for a subset). A subset
        derives its term statistics from this table's; ``subset=False`` (a
        re-ordering) starts a table of its own."""
        pick = index.tolist()
        return Items(
            ids=[self.ids[i] for i in pick],
            texts=[self.texts[i] for i in pick],
            ordinals=self.ordinals[index],
            roles=self.roles[index],
            kinds=self.kinds[index],
            tokens=self.tokens[index],
            trust=self.trust[index],
            importance=self.importance[index],
            anchored=self.anchored[index],
            categories=[self.categories[i] for i in pick],
            turns=self.turns[index],
            mentions=self.mentions[index],
            references=self.references[index],
            last_mention_turns=self.last_mention_turns[index],
            urls=[self.urls[i] for i in pick],
            records=None if self.records is None else self.records.take(index),
            _origin=(self, index) if subset else None,
        )

    def term_stats(self, tokenizer: Tokenizer, view: TextView = "raw") -> TermStats:
        """Term statistics under ``tokenizer`` of the ``view`` of each item's text,
        computed once per item table; a subset derives its own from the table it
        was taken from."""
        key = (tokenizer, view)
        cached = self._stats.get(key)
        if cached is None:
            if self._origin is not None:
                parent, index = self._origin
                cached = SubsetStats(parent.term_stats(tokenizer, view), index)
            else:
                texts = self.texts
                if view == "lcm":
                    texts = scored_texts(texts, content_block_mask(self.roles, self.kinds))
                cached = MemoStats(tokenizer.stats(texts))
            self._stats[key] = cached
        return cached


@dataclass(frozen=True)
class FreshTail:
    """lossless-claw's protected fresh tail: ``count`` newest raw messages (extended
    to the newest user message), optionally capped at ``max_tokens``."""

    count: int = 0
    max_tokens: int | None = None
