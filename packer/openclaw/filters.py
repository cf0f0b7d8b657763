"""What leaves the fused list before ordering: soft-archived records
(``core/lifecycle.py``, ``filter_retrieval_results``; POLICY.md 3.3) and
superseded ones (``_filter_superseded_ids``; POLICY.md 4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from ..records import LIFECYCLE, RecordFields

__all__ = ["drop_archived", "drop_superseded"]

SOFT_ARCHIVED: Final = LIFECYCLE.index("soft-archived")


def drop_archived(
    refs: Sequence[str], positions: Mapping[str, int], records: RecordFields
) -> list[str]:
    """``refs`` without the soft-archived records, in order."""
    lifecycle = records.lifecycle
    return [ref for ref in refs if lifecycle[positions[ref]] != SOFT_ARCHIVED]


def drop_superseded(
    refs: Sequence[str], positions: Mapping[str, int], records: RecordFields
) -> tuple[list[str], set[str]]:
    """``refs`` without every id one of them supersedes, in order, and the ids
    removed. Only the claims of ``refs`` count; there is no chain resolution (a
    record superseded by a superseded record is still removed) and a record
    may supersede itself."""
    named = {old for ref in refs for old in records.supersedes[positions[ref]]}
    kept = [ref for ref in refs if ref not in named]
    return kept, named & set(refs)
