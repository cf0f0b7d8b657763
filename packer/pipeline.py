"""The pack pipeline: request -> reserve tail and anchors -> score -> fill -> result.

Each step is a plain function over plain data; strategies only score and order
(:mod:`packproof.packer.strategies`), except a policy strategy, which takes the
reservation and decides the whole pack itself (:mod:`packproof.packer.policy`),
here made a result like any other.
The result (:mod:`packproof.packer.result`) keeps every per-candidate decision as
arrays; :mod:`packproof.packer.render` turns it into ContextPack v1 and the trace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from .cacheassembly import assemble_cache_aware
from .model import QUARANTINED, Items
from .policy import PolicyDecision
from .reasons import O_ANCHORED, O_INCLUDED, O_QUARANTINED, O_TAIL
from .request import Request, parse_request, replaced
from .reserve import fresh_tail_start
from .result import Mode, PackResult, cyclic_gc_paused
from .select import CategoryCaps, fill, fits_whole
from .strategies import Policy, Ranking, ScoringView, is_policy

__all__ = [
    "Mode",
    "PackResult",
    "Ranked",
    "Reserved",
    "assemble",
    "cyclic_gc_paused",
    "decide",
    "pack",
    "rank",
    "replaced",
    "reserve",
]


def pack(request: Request | Mapping[str, Any]) -> PackResult:
    """Pack one request (a :class:`Request` or its JSON object)."""
    with cyclic_gc_paused():
        req = request if isinstance(request, Request) else parse_request(request)
        return assemble(req)


@dataclass(frozen=True, eq=False)
class Reserved:
    """What a request's budget and strategy do not change: trust exclusion, the
    fresh tail and anchors, the evictable candidates and the slots left for them.
    A budget sweep or a strategy comparison over one request reserves once."""

    items: Items
    key: tuple[Any, ...]  # the request fields it depends on (besides the items)
    outcome: np.ndarray  # O_QUARANTINED / O_ANCHORED / O_TAIL, else O_INCLUDED
    in_tail: np.ndarray
    anchored: np.ndarray
    tail_start: int | None
    tail_tokens: int
    anchor_tokens: int
    evictable_slots: int | None
    evictable: np.ndarray
    candidates: Items
    protected_categories: list[str | None]

    def caps(self, req: Request) -> CategoryCaps:
        """Fresh per-category room (a fill consumes it)."""
        return CategoryCaps(req.category_caps, self.protected_categories)


@dataclass(frozen=True, eq=False)
class Ranked:
    """A strategy's ranking of reserved candidates and the walk order it implies:
    score descending, newer ordinal first on ties; chronological: newest first."""

    ranking: Ranking
    order: np.ndarray  # positions into ``Reserved.evictable``, in walk order
    rank: np.ndarray  # per item: 1-based position in the walk; 0 = not ranked
    walk_sums: np.ndarray  # cumulative token costs in walk order (every fill's first step)


def _reserve_key(req: Request) -> tuple[Any, ...]:
    return (req.trust_policy, req.fresh_tail, req.max_items, tuple(req.category_caps.items()))


def reserve(req: Request) -> Reserved:
    """Trust exclusion, then the fresh tail and anchors (always kept), then the
    evictable candidates: everything that does not depend on budget or strategy."""
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

    slots = None if req.max_items is None else max(0, req.max_items - int(protected.sum()))
    evictable = np.flatnonzero(eligible & ~protected)
    for shared in (outcome, in_tail, anchored, evictable):
        shared.flags.writeable = False  # every result of this reservation reads them
    candidates = items.take(evictable)
    return Reserved(
        items=items,
        key=_reserve_key(req),
        outcome=outcome,
        in_tail=in_tail,
        anchored=anchored,
        tail_start=tail_start,
        tail_tokens=int(items.tokens[in_tail].sum()),
        anchor_tokens=int(items.tokens[anchored & ~in_tail].sum()),
        evictable_slots=slots,
        evictable=evictable,
        candidates=candidates,
        protected_categories=[items.categories[i] for i in np.flatnonzero(protected).tolist()],
    )


def rank(req: Request, reserved: Reserved, ranking: Ranking | None = None) -> Ranked:
    """The strategy's ranking of the reserved candidates (or ``ranking``, one this
    strategy made for the same candidates, prompt and current turn: it does not
    depend on the budget or the slots, so a budget sweep scores once). A policy
    strategy ranks in :func:`decide`: its ranking here is empty."""
    candidates = reserved.candidates
    if is_policy(req.strategy):
        return _unranked(reserved)
    if ranking is None:
        ranking = req.strategy.rank(ScoringView(candidates, req.prompt, req.current_turn))
    elif ranking.scores is not None and len(ranking.scores) != len(candidates):
        raise ValueError("a reused ranking must cover the same evictable candidates")
    if ranking.scores is None:
        order = np.arange(len(candidates))[::-1]
    else:
        order = walk_order(ranking.scores, candidates.ordinals, candidates.ascending)
    positions = np.zeros(len(reserved.items), dtype=np.int64)
    positions[reserved.evictable[order]] = np.arange(1, len(order) + 1)
    walk_sums = np.cumsum(candidates.tokens[order])
    for shared in (order, positions, walk_sums):
        shared.flags.writeable = False
    return Ranked(ranking=ranking, order=order, rank=positions, walk_sums=walk_sums)


def walk_order(
    scores: np.ndarray, ordinals: np.ndarray, ascending: bool | None = None
) -> np.ndarray:
    """``np.lexsort((-ordinals, -scores))``: score descending, newer first on
    ties. Ordinals are unique, so the order is unique. With ordinals ascending
    (as in every item table; ``ascending``: whether they do, if known) newer
    first is position descending, so one stable sort of the reversed scores gives
    it; a relevance strategy scores most candidates 0, which are simply newest
    first, so only the others are sorted."""
    n = len(scores)
    if ascending is None:
        ascending = n < 2 or bool(np.all(ordinals[1:] > ordinals[:-1]))
    if not ascending:
        return np.lexsort((-ordinals, -scores))
    zero = np.flatnonzero(scores == 0)
    if len(zero):
        above = np.flatnonzero(scores > 0)
        if len(zero) + len(above) == n:  # no NaN, nothing negative
            top = above[_newest_first_by_score(scores[above])]
            return np.concatenate((top, zero[::-1]))
    return _newest_first_by_score(scores)


def _newest_first_by_score(scores: np.ndarray) -> np.ndarray:
    """Positions by score descending (NaN last), higher position first on ties."""
    last = len(scores) - 1
    order: np.ndarray = last - np.argsort(-scores[::-1], kind="stable")
    return order


def _unranked(reserved: Reserved) -> Ranked:
    """The empty ranking a policy strategy's :func:`rank` step returns."""
    none = np.zeros(0, dtype=np.int64)
    positions = np.zeros(len(reserved.items), dtype=np.int64)
    for shared in (none, positions):
        shared.flags.writeable = False
    return Ranked(ranking=Ranking(scores=None), order=none, rank=positions, walk_sums=none)


def decide(req: Request, reserved: Reserved, ranked: Ranked) -> PackResult:
    """Fill the budget left after the reserved items, in the ranked order; a
    policy strategy decides the whole pack from the reservation instead."""
    if reserved.items is not req.items or reserved.key != _reserve_key(req):
        raise ValueError("a reservation must come from a request with the same items and policy")
    if is_policy(req.strategy):
        return _policy_result(req, cast(Policy, req.strategy).decide(req, reserved))
    outcome = reserved.outcome
    remaining = max(0, req.budget_tokens - reserved.tail_tokens - reserved.anchor_tokens)
    slots = reserved.evictable_slots
    candidates = reserved.candidates
    caps = reserved.caps(req)

    # Rank even when everything fits, so the trace and ranking metrics see scores;
    # the selection below ignores the ranking in full-fit mode (lossless-claw).
    mode: Mode
    cache_aware: dict[str, Any] = {}
    if req.cache_aware is not None:
        built = assemble_cache_aware(req, reserved, ranked)
        mode, outcome = built.fill_mode, built.outcome
        cache_aware = {
            "pack_order": built.order,
            "placement": built.placement,
            "cache": built.decision,
        }
    elif fits_whole(candidates.tokens, candidates.categories, remaining, slots, caps):
        mode = "full-fit"
    else:
        scores = ranked.ranking.scores
        mode = "chronological" if scores is None else "ranked"
        outcome = outcome.copy()
        outcome[reserved.evictable] = fill(
            ranked.order,
            candidates.tokens,
            candidates.categories,
            remaining,
            slots,
            caps,
            stop_at_misfit=scores is None,
            walk_sums=ranked.walk_sums,
        )

    return PackResult(
        request=req,
        mode=mode,
        ranking=ranked.ranking,
        evictable=reserved.evictable,
        outcome=outcome,
        in_tail=reserved.in_tail,
        anchored=reserved.anchored,
        rank=ranked.rank,
        tail_start=reserved.tail_start,
        tail_tokens=reserved.tail_tokens,
        anchor_tokens=reserved.anchor_tokens,
        remaining_tokens=remaining,
        evictable_slots=slots,
        **cache_aware,
    )


def _policy_result(req: Request, decision: PolicyDecision) -> PackResult:
    """A policy's decision as a pack result (with the anchors it says it keeps)."""
    for shared in (decision.outcome, decision.in_tail, decision.evictable, decision.pack_order):
        shared.flags.writeable = False
    return PackResult(
        request=req,
        mode="ranked",
        ranking=decision.ranking,
        evictable=decision.evictable,
        outcome=decision.outcome,
        in_tail=decision.in_tail,
        anchored=(
            np.zeros(len(req.items), dtype=bool) if decision.anchored is None else decision.anchored
        ),
        rank=decision.rank,
        tail_start=decision.tail_start,
        tail_tokens=decision.tail_tokens,
        anchor_tokens=decision.anchor_tokens,
        remaining_tokens=decision.remaining_tokens,
        evictable_slots=decision.evictable_slots,
        pack_order=decision.pack_order,
        policy=decision.explained,
    )


def assemble(req: Request, ranking: Ranking | None = None) -> PackResult:
    """Every decision for a validated request: :func:`reserve`, then :func:`rank`
    (reusing ``ranking`` if given), then :func:`decide`."""
    reserved = reserve(req)
    return decide(req, reserved, rank(req, reserved, ranking))
