"""What lexical scorers need from a corpus: each document's length in terms, and
the frequency of given query terms in each document.

Two implementations give identical results (a property test holds them equal):

- :class:`ListStats` from explicit term lists: any tokenizer, any text.
- :class:`ScanStats` without building term lists: the lowercased ASCII texts are
  joined into one byte string; document lengths come from counting word-run
  starts with numpy, and each query term's frequencies from one regex scan. For
  tokenizers whose terms on ASCII text are maximal ``[a-z0-9]`` runs (both of
  packproof's, in their plain configuration), this costs a fraction of a Python
  tokenization pass; texts that are not ASCII go through :class:`ListStats`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Protocol

import numpy as np

__all__ = [
    "ListStats",
    "MemoStats",
    "ScanStats",
    "SubsetStats",
    "TermStats",
    "scan_or_list",
]

Frequencies = tuple[np.ndarray, np.ndarray, np.ndarray]


class TermStats(Protocol):
    @property
    def lengths(self) -> np.ndarray:
        """Number of terms of each document (int64)."""
        ...

    def frequencies(self, query: Sequence[str]) -> Frequencies:
        """Every (document, query term) pair with a non-zero count, as arrays of
        document position, index into ``query`` (distinct terms) and count (float64),
        sorted by document then query index."""
        ...


def _sorted(doc: np.ndarray, term: np.ndarray, tf: np.ndarray) -> Frequencies:
    order = np.lexsort((term, doc))
    return doc[order], term[order], tf[order]


_EMPTY: Frequencies = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64))


@dataclass(frozen=True, eq=False)
class ListStats:
    """Term statistics from explicit term lists."""

    terms: list[list[str]]
    lengths: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        lengths = np.fromiter(map(len, self.terms), dtype=np.int64, count=len(self.terms))
        object.__setattr__(self, "lengths", lengths)

    def frequencies(self, query: Sequence[str]) -> Frequencies:
        if not query or not self.terms:
            return _EMPTY
        n = len(self.terms)
        disjoint = np.fromiter(map(set(query).isdisjoint, self.terms), dtype=bool, count=n)
        hits = np.flatnonzero(~disjoint)
        if not len(hits):
            return _EMPTY
        hit_terms = [self.terms[i] for i in hits.tolist()]
        position = {t: j for j, t in enumerate(query)}
        flat = list(chain.from_iterable(hit_terms))
        code = np.fromiter(map(position.get, flat, repeat(-1)), dtype=np.int64, count=len(flat))
        owner = np.repeat(np.arange(len(hits)), self.lengths[hits])
        matched = code >= 0
        width = len(query)
        pairs, counts = np.unique(owner[matched] * width + code[matched], return_counts=True)
        return hits[pairs // width], pairs % width, counts.astype(np.float64)


# Word bytes of the scanned text: lowercase ASCII letters and digits.
_WORD = np.zeros(256, dtype=bool)
_WORD[np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)] = True


@dataclass(frozen=True, eq=False)
class ScanStats:
    """Term statistics of ASCII texts whose terms are maximal ``[a-z0-9]`` runs of
    at least ``min_len`` characters of the lowercased text, computed without term
    lists. The texts are joined by newlines (so no term crosses into the next
    document) and lowercased once; ASCII lowercasing keeps every offset."""

    texts: Sequence[str]
    min_len: int = 1
    lengths: np.ndarray = field(init=False)
    _data: bytes = field(init=False, repr=False)
    _begins: np.ndarray = field(init=False, repr=False)
    _word: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        data = "\n".join(self.texts).lower().encode("ascii")
        n = len(self.texts)
        sizes = np.fromiter(map(len, self.texts), dtype=np.int64, count=n)
        begins = np.concatenate(([0], np.cumsum(sizes + 1)[:-1])) if n else np.zeros(0, np.int64)
        word = _WORD[np.frombuffer(data, dtype=np.uint8)]
        before = np.concatenate(([False], word[:-1]))
        after = np.concatenate((word[1:], [False]))
        starts = np.flatnonzero(word & ~before)
        if self.min_len > 1:
            ends = np.flatnonzero(word & ~after) + 1
            starts = starts[ends - starts >= self.min_len]
        owner = np.searchsorted(begins, starts, side="right") - 1
        object.__setattr__(self, "lengths", np.bincount(owner, minlength=n).astype(np.int64))
        object.__setattr__(self, "_data", data)
        object.__setattr__(self, "_begins", begins)
        object.__setattr__(self, "_word", word)

    def frequencies(self, query: Sequence[str]) -> Frequencies:
        docs, terms, counts = [], [], []
        for j, term in enumerate(query):
            if not term.isascii() or len(term) < self.min_len:
                continue  # cannot be a term of lowercase ASCII text
            pattern = re.compile(re.escape(term.encode("ascii")) + rb"(?![a-z0-9])")
            at = np.fromiter((m.start() for m in pattern.finditer(self._data)), dtype=np.int64)
            at = at[(at == 0) | ~self._word[at - 1]]  # whole runs only
            if not len(at):
                continue
            doc, tf = np.unique(
                np.searchsorted(self._begins, at, side="right") - 1, return_counts=True
            )
            docs.append(doc)
            terms.append(np.full(len(doc), j, dtype=np.int64))
            counts.append(tf.astype(np.float64))
        if not docs:
            return _EMPTY
        return _sorted(np.concatenate(docs), np.concatenate(terms), np.concatenate(counts))


@dataclass(frozen=True, eq=False)
class _Merged:
    """ScanStats over some documents and ListStats over the others."""

    scan: ScanStats
    scan_at: np.ndarray
    rest: ListStats
    rest_at: np.ndarray
    lengths: np.ndarray

    def frequencies(self, query: Sequence[str]) -> Frequencies:
        a_doc, a_term, a_tf = self.scan.frequencies(query)
        b_doc, b_term, b_tf = self.rest.frequencies(query)
        return _sorted(
            np.concatenate((self.scan_at[a_doc], self.rest_at[b_doc])),
            np.concatenate((a_term, b_term)),
            np.concatenate((a_tf, b_tf)),
        )


def scan_or_list(
    texts: Sequence[str], min_len: int, terms_of: Callable[[str], list[str]]
) -> TermStats:
    """Statistics of ``texts``: scanned where the text is ASCII, from term lists
    ``terms_of(text.lower())`` elsewhere."""
    ascii_mask = np.fromiter(map(str.isascii, texts), dtype=bool, count=len(texts))
    if ascii_mask.all():
        return ScanStats(texts, min_len)
    scan_at = np.flatnonzero(ascii_mask)
    rest_at = np.flatnonzero(~ascii_mask)
    scan = ScanStats([texts[i] for i in scan_at.tolist()], min_len)
    rest = ListStats([terms_of(texts[i].lower()) for i in rest_at.tolist()])
    lengths = np.zeros(len(texts), dtype=np.int64)
    lengths[scan_at] = scan.lengths
    lengths[rest_at] = rest.lengths
    return _Merged(scan, scan_at, rest, rest_at, lengths)


@dataclass(frozen=True, eq=False)
class SubsetStats:
    """The statistics of a subset (``index``, ascending) of a larger corpus."""

    parent: TermStats
    index: np.ndarray
    lengths: np.ndarray = field(init=False)
    _inverse: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        inverse = np.full(len(self.parent.lengths), -1, dtype=np.int64)
        inverse[self.index] = np.arange(len(self.index))
        object.__setattr__(self, "lengths", self.parent.lengths[self.index])
        object.__setattr__(self, "_inverse", inverse)

    def frequencies(self, query: Sequence[str]) -> Frequencies:
        doc, term, tf = self.parent.frequencies(query)
        mine = self._inverse[doc]
        keep = mine >= 0
        return mine[keep], term[keep], tf[keep]


@dataclass(frozen=True, eq=False)
class MemoStats:
    """Statistics that count each query term once: every term's (document,
    count) pairs are kept, so strategies sharing a tokenizer, and later prompts
    over the same documents, only count terms not seen before."""

    inner: TermStats
    _terms: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    @property
    def lengths(self) -> np.ndarray:
        return self.inner.lengths

    def frequencies(self, query: Sequence[str]) -> Frequencies:
        known = self._terms
        missing = [t for t in dict.fromkeys(query) if t not in known]
        if missing:
            doc, term, tf = self.inner.frequencies(missing)
            by_term = np.argsort(term, kind="stable")  # each term's documents stay sorted
            cut = np.searchsorted(term[by_term], np.arange(len(missing) + 1))
            for j, t in enumerate(missing):
                pick = by_term[cut[j] : cut[j + 1]]
                pair = (doc[pick], tf[pick])
                for a in pair:
                    a.flags.writeable = False
                known[t] = pair
        hits = [(j, known[t]) for j, t in enumerate(query) if len(known[t][0])]
        if not hits:
            return _EMPTY
        return _sorted(
            np.concatenate([d for _, (d, _) in hits]),
            np.concatenate([np.full(len(d), j, dtype=np.int64) for j, (d, _) in hits]),
            np.concatenate([f for _, (_, f) in hits]),
        )
