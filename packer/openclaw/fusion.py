"""Reciprocal rank fusion of the retrieval lanes (openclaw-mem ``vector.rank_rrf``;
POLICY.md 3.2)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

__all__ = ["RRF_K", "candidate_limit", "natural_key", "rrf_fuse"]

RRF_K: Final = 60
_DIGITS: Final = re.compile(r"([0-9]+)")


def candidate_limit(limit: int) -> int:
    """The size of each lane, of the fused list and of the candidate list:
    ``max(3 * limit, limit + 8)`` (POLICY.md 1)."""
    return max(3 * limit, limit + 8)


def natural_key(ref: str) -> tuple[str | int, ...]:
    """Ids in natural order: digit runs compare as numbers, so ``obs:9`` comes
    before ``obs:10``. openclaw-mem's ids are integers and it breaks fusion ties
    by id ascending; for ``obs:N`` this is that order. The split alternates text
    and numbers, so two keys compare position by position like with like."""
    return tuple(int(part) if k % 2 else part for k, part in enumerate(_DIGITS.split(ref)))


def rrf_fuse(lanes: Sequence[Sequence[str]], limit: int) -> list[tuple[str, float]]:
    """``(id, score)`` best first, at most ``limit``:

        score(id) = sum over lanes, in the given order, of 1 / (60 + r + 1)

    with ``r`` the id's 0-based position in the lane. Each sum starts at 0.0 and
    adds lane by lane (the float depends on that order); ties by id ascending."""
    scores: dict[str, float] = {}
    for lane in lanes:
        for r, ref in enumerate(lane):
            scores[ref] = scores.get(ref, 0.0) + 1.0 / (RRF_K + r + 1)
    fused = sorted(scores.items(), key=lambda pair: (-pair[1], natural_key(pair[0])))
    return fused[:limit]
