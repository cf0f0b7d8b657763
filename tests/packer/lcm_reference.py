"""An independent, deliberately plain transliteration of lossless-claw's context
assembly (REFERENCE.md section 1: fresh tail with last-user anchor and token cap,
full-fit, chronological stop, PR #180 prompt-aware greedy skip), used to check
packproof's `chronological` and `bm25lite` select exactly what lossless-claw selects.
It shares no code with `packer`. Token counts are given; the scored text follows
lossless-claw at commit 4214b48 (assistant and tool messages are scored as their JSON
content blocks). The real assembler's outputs are checked in
tests/evals/conformance/test_lossless_claw.py; this transliteration adds what that
file lacks: hypothesis-drawn budgets and tail caps, negative caps (no cap) among them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass


@dataclass
class LcmItem:
    id: str
    ordinal: int
    tokens: int
    text: str = ""
    role: str = "user"
    is_message: bool = True


def lcm_tokenize(text: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", text.lower()) if len(t) > 1]


def scored_text(item: LcmItem) -> str:
    if item.is_message and item.role in ("assistant", "tool"):
        return json.dumps(
            [{"type": "text", "text": item.text}], ensure_ascii=False, separators=(",", ":")
        )
    return item.text


def lcm_score_ref(item_text: str, prompt: str) -> float:
    item_terms = lcm_tokenize(item_text)
    prompt_terms = lcm_tokenize(prompt)
    if not item_terms or not prompt_terms:
        return 0.0
    score = 0.0
    seen: set[str] = set()
    for term in prompt_terms:
        if term in seen:
            continue
        seen.add(term)
        tf = sum(1 for t in item_terms if t == term)
        score += tf / len(item_terms)
    return score


def lcm_assemble(
    items: list[LcmItem],
    budget: int,
    fresh_tail_count: int,
    fresh_tail_max_tokens: int | None = None,
    prompt: str | None = None,
    prompt_aware: bool = False,
) -> list[str]:
    resolved = sorted(items, key=lambda it: it.ordinal)
    # 1. fresh tail
    tail_start_ordinal = None
    if fresh_tail_max_tokens is not None and fresh_tail_max_tokens < 0:
        fresh_tail_max_tokens = None  # freshTailMaxTokens < 0: no cap
    if fresh_tail_count > 0:
        messages = [it for it in resolved if it.is_message]
        users = [it for it in messages if it.role == "user"]
        newest_user = users[-1] if users else None
        anchor_done = newest_user is None
        count = 0
        tokens = 0
        for it in reversed(messages):
            if count >= fresh_tail_count and anchor_done:
                break
            if (
                fresh_tail_max_tokens is not None
                and anchor_done
                and count >= 1
                and tokens + it.tokens > fresh_tail_max_tokens
            ):
                break
            count += 1  # noqa: SIM113 (a literal transliteration, kept plain)
            tokens += it.tokens
            tail_start_ordinal = it.ordinal
            if it is newest_user:
                anchor_done = True
    if tail_start_ordinal is None:
        tail, evictable = [], resolved
    else:
        tail = [it for it in resolved if it.ordinal >= tail_start_ordinal]
        evictable = [it for it in resolved if it.ordinal < tail_start_ordinal]
    tail_tokens = sum(it.tokens for it in tail)
    remaining = max(0, budget - tail_tokens)
    # 2. full fit
    if sum(it.tokens for it in evictable) <= remaining:
        kept = evictable
    elif prompt_aware and prompt is not None and lcm_tokenize(prompt):
        # 4. prompt-aware greedy skip
        scored = [
            (lcm_score_ref(scored_text(it), prompt), idx, it) for idx, it in enumerate(evictable)
        ]
        scored.sort(key=lambda s: (-s[0], -s[1]))
        kept = []
        used = 0
        for _, _, it in scored:
            if used + it.tokens <= remaining:
                kept.append(it)
                used += it.tokens
        kept.sort(key=lambda it: it.ordinal)
    else:
        # 3. chronological: newest first, stop at the first that does not fit
        kept = []
        used = 0
        for it in reversed(evictable):
            if used + it.tokens <= remaining:
                kept.append(it)
                used += it.tokens
            else:
                break
        kept.reverse()
    return [it.id for it in kept + tail]
