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

:class:`MemoStats` keeps every term's counts; once it has counted a few dozen
terms, it indexes the corpus (:mod:`packproof.packer.termindex`) and looks further
terms up. :class:`SliceStats` is a window of a memoised corpus (a replay step's
prefix of its conversation): it reads the window's part of each term's counts,
without copying the corpus or its counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Final, Protocol

import numpy as np

from .termindex import TermIndex

__all__ = [
    "INDEX_AFTER",
    "ListStats",
    "MemoStats",
    "ScanStats",
    "SliceStats",
    "SubsetStats",
    "TermStats",
    "per_document_order",
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

    def occurrences(self) -> tuple[Iterable[str], np.ndarray]:
        """Every term occurrence, and the document of each."""
        owners = np.repeat(np.arange(len(self.terms)), self.lengths)
        return chain.from_iterable(self.terms), owners


# A query term the index of scanned text answers: a whole word run. (The scan
# also matches other ASCII terms, across word boundaries; those are scanned.)
_RUN: Final = re.compile(r"[a-z0-9]+")

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

    def occurrences(self) -> tuple[Iterable[str], np.ndarray]:
        """Every term occurrence (the maximal runs counted in ``lengths``, in text
        order), and the document of each."""
        runs = re.findall(f"[a-z0-9]{{{max(1, self.min_len)},}}", self._data.decode("ascii"))
        return runs, np.repeat(np.arange(len(self.texts)), self.lengths)


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

    def occurrences(self) -> tuple[Iterable[str], np.ndarray]:
        a_terms, a_doc = self.scan.occurrences()
        b_terms, b_doc = self.rest.occurrences()
        return chain(a_terms, b_terms), np.concatenate((self.scan_at[a_doc], self.rest_at[b_doc]))


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


def per_document_order(stats: TermStats, query: Sequence[str]) -> Frequencies:
    """The pairs of ``stats.frequencies(query)``, in an order where each
    document's pairs come in query order (all a per-document sum in query order
    needs, as ``np.add.at`` makes it): a memoised corpus's term by term, which
    spares the sort by document."""
    if isinstance(stats, (MemoStats, SliceStats)):
        return stats.by_term(query)
    return stats.frequencies(query)


# Terms a corpus has counted by scanning before it is indexed: a one-off prompt
# scans (cheaper than a tokenization pass), a table asked again and again indexes.
INDEX_AFTER: Final = 32


def _indexable(stats: TermStats) -> tuple[TermIndex, Callable[[str], bool]] | None:
    """An index of ``stats``'s corpus and which query terms it answers exactly
    (None: not indexable). Term lists answer every term; scanned text, word runs."""
    if isinstance(stats, ListStats):
        terms, owners = stats.occurrences()
        return TermIndex.build(terms, owners, len(stats.lengths)), lambda term: True
    if isinstance(stats, (ScanStats, _Merged)):
        terms, owners = stats.occurrences()
        index = TermIndex.build(terms, owners, len(stats.lengths))
        return index, lambda term: _RUN.fullmatch(term) is not None
    return None


@dataclass(frozen=True, eq=False)
class MemoStats:
    """Statistics that count each query term once: every term's (document,
    count) pairs are kept, so strategies sharing a tokenizer, and later prompts
    over the same documents, only count terms not seen before. Past
    :data:`INDEX_AFTER` terms the corpus is indexed and new terms looked up.
    ``frequencies`` can answer for a window of the documents (:class:`SliceStats`)."""

    inner: TermStats
    _terms: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)
    # [] until decided; then [index and what it answers] or [None] (not indexable)
    _index: list[tuple[TermIndex, Callable[[str], bool]] | None] = field(
        default_factory=list, repr=False
    )

    @property
    def lengths(self) -> np.ndarray:
        return self.inner.lengths

    def _learn(self, query: Sequence[str]) -> None:
        known = self._terms
        missing = [t for t in dict.fromkeys(query) if t not in known]
        if not missing:
            return
        if not self._index and len(known) + len(missing) > INDEX_AFTER:
            self._index.append(_indexable(self.inner))
        if self._index and self._index[0] is not None:
            index, answers = self._index[0]
            for t in missing:
                if answers(t):
                    known[t] = index.postings(t)
            missing = [t for t in missing if t not in known]
            if not missing:
                return
        doc, term, tf = self.inner.frequencies(missing)
        by_term = np.argsort(term, kind="stable")  # each term's documents stay sorted
        cut = np.searchsorted(term[by_term], np.arange(len(missing) + 1))
        for j, t in enumerate(missing):
            pick = by_term[cut[j] : cut[j + 1]]
            pair = (doc[pick], tf[pick])
            for a in pair:
                a.flags.writeable = False
            known[t] = pair

    def frequencies(
        self, query: Sequence[str], start: int = 0, stop: int | None = None
    ) -> Frequencies:
        """As :meth:`TermStats.frequencies`; with ``start``/``stop``, for the
        documents ``start`` to ``stop`` (exclusive) alone, numbered from ``start``."""
        doc, term, tf = self.by_term(query, start, stop)
        # (document, query position) pairs are unique and each term's documents
        # ascend: a stable sort by document gives the (document, term) order
        order = np.argsort(doc, kind="stable")
        return doc[order], term[order], tf[order]

    def by_term(self, query: Sequence[str], start: int = 0, stop: int | None = None) -> Frequencies:
        """:meth:`frequencies`' pairs sorted by query position, then document."""
        self._learn(query)
        known = self._terms
        windowed = start > 0 or stop is not None
        docs, counts, sizes = [], [], []
        for t in query:
            d, f = known[t]
            if windowed and len(d):
                lo = int(d.searchsorted(start)) if start > 0 else 0
                hi = len(d) if stop is None else int(d.searchsorted(stop))
                d, f = d[lo:hi], f[lo:hi]
            docs.append(d)
            counts.append(f)
            sizes.append(len(d))
        if not any(sizes):
            return _EMPTY
        doc = np.concatenate(docs)
        if start > 0:
            doc -= start
        term = np.repeat(np.arange(len(query), dtype=np.int64), sizes)
        return doc, term, np.concatenate(counts)


@dataclass(frozen=True, eq=False)
class SliceStats:
    """The statistics of the documents ``start`` to ``stop`` (exclusive) of a
    memoised corpus, read from its counts: no copy, no per-document work."""

    parent: MemoStats
    start: int
    stop: int
    lengths: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "lengths", self.parent.lengths[self.start : self.stop])

    def frequencies(self, query: Sequence[str]) -> Frequencies:
        return self.parent.frequencies(query, self.start, self.stop)

    def by_term(self, query: Sequence[str]) -> Frequencies:
        return self.parent.by_term(query, self.start, self.stop)

    @staticmethod
    def of(stats: TermStats, start: int, stop: int) -> TermStats:
        """The window ``start`` to ``stop`` of ``stats``'s documents."""
        if isinstance(stats, SliceStats):
            return SliceStats(stats.parent, stats.start + start, stats.start + stop)
        if isinstance(stats, MemoStats):
            return SliceStats(stats, start, stop)
        return SubsetStats(stats, np.arange(start, stop))
