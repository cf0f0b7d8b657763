"""The pack pipeline: request -> reserve tail and anchors -> score -> fill -> result.

Each step is a plain function over plain data; strategies only score and order
(:mod:`packer.strategies`). The result keeps every per-candidate decision as
arrays; :mod:`packer.render` turns it into ContextPack v1 and the trace.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np

from .model import QUARANTINED, Items
from .reasons import O_ANCHORED, O_INCLUDED, O_QUARANTINED, O_TAIL
from .request import Request, parse_request
from .reserve import fresh_tail_start
from .select import CategoryCaps, fill, fits_whole
from .strategies import Ranking, ScoringView

__all__ = ["Mode", "PackResult", "assemble", "cyclic_gc_paused", "pack"]

Mode = Literal["full-fit", "chronological", "ranked"]


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

    @property
    def items(self) -> Items:
        return self.request.items

    @cached_property
    def included(self) -> np.ndarray:
        """Which items are packed (computed once: metrics read it many times)."""
        kept: np.ndarray = np.isin(self.outcome, (O_TAIL, O_ANCHORED, O_INCLUDED))
        return kept

    @property
    def selected_ids(self) -> list[str]:
        """Ids of the packed items, in ordinal order."""
        ids = self.items.ids
        return [ids[i] for i in np.flatnonzero(self.included).tolist()]

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

    def to_dict(self) -> dict[str, Any]:
        from .render import render

        return render(self)

    def to_json(self, *, indent: int | None = None) -> str:
        from .jsonio import dumps

        with cyclic_gc_paused():  # rendering builds no cycles either
            return dumps(self.to_dict(), indent=indent, prepared=True)  # floats pre-rounded


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


def pack(request: Request | Mapping[str, Any]) -> PackResult:
    """Pack one request (a :class:`Request` or its JSON object)."""
    with cyclic_gc_paused():
        req = request if isinstance(request, Request) else parse_request(request)
        return assemble(req)


def assemble(req: Request, ranking: Ranking | None = None) -> PackResult:
    """Every decision for a validated request: trust exclusion, then the fresh
    tail and anchors, then the strategy's ranking, then the fill of what is left.

    ``ranking`` reuses a ranking this strategy made for the same items, prompt,
    current turn and trust policy: it does not depend on the budget or the slots,
    so a budget sweep scores once (its length is checked)."""
    items = req.items
    n = len(items)
    outcome = np.full(n, O_INCLUDED, dtype=np.int8)

    eligible = np.ones(n, dtype=bool)
    if req.trust_policy == "exclude_quarantined":
        eligible = items.trust != QUARANTINED
        outcome[~eligible] = O_QUARANTINED

    tail_start = fresh_tail_start(items, eligible, req.fresh_tail)
    in_tail = np.zeros(n, dtype=bool)
    if tail_start is not None:
        in_tail[tail_start:] = True
        in_tail &= eligible
    anchored = items.anchored & eligible
    protected = in_tail | anchored
    outcome[anchored] = O_ANCHORED
    outcome[in_tail] = O_TAIL

    tail_tokens = int(items.tokens[in_tail].sum())
    anchor_tokens = int(items.tokens[anchored & ~in_tail].sum())
    remaining = max(0, req.budget_tokens - tail_tokens - anchor_tokens)
    slots = None if req.max_items is None else max(0, req.max_items - int(protected.sum()))

    evictable = np.flatnonzero(eligible & ~protected)
    candidates = items.take(evictable)
    caps = CategoryCaps(
        req.category_caps, [items.categories[i] for i in np.flatnonzero(protected).tolist()]
    )

    # Rank even when everything fits, so the trace and ranking metrics see scores;
    # the selection below ignores the ranking in full-fit mode (lossless-claw).
    if ranking is None:
        ranking = req.strategy.rank(ScoringView(candidates, req.prompt, req.current_turn))
    elif ranking.scores is not None and len(ranking.scores) != len(evictable):
        raise ValueError("a reused ranking must cover the same evictable candidates")
    if ranking.scores is None:
        order = np.arange(len(evictable))[::-1]
    else:
        order = np.lexsort((-candidates.ordinals, -ranking.scores))
    rank = np.zeros(n, dtype=np.int64)
    rank[evictable[order]] = np.arange(1, len(order) + 1)

    mode: Mode
    if fits_whole(candidates.tokens, candidates.categories, remaining, slots, caps):
        mode = "full-fit"
    else:
        mode = "chronological" if ranking.scores is None else "ranked"
        outcome[evictable] = fill(
            order,
            candidates.tokens,
            candidates.categories,
            remaining,
            slots,
            caps,
            stop_at_misfit=ranking.scores is None,
        )

    return PackResult(
        request=req,
        mode=mode,
        ranking=ranking,
        evictable=evictable,
        outcome=outcome,
        in_tail=in_tail,
        anchored=anchored,
        rank=rank,
        tail_start=tail_start,
        tail_tokens=tail_tokens,
        anchor_tokens=anchor_tokens,
        remaining_tokens=remaining,
        evictable_slots=slots,
    )
