"""Fill what is left of the budget from the evictable candidates.

Two fills, both in a strategy's order, both honouring ``max_items`` slots and
per-category caps. A candidate's outcome is decided with a fixed precedence: no
slot left (``max_items_reached``), then does not fit (``budget_tokens_exceeded``),
then its category is full (``category_cap``).

- stop-at-misfit (lossless-claw's chronological mode): the first item that does
  not fit ends the walk; everything after it is ``chronological_stop``.
- skip-not-stop (PR #180's greedy fill): an item that does not fit is skipped and
  the walk goes on (block-wise: only candidates that could still fit are visited).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .reasons import O_BUDGET, O_CATEGORY, O_INCLUDED, O_MAX_ITEMS, O_STOP

__all__ = ["CategoryCaps", "fill", "fill_walk", "fits_whole"]


class CategoryCaps:
    """Remaining per-category room: a category's cap (or the ``"*"`` cap) minus
    the protected items already in it. Items without a category are uncapped."""

    def __init__(self, caps: Mapping[str, int], protected: Sequence[str | None]) -> None:
        self._caps = caps
        self._default = caps.get("*")
        self._held: dict[str, int] = {}
        for category in protected:
            if category is not None:
                self._held[category] = self._held.get(category, 0) + 1

    @property
    def active(self) -> bool:
        return bool(self._caps)

    def room(self, category: str | None) -> int | None:
        if category is None:
            return None
        cap = self._caps.get(category, self._default)
        return None if cap is None else cap - self._held.get(category, 0)

    def take(self, category: str | None) -> bool:
        """Count one more item in ``category`` if there is room; False if full."""
        room = self.room(category)
        if room is not None and room <= 0:
            return False
        if category is not None:
            self._held[category] = self._held.get(category, 0) + 1
        return True


def fits_whole(
    tokens: np.ndarray,
    categories: Sequence[str | None],
    remaining: int,
    slots: int | None,
    caps: CategoryCaps,
) -> bool:
    """lossless-claw's full-fit test, extended to slots and caps: can every
    evictable candidate be kept?"""
    if int(tokens.sum()) > remaining or (slots is not None and len(tokens) > slots):
        return False
    if caps.active:
        counts: dict[str, int] = {}
        for c in categories:
            if c is not None:
                counts[c] = counts.get(c, 0) + 1
        for c, k in counts.items():
            room = caps.room(c)
            if room is not None and k > room:
                return False
    return True


_BLOCK = 2048
# Below this many candidates a plain loop beats numpy's per-call overhead.
_SMALL = 32
# Prefix steps before the uncapped fill goes on one candidate at a time.
_PREFIX_STEPS = 8


def fill(
    order: np.ndarray,
    tokens: np.ndarray,
    categories: Sequence[str | None],
    remaining: int,
    slots: int | None,
    caps: CategoryCaps,
    *,
    stop_at_misfit: bool,
    walk_sums: np.ndarray | None = None,
) -> np.ndarray:
    """Outcome code (``reasons.O_*``) of each candidate, walking ``order``.

    Without category caps the walk is computed a prefix at a time (cumulative
    sums; ``walk_sums``, the cumulative costs in walk order, may be given to
    share them between fills of one order); with caps, one candidate at a time.
    Both give the same outcomes (property-tested against :func:`fill_walk`)."""
    if caps.active or len(order) <= _SMALL:
        return fill_walk(
            order, tokens, categories, remaining, slots, caps, stop_at_misfit=stop_at_misfit
        )
    costs = tokens[order]
    sums = np.cumsum(costs) if walk_sums is None else walk_sums
    outcome = np.full(len(tokens), O_INCLUDED, dtype=np.int8)
    outcome[order] = _fill_prefixes(costs, sums, remaining, slots, stop_at_misfit)
    return outcome


def _fill_prefixes(
    costs: np.ndarray, walk_sums: np.ndarray, left: int, slots: int | None, stop_at_misfit: bool
) -> np.ndarray:
    """Outcomes in walk order of the uncapped walk, by prefix sums.

    First the longest prefix of the walk that fits is taken at once
    (``walk_sums`` are the walk's cumulative costs); the candidate after it does
    not fit: stop-at-misfit ends there, skip-not-stop skips it and goes on. Each
    later step looks only at the candidates costing at most what is left (no
    other can ever fit, since what is left only shrinks), takes the longest
    prefix of them that fits, and skips the next of them."""
    ordered = np.full(len(costs), O_BUDGET, dtype=np.int8)
    if slots is not None and slots <= 0:
        ordered[:] = O_MAX_ITEMS
        return ordered
    limit = len(costs) if slots is None else slots
    taken = min(int(np.searchsorted(walk_sums, left, side="right")), limit)
    ordered[:taken] = O_INCLUDED
    if taken:
        left -= int(walk_sums[taken - 1])
    if taken >= limit:
        ordered[taken:] = O_MAX_ITEMS
        return ordered
    if taken == len(costs):
        return ordered
    if stop_at_misfit:
        ordered[taken + 1 :] = O_STOP
        return ordered
    pos = taken + 1
    for _ in range(_PREFIX_STEPS):
        picks = pos + np.flatnonzero(costs[pos:] <= left)
        sums = np.cumsum(costs[picks])
        fits = min(int(np.searchsorted(sums, left, side="right")), limit - taken)
        ordered[picks[:fits]] = O_INCLUDED
        taken += fits
        if fits:
            left -= int(sums[fits - 1])
        if taken >= limit:
            ordered[int(picks[fits - 1]) + 1 :] = O_MAX_ITEMS  # fits >= 1: picks[0] fits
            return ordered
        if fits == len(picks):
            return ordered  # every candidate that could fit was taken
        pos = int(picks[fits]) + 1
    # Many misfits among cheap candidates: finish one candidate at a time (each
    # step above took at least one, so this is rare and what is left is small).
    for k in (pos + np.flatnonzero(costs[pos:] <= left)).tolist():
        cost = int(costs[k])
        if cost <= left:
            ordered[k] = O_INCLUDED
            left -= cost
            taken += 1
            if taken >= limit:
                ordered[k + 1 :] = O_MAX_ITEMS
                break
    return ordered


def fill_walk(
    order: np.ndarray,
    tokens: np.ndarray,
    categories: Sequence[str | None],
    remaining: int,
    slots: int | None,
    caps: CategoryCaps,
    *,
    stop_at_misfit: bool,
) -> np.ndarray:
    """:func:`fill` one candidate at a time (any caps)."""
    outcome = np.full(len(tokens), O_INCLUDED, dtype=np.int8)
    ordered = np.full(len(order), O_BUDGET, dtype=np.int8)  # outcome in walk order
    costs = tokens[order]
    left = remaining
    taken = 0

    def take(k: int, cost: int) -> bool:
        """Decide candidate ``order[k]``, known to fit; False when its walk must end."""
        nonlocal left, taken
        if caps.active and not caps.take(categories[order[k]]):
            ordered[k] = O_CATEGORY
            return True
        ordered[k] = O_INCLUDED
        left -= cost
        taken += 1
        if slots is not None and taken >= slots:
            ordered[k + 1 :] = O_MAX_ITEMS
            return False
        return True

    if slots is not None and slots <= 0:
        ordered[:] = O_MAX_ITEMS
    elif stop_at_misfit:
        for k, cost in enumerate(costs.tolist()):
            if cost > left:
                ordered[k + 1 :] = O_STOP
                break
            if not take(k, cost):
                break
    else:
        # Skip-not-stop, a block at a time: a candidate costing more than what is
        # left at the start of its block can never fit (``left`` only shrinks), so
        # only the cheaper ones are visited one by one.
        for start in range(0, len(order), _BLOCK):
            block = costs[start : start + _BLOCK]
            stopped = False
            for k in (start + np.flatnonzero(block <= left)).tolist():
                cost = int(costs[k])
                if cost <= left and not take(k, cost):
                    stopped = True
                    break
            if stopped:
                break
    outcome[order] = ordered
    return outcome
