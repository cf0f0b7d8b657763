"""The result of packing one request: every decision, as arrays over its items.

:mod:`packproof.packer.pipeline` makes it; :mod:`packproof.packer.render` turns it into
ContextPack v1 and the trace (and imports this module for types only).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from .jsonio import dumpb, dumps
from .model import Items
from .reasons import O_ANCHORED, O_APPENDED, O_INCLUDED, O_KEPT, O_RECALL, O_TAIL, OUTCOMES
from .render import TraceLevel, render
from .request import Request
from .strategies import Ranking

if TYPE_CHECKING:
    from .cacheassembly import CacheDecision
    from .policy import PolicyOutcome

__all__ = ["PACKED", "Mode", "PackResult", "cyclic_gc_paused"]

Mode = Literal["full-fit", "chronological", "ranked", "append"]

PACKED = np.zeros(len(OUTCOMES), dtype=bool)  # per outcome code: is the item packed?
PACKED[[O_TAIL, O_ANCHORED, O_INCLUDED, O_KEPT, O_APPENDED, O_RECALL]] = True
PACKED.flags.writeable = False


@dataclass(frozen=True, eq=False)
class PackResult:
    """Everything decided for one request. Arrays are over ``request.items``
    (ordinal order); ``evictable`` holds the positions that were scored."""

    request: Request
    mode: Mode
    ranking: Ranking
    evictable: np.ndarray
    outcome: np.ndarray  # reasons.O_* per item
    in_tail: np.ndarray
    anchored: np.ndarray
    rank: np.ndarray  # 1-based position in the strategy's order; 0 = not ranked
    tail_start: int | None
    tail_tokens: int
    anchor_tokens: int
    remaining_tokens: int
    evictable_slots: int | None
    # Cache-aware packs (packer/cacheaware.py): the pack order (positions), each
    # item's placement (cacheaware.P_*) and what the assembly did. None otherwise.
    pack_order: np.ndarray | None = None
    placement: np.ndarray | None = None
    cache: CacheDecision | None = None
    # A policy strategy's pack (packer/policy.py): its reasons, bundle text and
    # receipts (its pack order is ``pack_order``). None otherwise.
    policy: PolicyOutcome | None = None

    @property
    def items(self) -> Items:
        return self.request.items

    @cached_property
    def included(self) -> np.ndarray:
        """Which items are packed (computed once: metrics read it many times)."""
        kept: np.ndarray = PACKED[self.outcome]
        return kept

    @property
    def order(self) -> list[int]:
        """Positions of the packed items in pack order (the prompt's order):
        ordinal order, unless a cache-aware pack or a policy set its own."""
        source = np.flatnonzero(self.included) if self.pack_order is None else self.pack_order
        order: list[int] = source.tolist()
        return order

    @property
    def selected_ids(self) -> list[str]:
        """Ids of the packed items, in ordinal order."""
        return self.items.ids_at(np.flatnonzero(self.included).tolist())

    @property
    def used_tokens(self) -> int:
        return int(self.items.tokens[self.included].sum())

    @property
    def evictable_tokens_used(self) -> int:
        return self.used_tokens - self.tail_tokens - self.anchor_tokens

    @property
    def over_budget(self) -> bool:
        """True when the always-kept items alone exceed the budget (flagged, kept)."""
        return self.tail_tokens + self.anchor_tokens > self.request.budget_tokens

    def scores(self) -> np.ndarray:
        """The strategy's score per item; NaN where nothing was scored."""
        out = np.full(len(self.items), np.nan)
        if self.ranking.scores is not None:
            out[self.evictable] = self.ranking.scores
        return out

    def to_dict(self, *, trace: TraceLevel = "full") -> dict[str, Any]:
        """The ContextPack v1 with the trace at level ``trace`` (render.TRACE_LEVELS)."""
        return render(self, trace)

    def to_json(self, *, indent: int | None = None, trace: TraceLevel = "full") -> str:
        """:meth:`to_dict` as canonical JSON text (packer.jsonio.dumps)."""
        with cyclic_gc_paused():  # rendering builds no cycles either
            return dumps(render(self, trace, shared=True), indent=indent, prepared=True)

    def to_json_bytes(self, *, indent: int | None = None, trace: TraceLevel = "full") -> bytes:
        """:meth:`to_json` as UTF-8 bytes, as a file or a pipe takes them."""
        with cyclic_gc_paused():
            return dumpb(render(self, trace, shared=True), indent=indent, prepared=True)


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the duration of a pack.

    Packing 100k items allocates millions of small objects (term lists) and no
    reference cycles, so every collection the allocations trigger scans the heap
    for nothing; they made packing grow faster than linearly with the item count.
    Reference counting still frees everything; the collector's state is restored.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
