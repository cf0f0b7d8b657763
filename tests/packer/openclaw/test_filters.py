"""Soft-archived and superseded records leave the fused list."""

from __future__ import annotations

import numpy as np

from packproof.packer.openclaw.filters import drop_archived, drop_superseded
from packproof.packer.records import LIFECYCLE, RecordFields

REFS = ["a", "b", "c", "d"]
POSITION = {ref: k for k, ref in enumerate(REFS)}


def with_supersedes(*claims: tuple[str, ...]) -> RecordFields:
    base = RecordFields.defaults(len(claims))
    return RecordFields(
        base.ts,
        base.kinds,
        base.lifecycle,
        base.used_counts,
        base.importance_scores,
        list(claims),
        base.synthesis,
    )


def test_soft_archived_records_are_dropped_in_order() -> None:
    base = RecordFields.defaults(4)
    states = ["active", "soft-archived", "stale", "soft-archived"]
    lifecycle = np.array([LIFECYCLE.index(s) for s in states], dtype=np.int8)
    records = RecordFields(
        base.ts,
        base.kinds,
        lifecycle,
        base.used_counts,
        base.importance_scores,
        base.supersedes,
        base.synthesis,
    )
    assert drop_archived(REFS, POSITION, records) == ["a", "c"]


def test_every_named_id_is_removed_without_chain_resolution() -> None:
    # a supersedes b, b supersedes c: both b and c go (b's claim still counts)
    records = with_supersedes(("b",), ("c",), (), ())
    assert drop_superseded(REFS, POSITION, records) == (["a", "d"], {"b", "c"})


def test_a_record_can_supersede_itself() -> None:
    records = with_supersedes((), (), ("c", "x:9"), ())
    assert drop_superseded(REFS, POSITION, records) == (["a", "b", "d"], {"c"})


def test_only_the_claims_of_listed_records_count() -> None:
    records = with_supersedes((), (), (), ("a",))
    # d is not listed (say, filtered as archived): its claim on a does not count
    assert drop_superseded(["a", "b", "c"], POSITION, records) == (["a", "b", "c"], set())
