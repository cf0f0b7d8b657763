"""Text analysis for relevance scoring.

Two tokenizers, each pinned because BM25 variants and tokenizers change rankings:

- :func:`lcm_terms`: lossless-claw PR #180 exactly. Lowercase, split on
  ``[^a-z0-9]+``, drop terms of length <= 1. ASCII only: accented letters and CJK
  act as separators. ``"auth2 login-flow v3.1" -> auth2, login, flow, v3``.
- :class:`Analyzer`: Unicode-aware. A term is a maximal run of letters, marks and
  digits of any script (``[\\p{L}\\p{M}\\p{N}]+`` on lowercased text), so
  Devanagari or accented words stay whole. Runs of Han, Hiragana and Katakana,
  written without spaces, become overlapping character bigrams (a lone character
  stays a unigram), as Lucene's CJKBigramFilter does; so a Chinese prompt is
  searchable. Optional English stopwords (Lucene's classic 33-word set) and
  Snowball English stemming (PyStemmer, the ``stem`` extra).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal, Protocol

import regex

from .errors import require
from .termstats import ListStats, TermStats, scan_or_list

__all__ = [
    "ENGLISH_STOPWORDS",
    "LCM_TOKENIZER",
    "Analyzer",
    "LcmTokenizer",
    "StemName",
    "StopwordsName",
    "Tokenizer",
    "lcm_terms",
]

_LCM_TERM = re.compile(r"[a-z0-9]{2,}")


class Tokenizer(Protocol):
    """Turns texts into terms; hashable, so it can key caches."""

    def terms(self, text: str) -> list[str]: ...

    def stats(self, texts: Sequence[str]) -> TermStats:
        """Document lengths and query-term frequencies of ``texts``."""
        ...


def lcm_terms(text: str) -> list[str]:
    """lossless-claw PR #180 ``tokenize``: maximal ``[a-z0-9]`` runs of length >= 2
    of the lowercased text (equivalent to split-then-filter)."""
    return _LCM_TERM.findall(text.lower())


@dataclass(frozen=True)
class LcmTokenizer:
    """:func:`lcm_terms` as a :class:`Tokenizer`."""

    def terms(self, text: str) -> list[str]:
        return lcm_terms(text)

    def stats(self, texts: Sequence[str]) -> TermStats:
        return scan_or_list(texts, 2, _LCM_TERM.findall)


LCM_TOKENIZER = LcmTokenizer()


# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET.
ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)

StopwordsName = Literal["none", "english"]
StemName = Literal["none", "english"]

# On ASCII text, [^\W_] is exactly [\p{L}\p{M}\p{N}] (letters and digits); the
# standard `re` engine is markedly faster than `regex`, and most chat text is ASCII.
_ASCII_WORD = re.compile(r"[^\W_]+")
_CJK_CLASS = r"\p{Han}\p{Hiragana}\p{Katakana}\u30fc"
_UNICODE_PIECE = regex.compile(
    rf"(?P<cjk>[{_CJK_CLASS}]+)|(?P<word>[[\p{{L}}\p{{M}}\p{{N}}]--[{_CJK_CLASS}]]+)",
    regex.V1,
)


def _unicode_terms(lowered: str) -> list[str]:
    out: list[str] = []
    for match in _UNICODE_PIECE.finditer(lowered):
        piece = match.group()
        if match.lastgroup == "word" or len(piece) == 1:
            out.append(piece)
        else:
            out.extend(piece[i : i + 2] for i in range(len(piece) - 1))
    return out


@cache
def _stemmer(name: str) -> Callable[[str], str]:
    stemmer = require("Stemmer", "stem", f"stem={name!r}")
    stem_word = stemmer.Stemmer(name).stemWord
    memo: dict[str, str] = {}

    def stem(term: str) -> str:
        out = memo.get(term)
        if out is None:
            out = memo[term] = stem_word(term)
        return out

    return stem


@dataclass(frozen=True)
class Analyzer:
    """The ``bm25``/``hybrid`` tokenizer; a value, so it can key caches."""

    stopwords: StopwordsName = "none"
    stem: StemName = "none"

    def __post_init__(self) -> None:
        if self.stem != "none":  # a missing stem extra is found when the spec is built
            _stemmer(self.stem)

    def terms(self, text: str) -> list[str]:
        """Terms of one text, in order, with repeats."""
        lowered = text.lower()
        found = _ASCII_WORD.findall(lowered) if lowered.isascii() else _unicode_terms(lowered)
        if self.stopwords == "english":
            found = [t for t in found if t not in ENGLISH_STOPWORDS]
        if self.stem != "none":
            stem = _stemmer(self.stem)
            found = [stem(t) for t in found]
        return found

    def terms_many(self, texts: Sequence[str]) -> list[list[str]]:
        """Terms of many texts, as :meth:`terms` gives them."""
        return [self.terms(t) for t in texts]

    def stats(self, texts: Sequence[str]) -> TermStats:
        """The plain configuration's terms of ASCII text are exactly the maximal
        ``[a-z0-9]`` runs of the lowercased text, so those texts are scanned."""
        if self.stopwords == "none" and self.stem == "none":
            return scan_or_list(texts, 1, _unicode_terms)
        return ListStats(self.terms_many(texts))
