"""With token counts given, packproof selects what a transliteration of lossless-claw's
assembler selects, on hypothesis-drawn inputs (negative tail caps included); the real
assembler's own outputs are the conformance test (tests/evals/conformance/test_lossless_claw.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from packproof.packer import pack

from .lcm_reference import LcmItem, lcm_assemble

WORDS = [
    "database",
    "migration",
    "db",
    "deploy",
    "lunch",
    "a",
    "x1",
    "Auth2",
    "login-flow",
    "v3.1",
    "数据库",
    "café",
    "the",
    "THE",
]

texts = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)
items_st = st.lists(
    st.tuples(
        texts, st.sampled_from(["user", "assistant", "tool"]), st.booleans(), st.integers(0, 30)
    ),
    max_size=25,
)


def to_requests(
    raw: list[tuple[str, str, bool, int]],
) -> tuple[list[dict[str, Any]], list[LcmItem]]:
    ours, theirs = [], []
    for i, (text, role, is_summary, tokens) in enumerate(raw):
        kind = "summary" if is_summary else "message"
        ours.append(
            {
                "id": f"i{i}",
                "text": text,
                "role": role,
                "kind": kind,
                "tokens": tokens,
                "ordinal": i,
            }
        )
        theirs.append(LcmItem(f"i{i}", i, tokens, text, role, not is_summary))
    return ours, theirs


@given(
    items_st,
    st.integers(1, 200),
    st.integers(0, 8),
    st.none() | st.integers(-5, 60),
    st.none() | texts,
)
def test_chronological_and_bm25lite_match_lossless_claw(
    raw: list[tuple[str, str, bool, int]],
    budget: int,
    count: int,
    cap: int | None,
    prompt: str | None,
) -> None:
    ours, theirs = to_requests(raw)
    tail = {"count": count, "max_tokens": cap}
    for name, aware in (("chronological", False), ("bm25lite", True)):
        result = pack(
            {
                "items": ours,
                "budget_tokens": budget,
                "fresh_tail": tail,
                "prompt": prompt,
                "strategy": name,
            }
        )
        expected = lcm_assemble(theirs, budget, count, cap, prompt, prompt_aware=aware)
        assert result.selected_ids == sorted(expected, key=lambda s: int(s[1:])), name
