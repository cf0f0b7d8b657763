"""Parity with lossless-claw's real ``ContextAssembler``, proved by its own outputs.

``../shared/data/lossless-claw/assembler-cases.jsonl.gz`` holds 2,000 random cases
that lossless-claw's assembler (commit 4214b48, run unmodified) packed with
prompt-aware eviction off and on. For every case, ``chronological`` and
``bm25lite`` must select the same ids, in pack order, in the same mode. The
requests are packed as they are: the per-item token counts and scored texts the
assembler recorded are for diagnosing a mismatch and are never fed back.
"""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from packproof.packer import pack

CASES = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "data"
    / "lossless-claw"
    / "assembler-cases.jsonl.gz"
)
# lossless-claw's name for each of packproof's modes.
LCM_MODE = {"full-fit": "full-fit", "chronological": "chronological", "ranked": "prompt-aware"}


@cache
def cases() -> list[dict[str, Any]]:
    if not CASES.exists():
        pytest.skip(
            f"{CASES} is absent: the lossless-claw conformance suite is read from "
            "../shared beside the project root (CI has it)"
        )
    with gzip.open(CASES, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def diagnose(case: dict[str, Any], selected: list[str]) -> str:
    """Where a mismatch comes from: the items whose price or scored text differs."""
    result = pack({**case["request"], "strategy": "chronological"})
    items = result.request.items
    recorded = case["lossless_claw"]["tokens"]
    priced = [
        f"{ref}: ours {int(items.tokens[i])}, theirs {recorded[ref]}"
        for i, ref in enumerate(items.ids)
        if int(items.tokens[i]) != recorded[ref]
    ]
    return f"selected {selected}; token counts that differ: {priced or 'none'}"


@pytest.mark.parametrize("strategy", ["chronological", "bm25lite"])
def test_every_case_selects_what_lossless_claws_assembler_selected(strategy: str) -> None:
    mismatches = []
    for case in cases():
        result = pack({**case["request"], "strategy": strategy})
        got = {"selected": result.selected_ids, "mode": LCM_MODE[result.mode]}
        expected = case["expected"][strategy]
        if got != expected:
            mismatches.append(
                f"{case['id']}: expected {expected}, got {got}; "
                + diagnose(case, result.selected_ids)
            )
    assert not mismatches, (
        f"{len(mismatches)} of {len(cases())} cases differ from lossless-claw "
        f"({strategy}):\n" + "\n".join(mismatches[:5])
    )


def test_the_suite_covers_every_mode_and_role() -> None:
    """The file exercises what the parity claim covers (so a thinner file is noticed)."""
    modes = {(s, c["expected"][s]["mode"]) for c in cases() for s in c["expected"]}
    assert modes >= {
        ("chronological", "full-fit"),
        ("chronological", "chronological"),
        ("bm25lite", "prompt-aware"),
        ("bm25lite", "chronological"),
    }
    kinds = {(it.get("kind"), it.get("role")) for c in cases() for it in c["request"]["items"]}
    assert {("message", r) for r in ("user", "assistant", "tool", "system")} <= kinds
    assert any(k == "summary" for k, _ in kinds)
    assert len(cases()) == 2000


@pytest.fixture(autouse=True)
def _validate_every_pack() -> None:
    """4,000 packs: their schema validity is tested elsewhere, their selection here."""
