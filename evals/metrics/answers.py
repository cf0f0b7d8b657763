"""Answer token recall: how much of a turn's gold answer the pack's text holds.
Formulas: docs/metrics.md ("Answers").

A check free of evidence labels: it reads the answer and the packed texts, not
the gold ``relevant`` ids, so a ranking of strategies that it confirms is not an
artefact of how the evidence was labelled.

A text's content words are its lower-cased Unicode word tokens (maximal runs of
letters, marks and digits) minus the shipped English stopwords
(``evals/data/stopwords-en.txt``) and minus one-letter tokens (the ``s`` of a
possessive, the ``t`` of ``don't``); a one-character number stays. They are a set:
a word counts once however often the answer repeats it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache, lru_cache
from importlib import resources
from typing import Final
from weakref import WeakKeyDictionary

import numpy as np
import regex

from packproof.packer.model import Items

__all__ = ["STOPWORDS_FILE", "Answers", "content_words", "stopwords"]

STOPWORDS_FILE: Final = "stopwords-en.txt"

# On ASCII text [^\W_] is exactly [\p{L}\p{M}\p{N}], and `re` is faster than
# `regex`; the packer's Unicode analyzer makes the same split (packer/text.py).
_ASCII_WORD: Final = re.compile(r"[^\W_]+")
_WORD: Final = regex.compile(r"[\p{L}\p{M}\p{N}]+")


@cache
def stopwords() -> frozenset[str]:
    """The shipped stopword list (the Glasgow IR group's, as scikit-learn ships it)."""
    text = resources.files("packproof.evals").joinpath("data", STOPWORDS_FILE).read_text("utf-8")
    lines = (line.strip() for line in text.splitlines())
    return frozenset(w for w in lines if w and not w.startswith("#"))


# A conversation's item texts are read by every turn that asks about it: each
# distinct text is tokenised once per process, not once per turn.
@lru_cache(maxsize=1 << 16)
def content_words(text: str) -> frozenset[str]:
    """The set of content words of ``text`` (module docstring)."""
    lowered = text.lower()
    found = (_ASCII_WORD if lowered.isascii() else _WORD).findall(lowered)
    stop = stopwords()
    return frozenset(w for w in found if w not in stop and (len(w) > 1 or w.isnumeric()))


class Answers:
    """A turn's gold answers matched against its items, shared by every pack of
    the turn: each item's text is tokenised once, and the ceiling (every item of
    the request) is computed once; a pack's recall is then one boolean reduction.

    Several answers are alternatives (any one is a correct answer): a pack's
    value is the best over the answers that have a content word."""

    def __init__(self, answers: Sequence[str], items: Items) -> None:
        wanted = [words for words in map(content_words, answers) if words]
        if not wanted:  # (a replay's step): no recall, no ceiling
            self._answers, self._contains, self.ceiling = [], np.zeros((0, 0), dtype=bool), None
            return
        vocabulary = sorted({w for words in wanted for w in words})
        column = {w: i for i, w in enumerate(vocabulary)}
        self._answers = [np.array(sorted(column[w] for w in words)) for words in wanted]
        # _contains[w, i]: item i's text holds content word w of some answer
        self._contains = np.zeros((len(vocabulary), len(items)), dtype=bool)
        # the items that hold each word, read from their table's index (a window,
        # such as a replay's step, from its base table's)
        base, start = items.base_window()
        index, stop = _word_index(base), start + len(items)
        for w, row in column.items():
            at = index.get(w)
            if at is not None:
                lo, hi = at.searchsorted((start, stop))
                self._contains[row, at[lo:hi] - start] = True
        self.ceiling = self._best(np.logical_or.reduce(self._contains, axis=1))

    def recall(self, included: np.ndarray) -> float | None:
        """The share of the answer's content words in the texts of the packed
        items (``included``: a mask over the items); None without an answer."""
        if not self._answers:
            return None
        return self._best(np.logical_or.reduce(self._contains & included, axis=1))

    def _best(self, present: np.ndarray) -> float | None:
        shares = [int(present[at].sum()) / len(at) for at in self._answers]
        return max(shares) if shares else None


_INDEXES: WeakKeyDictionary[Items, dict[str, np.ndarray]] = WeakKeyDictionary()


def _word_index(table: Items) -> dict[str, np.ndarray]:
    """Each content word of the table's texts, and the positions of the items
    whose text holds it (ascending), made once per table: every turn asking
    about it, and every window of it (each step of a replay), reads it."""
    index = _INDEXES.get(table)
    if index is None:
        where: dict[str, list[int]] = {}
        for i, text in enumerate(table.texts):
            for w in content_words(text):
                where.setdefault(w, []).append(i)
        index = _INDEXES[table] = {w: np.array(at, dtype=np.intp) for w, at in where.items()}
    return index
