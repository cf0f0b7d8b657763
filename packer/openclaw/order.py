"""Memory candidates and their order (``_pack_build_memory_candidates``,
``_pack_policy_sort_key``; POLICY.md 7, 8).

A stable sort by one key per candidate:

- no final score (the ``relevance`` profile, or a preferred card that was not
  retrieved): ``(0 if synthesis card else 1, trust rank, importance rank,
  -rrf, -matched lanes, -ts, index)``;
- a final score (``composite``): ``(0 if synthesis card else 1, trust rank,
  -final, index)``.

Keys of both shapes can meet in one sort; they then compare element by element
as plain numbers (Python tuple comparison, which this module uses as it is).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from .trust import TrustDecision

__all__ = ["IMPORTANCE_RANK", "TRUST_RANK", "Candidate", "sort_candidates"]

TRUST_RANK: Final = {"trusted": 0, "unknown": 1, "untrusted": 2, "quarantined": 3}
IMPORTANCE_RANK: Final = {"must_remember": 0, "nice_to_have": 1, "unknown": 2, "ignore": 3}


@dataclass(frozen=True)
class Candidate:
    """A memory candidate as openclaw-mem's pack sees it."""

    ref: str
    position: int  # the item's position in the request's table
    index: int  # position in the candidate list before sorting
    text: str
    tokens: int  # 0 for an empty text
    kind: str  # the record's kind, stripped and lower-cased
    importance: str  # the pack label (unknown for a card that was not retrieved)
    trust: str
    rrf: float
    final: float | None
    fts: bool  # in the lexical lane
    semantic: bool  # in a vector lane
    ts_value: float
    synthesis: bool  # the record is a synthesis card (fresh or not)
    decision: TrustDecision | None

    @property
    def matched(self) -> int:
        return int(self.fts) + int(self.semantic)

    @property
    def trust_excluded(self) -> bool:
        return self.decision is not None and not self.decision.included

    def sort_key(self) -> tuple[float, ...]:
        head = (0 if self.synthesis else 1, TRUST_RANK[self.trust])
        if self.final is not None:
            return (*head, -self.final, self.index)
        return (
            *head,
            IMPORTANCE_RANK[self.importance],
            -self.rrf,
            -self.matched,
            -self.ts_value,
            self.index,
        )


def sort_candidates(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The candidates in openclaw-mem's order (a stable sort by :meth:`Candidate.sort_key`)."""
    return sorted(candidates, key=Candidate.sort_key)
