"""What a replay chain carries from one step to the next: a cell's pack as the
chain's next previous pack (with ``carry_recall`` false, its stable part, and the
recall block apart) and the pack's suggested cache breakpoints, from packproof's
own result or an external packer's packproof trace."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any, NamedTuple

from packproof.evals.run.judge import traced
from packproof.evals.run.replay import Link
from packproof.packer.cacheaware import P_RECALL
from packproof.packer.pipeline import PackResult
from packproof.packer.request import Request

__all__ = ["CacheState", "cache_state"]

_REF = itemgetter(0)  # a pack entry's id


class CacheState(NamedTuple):
    link: Link  # what the chain's next step gets as its previous pack
    breakpoints: list[int] | None  # the pack's suggested breakpoints (cache-aware only)


def cache_state(
    req: Request,
    result: PackResult,
    pack: Sequence[tuple[str, int]],
    answer: Mapping[str, Any] | None,
    t: float | None,
) -> CacheState:
    """A cell's pack as its chain's next previous pack, and its breakpoints. With
    ``carry_recall`` false the next request gets the stable part, and the recall
    block apart; an external packer's split and breakpoints are read from its
    trace (packproof's own), else its whole pack is the stable part."""
    ids = list(map(_REF, pack))
    options = req.cache_aware
    if options is None:
        return CacheState(Link(ids, t), None)
    if answer is None:
        assert result.cache is not None and result.placement is not None
        cache = result.cache
        placement = result.placement
        recall: list[str] | None = [
            result.items.ids[i] for i in result.order if placement[i] == P_RECALL
        ]
        breakpoints: list[int] | None = list(cache.breakpoints)
        age: int | None = cache.recall_age
    else:
        recall, breakpoints, age = _traced_cache_state(answer, ids)
    if options.carry_recall or recall is None:
        return CacheState(Link(ids, t), breakpoints)
    kept = set(recall)
    return CacheState(Link([i for i in ids if i not in kept], t, recall, age), breakpoints)


def _traced_cache_state(
    answer: Mapping[str, Any], ids: Sequence[str]
) -> tuple[list[str] | None, list[int] | None, int | None]:
    """An external pack's recall block (ids by position), breakpoints and
    recall age, as its packproof trace gives them (None where it does not)."""
    if not traced(answer):
        return None, None, None
    trace = answer["trace"]
    section = trace.get("cache_aware")
    if not isinstance(section, Mapping):
        return None, None, None
    packed = set(ids)
    placed = [
        (c["position"], c["id"])
        for c in trace["candidates"]
        if c.get("placement") == "recall" and type(c.get("position")) is int and c["id"] in packed
    ]
    points = section.get("breakpoints")
    age = section.get("recall_age")
    return (
        [ref for _, ref in sorted(placed)],
        points if isinstance(points, list) and all(type(n) is int for n in points) else None,
        age if type(age) is int and age >= 0 else None,
    )
