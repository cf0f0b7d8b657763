"""The packer benchmark's input: real chat text (the Chit Chat Challenge corpus
of the ``chitchat-dataset`` package) loaded column-wise, the seeded prompts
picked from it, and the request dicts built from it."""

from __future__ import annotations

import importlib
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "BUDGET_TOKENS",
    "CORPUS",
    "FRESH_TAIL",
    "WORD",
    "Corpus",
    "CorpusError",
    "build_items",
    "build_request",
    "load_corpus",
    "pick_prompts",
]

MIN_PROMPT_WORDS: Final = 4
BUDGET_TOKENS: Final = 4096
FRESH_TAIL: Final = 8
CORPUS: Final = "chitchat-dataset"
WORD: Final = re.compile(r"\w+")


@dataclass(frozen=True)
class Corpus:
    """Messages column-wise. Only strings and ints, which the cyclic garbage
    collector does not track, so holding the corpus does not slow the packs
    measured beside it (a list of 100k message objects would)."""

    texts: list[str]
    roles: list[str]
    turns: list[int]
    total: int  # messages in the whole dataset

    def __len__(self) -> int:
        return len(self.texts)

    def head(self, n: int) -> Corpus:
        return Corpus(self.texts[:n], self.roles[:n], self.turns[:n], self.total)


class CorpusError(RuntimeError):
    """The corpus package is not installed, or cannot supply what was asked."""


def load_corpus(limit: int) -> Corpus:
    """The first ``limit`` messages, conversations in sorted key order. Each
    conversation is a list of groups (messages by one sender); groups alternate
    user/assistant and each is one turn."""
    try:
        ccc = importlib.import_module("chitchat_dataset")
    except ImportError:
        raise CorpusError(
            f"the benchmark corpus needs {CORPUS}: pip install 'packproof[bench]'"
        ) from None
    dataset: dict[str, Any] = ccc.Dataset()  # conversation key -> {"messages": groups}
    texts: list[str] = []
    roles: list[str] = []
    turns: list[int] = []
    turn = 0
    for key in sorted(dataset):
        for index, group in enumerate(dataset[key]["messages"]):
            turn += 1
            role = "user" if index % 2 == 0 else "assistant"
            texts.extend(m["text"] for m in group)
            roles.extend([role] * len(group))
            turns.extend([turn] * len(group))
    if len(texts) < limit:
        raise CorpusError(f"{CORPUS} has only {len(texts)} messages; use smaller --sizes")
    return Corpus(texts[:limit], roles[:limit], turns[:limit], total=len(texts))


def pick_prompts(texts: Sequence[str], count: int, seed: int) -> list[str]:
    """``count`` texts of at least MIN_PROMPT_WORDS words, seeded. Prompts are
    messages of the corpus, as a user's next question often echoes the chat;
    shorter ones would leave BM25 too few terms to work on."""
    candidates = [t for t in texts if len(WORD.findall(t)) >= MIN_PROMPT_WORDS]
    if not candidates:
        raise CorpusError(f"no message of {MIN_PROMPT_WORDS}+ words to use as a prompt")
    return random.Random(seed).sample(candidates, min(count, len(candidates)))


def build_items(corpus: Corpus) -> list[dict[str, Any]]:
    return [
        {"id": f"m{i}", "text": text, "role": role, "turn": turn}
        for i, (text, role, turn) in enumerate(
            zip(corpus.texts, corpus.roles, corpus.turns, strict=True)
        )
    ]


def build_request(items: list[dict[str, Any]], prompt: str, strategy: str) -> dict[str, Any]:
    """A request JSON object; ``items`` is shared, never copied or mutated."""
    return {
        "items": items,
        "prompt": prompt,
        "budget_tokens": BUDGET_TOKENS,
        "fresh_tail": {"count": FRESH_TAIL},
        "strategy": {"name": strategy, "params": {}},
    }
