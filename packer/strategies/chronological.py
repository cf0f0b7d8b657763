"""lossless-claw's default assembly mode."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .base import Ranking, ScoringView, StrategyBase, register


@register
@dataclass(frozen=True)
class Chronological(StrategyBase):
    """Walk evictable items newest to oldest, keep each that fits and stop at the
    first that does not, so the kept set is always a contiguous newest suffix
    (lossless-claw ``assembler.ts``). The prompt is ignored."""

    name: ClassVar[str] = "chronological"
    formula: ClassVar[str] = "newest first; keep while it fits; stop at the first misfit"

    def rank(self, view: ScoringView) -> Ranking:
        return Ranking(scores=None)
