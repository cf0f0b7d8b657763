"""Cache-aware packing: options every strategy shares, like the fresh tail.

A provider's prompt cache reuses a prompt's prefix only where it matches the
previous prompt exactly (REFERENCE.md section 5), so a pack that re-selects its
items at every turn pays for the whole prompt again. With ``cache_aware`` set,
a request may carry the previous pack (its recordRefs in order) and the seconds
since it was sent, and the pack is assembled in two parts:

- the **stable part** keeps the previous pack as an unchanged prefix and appends
  what arrived since (and any protected item it lacks), while that fits under
  the high-water mark (the budget less the recall share). Only when it would
  not fit is it **compacted**: re-selected by the strategy down to the
  low-water mark (``low_water`` x budget), so the prefix breaks only then. When
  the previous pack is older than ``ttl_s`` the cache is gone anyway and the
  stable part is re-selected the same way at no extra cost (lossless-claw PR
  #385's idea). The first pack of a conversation is selected the same way,
  keeping everything when everything fits under the high-water mark.
- the **recall block** (``recall_share`` x budget tokens) holds the strategy's
  top-ranked candidates (within its first ``recall_depth``) that the stable part
  lacks, placed after the stable part (only the prompt's end changes; the next
  pack keeps it in its prefix) or first (as lossless-claw PR #765 does, which
  changes the prefix: issue #1169).

Packing stays a pure function of the request. Requests without ``cache_aware``
are packed exactly as before (ordinal order, the same bytes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from .checks import check_object, fail
from .errors import InputError, pointer
from .model import Items
from .reasons import (
    O_APPEND_ONLY,
    O_APPENDED,
    O_INCLUDED,
    O_KEPT,
    O_QUARANTINED,
    O_RECALL,
)
from .select import CategoryCaps, fill, fits_whole

if TYPE_CHECKING:
    from .pipeline import Ranked, Reserved
    from .request import Request
    from .result import Mode

__all__ = [
    "ACTIONS",
    "PLACEMENTS",
    "CacheAware",
    "CacheDecision",
    "PreviousPack",
    "assemble_cache_aware",
    "parse_cache_aware",
    "parse_previous_pack",
]

PLACEMENTS: Final = ("after", "first")
# What the stable part did: kept the previous pack and appended; re-selected
# because it would overflow; re-selected because the cache had gone cold; the
# first pack (no previous pack given).
ACTIONS: Final = ("append", "compact", "cold", "first")
# Per item placement codes (PackResult.placement).
P_NONE, P_STABLE, P_RECALL = 0, 1, 2
PLACEMENT_NAMES: Final = (None, "stable", "recall")


@dataclass(frozen=True)
class CacheAware:
    """The shared cache-aware options (see the module docstring)."""

    low_water: float = 0.6
    recall_share: float = 0.0
    recall_depth: int = 20
    placement: str = "after"
    ttl_s: float = 300.0

    def params(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in sorted(fields(self), key=lambda f: f.name)}

    def to_json(self) -> dict[str, Any]:
        return self.params()


_OPTIONS: Final = frozenset(f.name for f in fields(CacheAware))
OPTION_DOCS: Final = {
    "low_water": "share of the budget a compaction re-selects the stable part down to (0 < x <= 1)",
    "recall_share": "share of the budget held for the recall block (0 <= x < 1; low_water + "
    "recall_share <= 1)",
    "recall_depth": "the recall block draws on the strategy's first N ranked candidates (N >= 1)",
    "placement": "where the recall block goes: after the stable part, or first",
    "ttl_s": "seconds after which the previous pack's cache is cold and the stable part is "
    "re-selected freely (0: never)",
}


def check_option(key: str, value: Any, where: str) -> Any:
    """One option's value, checked (numbers become floats, the depth an int)."""
    if key == "placement":
        if type(value) is not str or value not in PLACEMENTS:
            raise fail(where, "unknown value", "one of " + "|".join(PLACEMENTS), value)
        return value
    if type(value) not in (int, float) or not math.isfinite(value):
        raise fail(where, "wrong type", "a finite number", value)
    if key == "recall_depth":
        if value != int(value) or value < 1:
            raise fail(where, "out of range", "an integer >= 1", value)
        return int(value)
    ranges = {
        "low_water": (value <= 0 or value > 1, "a number > 0 and <= 1"),
        "recall_share": (value < 0 or value >= 1, "a number >= 0 and < 1"),
        "ttl_s": (value < 0, "a number >= 0"),
    }
    bad, expected = ranges[key]
    if bad:
        raise fail(where, "out of range", expected, value)
    return float(value)


def build_cache_aware(values: Mapping[str, Any], where: str = "/cache_aware") -> CacheAware:
    """Options from user-given values, every one checked (unknown keys named)."""
    kwargs: dict[str, Any] = {}
    for key in sorted(values):
        at = where + pointer(key)
        if key not in _OPTIONS:
            raise fail(
                at, "unknown cache-aware option", "one of " + ", ".join(sorted(_OPTIONS)), key
            )
        kwargs[key] = check_option(key, values[key], at)
    options = CacheAware(**kwargs)
    if options.low_water + options.recall_share > 1:
        raise fail(
            where,
            "low_water + recall_share exceeds 1 (the stable part and the recall block share "
            "the budget)",
            "a sum <= 1",
            options.low_water + options.recall_share,
        )
    return options


def parse_cache_aware(raw: Any) -> CacheAware | None:
    """The request's ``cache_aware`` object (None when absent or null)."""
    if raw is None:
        return None
    return build_cache_aware(check_object(raw, "/cache_aware"))


@dataclass(frozen=True, eq=False)
class PreviousPack:
    """The previous pack as positions into the request's items, in pack order,
    and the seconds since it was sent (None: unknown, never cold)."""

    positions: np.ndarray
    elapsed_s: float | None

    def to_json(self, items: Items) -> dict[str, Any]:
        return {
            "record_refs": [items.ids[i] for i in self.positions.tolist()],
            "elapsed_s": self.elapsed_s,
        }


def parse_previous_pack(raw: Any, items: Items) -> PreviousPack | None:
    """The request's ``previous_pack``: every recordRef must name one of the
    request's items, once; ``elapsed_s`` is a finite number >= 0 or null."""
    if raw is None:
        return None
    obj = check_object(raw, "/previous_pack", frozenset({"record_refs", "elapsed_s"}))
    if "record_refs" not in obj:
        raise InputError("/previous_pack", "missing required field 'record_refs'")
    refs = obj["record_refs"]
    if type(refs) is not list:
        raise fail("/previous_pack/record_refs", "wrong type", "an array of item ids", refs)
    position = items.position
    out = np.empty(len(refs), dtype=np.int64)
    first: dict[str, int] = {}
    for k, ref in enumerate(refs):
        where = pointer("previous_pack", "record_refs", k)
        if type(ref) is not str:
            raise fail(where, "wrong type", "an item id (string)", ref)
        if ref in first:
            raise InputError(
                where,
                f"repeated id {ref!r} in the previous pack (first at "
                f"{pointer('previous_pack', 'record_refs', first[ref])})",
            )
        at = position.get(ref)
        if at is None:
            raise fail(where, "unknown id (not one of the request's items)", "an item id", ref)
        first[ref] = k
        out[k] = at
    elapsed = obj.get("elapsed_s")
    if elapsed is not None:
        if type(elapsed) not in (int, float) or not math.isfinite(elapsed):
            raise fail("/previous_pack/elapsed_s", "wrong type", "a finite number or null", elapsed)
        if elapsed < 0:
            raise fail("/previous_pack/elapsed_s", "out of range", "a number >= 0", elapsed)
        elapsed = float(elapsed)
    out.flags.writeable = False
    return PreviousPack(out, elapsed)


@dataclass(frozen=True)
class CacheDecision:
    """What the cache-aware assembly did, for the trace."""

    action: str  # one of ACTIONS
    why: str
    high_water_tokens: int  # the stable part's ceiling: budget less the recall share
    low_water_tokens: int  # what a compaction re-selects down to
    recall_budget_tokens: int
    stable_tokens: int
    recall_tokens: int
    previous_items: int | None  # None: no previous pack
    kept_prefix_items: int  # leading items of the previous pack kept in place


@dataclass(frozen=True, eq=False)
class Assembly:
    outcome: np.ndarray
    order: np.ndarray  # positions in pack order
    placement: np.ndarray  # P_* per item
    decision: CacheDecision
    fill_mode: Mode  # the re-selection's fill mode, or "append"


def assemble_cache_aware(req: Request, reserved: Reserved, ranked: Ranked) -> Assembly:
    """The stable part (appended to, compacted, or re-selected cold), then the
    recall block, then their order (see the module docstring)."""
    options = req.cache_aware
    assert options is not None
    items = reserved.items
    budget = req.budget_tokens
    recall_budget = math.floor(options.recall_share * budget)
    high = budget - recall_budget
    low = math.floor(options.low_water * budget)
    previous = req.previous_pack
    eligible = reserved.outcome != O_QUARANTINED
    protected = reserved.in_tail | reserved.anchored

    outcome = reserved.outcome.copy()
    stable: np.ndarray | None = None
    action, why = "first", "no previous pack was given"
    if previous is not None:
        ttl = options.ttl_s
        if ttl > 0 and previous.elapsed_s is not None and previous.elapsed_s >= ttl:
            action = "cold"
            why = f"{previous.elapsed_s:g} s since the previous pack >= ttl_s {ttl:g}"
        else:
            stable, action, why = _append(req, reserved, previous, eligible, protected, high)
    fill_mode: Mode = "append"
    if stable is None:
        stable, fill_mode = _reselect(req, reserved, ranked, high, low, outcome)
    else:
        in_previous = np.zeros(len(items), dtype=bool)
        in_previous[previous.positions] = True  # type: ignore[union-attr]
        chosen = np.zeros(len(items), dtype=bool)
        chosen[stable] = True
        evictable = np.zeros(len(items), dtype=bool)
        evictable[reserved.evictable] = True
        outcome[evictable & chosen & in_previous] = O_KEPT
        outcome[evictable & chosen & ~in_previous] = O_APPENDED
        outcome[evictable & ~chosen] = O_APPEND_ONLY

    # the recall room, less any overrun of the stable part (a tail above H)
    stable_tokens = int(items.tokens[stable].sum())
    room = min(recall_budget, budget - stable_tokens)
    recall = _recall_block(req, reserved, ranked, stable, room)
    outcome[recall] = O_RECALL
    placement = np.zeros(len(items), dtype=np.int8)
    placement[stable] = P_STABLE
    placement[recall] = P_RECALL
    order = np.concatenate([recall, stable] if options.placement == "first" else [stable, recall])
    kept = 0
    if previous is not None:
        for a, b in zip(previous.positions.tolist(), order.tolist(), strict=False):
            if a != b:
                break
            kept += 1
    decision = CacheDecision(
        action=action,
        why=why,
        high_water_tokens=high,
        low_water_tokens=low,
        recall_budget_tokens=recall_budget,
        stable_tokens=stable_tokens,
        recall_tokens=int(items.tokens[recall].sum()),
        previous_items=None if previous is None else len(previous.positions),
        kept_prefix_items=kept,
    )
    for shared in (order, placement):
        shared.flags.writeable = False
    return Assembly(outcome, order, placement, decision, fill_mode)


def _append(
    req: Request,
    reserved: Reserved,
    previous: PreviousPack,
    eligible: np.ndarray,
    protected: np.ndarray,
    high: int,
) -> tuple[np.ndarray | None, str, str]:
    """The previous pack (less any item now excluded by trust) with what arrived
    since appended in ordinal order, or None (compaction) when it would not fit."""
    items = reserved.items
    prev = previous.positions
    kept = prev[eligible[prev]]
    newest = int(items.ordinals[prev].max()) if len(prev) else None
    arrived = eligible.copy()
    arrived[prev] = False
    if newest is not None:
        arrived &= (items.ordinals > newest) | protected
    stable = np.concatenate([kept, np.flatnonzero(arrived)]).astype(np.int64)
    tokens = int(items.tokens[stable].sum())
    if tokens > high:
        return None, "compact", f"appending would need {tokens} tokens > high-water {high}"
    if req.max_items is not None and len(stable) > req.max_items:
        return None, "compact", f"appending would hold {len(stable)} items > max_items"
    if req.category_caps:
        caps = CategoryCaps(req.category_caps, [])
        for i in stable.tolist():
            if not caps.take(items.categories[i]):
                category = items.categories[i]
                return None, "compact", f"appending would exceed the cap of category {category!r}"
    dropped = len(prev) - len(kept)
    why = f"kept the previous pack's {len(kept)} items and appended {len(stable) - len(kept)}"
    if dropped:
        why += f" ({dropped} excluded by the trust policy since)"
    return stable, "append", why


def _reselect(
    req: Request,
    reserved: Reserved,
    ranked: Ranked,
    high: int,
    low: int,
    outcome: np.ndarray,
) -> tuple[np.ndarray, Mode]:
    """The strategy's selection for the stable part: everything when it all fits
    under the high-water mark, else a fill down to the low-water mark. Writes
    the candidates' outcomes; returns the kept positions in ordinal order."""
    candidates = reserved.candidates
    protected_tokens = reserved.tail_tokens + reserved.anchor_tokens
    slots = reserved.evictable_slots
    if fits_whole(
        candidates.tokens, candidates.categories, high - protected_tokens, slots, reserved.caps(req)
    ):
        mode: Mode = "full-fit"
    else:
        scores = ranked.ranking.scores
        mode = "chronological" if scores is None else "ranked"
        outcome[reserved.evictable] = fill(
            ranked.order,
            candidates.tokens,
            candidates.categories,
            max(0, low - protected_tokens),
            slots,
            reserved.caps(req),
            stop_at_misfit=scores is None,
            walk_sums=ranked.walk_sums,
        )
    kept = (outcome == O_INCLUDED) | reserved.in_tail | reserved.anchored
    kept &= outcome != O_QUARANTINED
    return np.flatnonzero(kept).astype(np.int64), mode


def _recall_block(
    req: Request, reserved: Reserved, ranked: Ranked, stable: np.ndarray, room: int
) -> np.ndarray:
    """Positions of the recall block, in rank order: the strategy's first
    ``recall_depth`` candidates that the stable part lacks, each while it fits
    (skip-not-stop), within max_items and the category caps."""
    options = req.cache_aware
    assert options is not None
    if room <= 0:
        return np.zeros(0, dtype=np.int64)
    items = reserved.items
    held = np.zeros(len(items), dtype=bool)
    held[stable] = True
    slots = None if req.max_items is None else req.max_items - len(stable)
    caps = CategoryCaps(req.category_caps, [items.categories[i] for i in stable.tolist()])
    out: list[int] = []
    for i in reserved.evictable[ranked.order[: options.recall_depth]].tolist():
        if slots is not None and len(out) >= slots:
            break
        cost = int(items.tokens[i])
        if held[i] or cost > room:
            continue
        if caps.active and not caps.take(items.categories[i]):
            continue
        out.append(i)
        room -= cost
    return np.array(out, dtype=np.int64)
