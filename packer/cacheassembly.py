"""Cache-aware assembly: the stable part (appended to, compacted, or re-selected
cold), the recall block (recomputed, or kept between refreshes) and their order,
from the options and the previous pack that :mod:`.cacheaware` parses (its
docstring describes the whole). :func:`assemble_cache_aware` is the pipeline's
step when a request is cache-aware."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .cacheaware import P_RECALL, P_STABLE, CacheAware, PreviousPack
from .jsonio import mark_floats
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
    from .pipeline import PackResult, Ranked, Reserved
    from .request import Request
    from .result import Mode

__all__ = ["Assembly", "CacheDecision", "assemble_cache_aware", "trace_section"]


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
    # The recall block: recomputed for this pack, or the previous one kept; its
    # age in steps (0: recomputed for this pack); why, in words.
    recall_refreshed: bool = True
    recall_age: int = 0
    recall_why: str = "recomputed at each step"
    # Suggested cache breakpoints, as item counts in pack order: after the part
    # the next step keeps (the stable part, or the recall block placed first),
    # and at the end of the pack; strictly increasing, each >= 1.
    breakpoints: tuple[int, ...] = ()


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
    if previous is not None and options.carry_recall and previous.recall is not None:
        # parse_request refuses this pairing; a request built in code (an eval
        # spec's options over a scenario's previous pack) reads record_refs alone
        previous = PreviousPack(previous.positions, previous.elapsed_s)
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
    refreshed, age, recall_why = _refresh(options, previous, action, ranked)
    if refreshed:
        recall = _recall_block(req, reserved, ranked, stable, room)
    else:
        assert previous is not None and previous.recall is not None
        recall = _kept_block(req, reserved, previous.recall, stable, room)
    outcome[recall] = O_RECALL
    placement = np.zeros(len(items), dtype=np.int8)
    placement[stable] = P_STABLE
    placement[recall] = P_RECALL
    first = options.placement == "first"
    order = np.concatenate([recall, stable] if first else [stable, recall])
    kept = 0
    if previous is not None:
        sent = previous.sent(options.placement).tolist()
        for a, b in zip(sent, order.tolist(), strict=False):
            if a != b:
                break
            kept += 1
    head = len(recall) if first else len(stable)
    breakpoints = tuple(sorted({n for n in (head, len(order)) if n > 0}))
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
        recall_refreshed=refreshed,
        recall_age=age,
        recall_why=recall_why,
        breakpoints=breakpoints,
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
    held = previous.held()  # a recall block given apart is not kept, nor new
    kept = prev[eligible[prev]]
    newest = int(items.ordinals[held].max()) if len(held) else None
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


def _refresh(
    options: CacheAware, previous: PreviousPack | None, action: str, ranked: Ranked
) -> tuple[bool, int, str]:
    """Whether the recall block is recomputed, its age in steps after this pack,
    and why. A carried block, a first block, and a block whose cache has gone
    cold (nothing of it would be read) are always recomputed; otherwise the
    policy decides: ``each`` step; ``every`` ``recall_every`` steps (the block
    serves that many packs); on ``compaction`` (the stable part re-selected);
    at a ``gate``: the strategy's best candidate score >= ``recall_gate``."""
    if options.carry_recall or options.recall_refresh == "each":
        return True, 0, "recomputed at each step"
    if previous is None or previous.recall is None:
        return True, 0, "recomputed: no previous recall block was given"
    if action == "cold":
        return True, 0, "recomputed: the previous pack's cache is cold"
    age = (previous.recall_age or 0) + 1  # steps this pack would serve it
    policy = options.recall_refresh
    if policy == "every":
        if age >= options.recall_every:
            return True, 0, f"recomputed: it served {age} steps (recall_every {age})"
        return False, age, f"kept: it has served {age} of {options.recall_every} steps"
    if policy == "compaction":
        if action == "compact":
            return True, 0, "recomputed with the compacted stable part"
        return False, age, f"kept: the stable part was not re-selected ({action})"
    scores = ranked.ranking.scores
    best = None if scores is None or not len(ranked.order) else float(scores[ranked.order[0]])
    if best is not None and best >= options.recall_gate:
        return True, 0, f"recomputed: best score {best:.6g} >= recall_gate {options.recall_gate:g}"
    shown = "none (unscored)" if best is None else f"{best:.6g}"
    return False, age, f"kept: best score {shown} below recall_gate {options.recall_gate:g}"


def _kept_block(
    req: Request, reserved: Reserved, block: np.ndarray, stable: np.ndarray, room: int
) -> np.ndarray:
    """The previous recall block kept as it was: less the items now in the
    stable part or no longer candidates (excluded by trust, or now protected),
    and its longest head that fits in ``room``, ``max_items`` and the caps (a
    head, so the part kept is still the prefix it was)."""
    items = reserved.items
    usable = np.zeros(len(items), dtype=bool)
    usable[reserved.evictable] = True
    usable[stable] = False
    slots = None if req.max_items is None else req.max_items - len(stable)
    caps = CategoryCaps(req.category_caps, [items.categories[i] for i in stable.tolist()])
    out: list[int] = []
    for i in block.tolist():
        if not usable[i]:
            continue
        cost = int(items.tokens[i])
        if cost > room or (slots is not None and len(out) >= slots):
            break
        if caps.active and not caps.take(items.categories[i]):
            break
        out.append(i)
        room -= cost
    return np.array(out, dtype=np.int64)


def trace_section(result: PackResult) -> dict[str, Any]:
    """The trace's ``cache_aware`` section: the options, what the stable part did
    and why, the recall block, and the suggested breakpoints."""
    req = result.request
    decision = result.cache
    assert decision is not None and req.cache_aware is not None
    previous = req.previous_pack
    section: dict[str, Any] = mark_floats(  # its floats are written as given (not rounded)
        {
            "options": req.cache_aware.to_json(),
            "action": decision.action,
            "why": decision.why,
            "previous_pack": None
            if previous is None
            else {"items": decision.previous_items, "elapsed_s": previous.elapsed_s},
            "kept_prefix_items": decision.kept_prefix_items,
            "high_water_tokens": decision.high_water_tokens,
            "low_water_tokens": decision.low_water_tokens,
            "recall_budget_tokens": decision.recall_budget_tokens,
            "stable_tokens": decision.stable_tokens,
            "recall_tokens": decision.recall_tokens,
            "breakpoints": list(decision.breakpoints),
        }
    )
    if req.cache_aware.extended:  # written only then: earlier traces keep their bytes
        if previous is not None and previous.recall is not None:
            section["previous_pack"]["recall_items"] = len(previous.recall)
            section["previous_pack"]["recall_age"] = previous.recall_age
        section["recall_refreshed"] = decision.recall_refreshed
        section["recall_age"] = decision.recall_age
        section["recall_why"] = decision.recall_why
    return section
