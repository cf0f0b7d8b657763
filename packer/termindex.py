"""An inverted index of a corpus: each term's documents and counts, built from
one tokenization pass.

:class:`~packproof.packer.termstats.ScanStats` counts a new query term with a regex
scan of the whole corpus text, which is the cheapest way to answer one prompt over
a large table. A table that answers many prompts (a replay's conversation, asked
by every step's new message) pays that scan for every term it has not seen; past a
few dozen terms, tokenizing the corpus once and looking each term up is cheaper.
:class:`~packproof.packer.termstats.MemoStats` switches to this index then, and a
property test holds both answers equal.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

__all__ = ["TermIndex"]


@dataclass(frozen=True, eq=False)
class TermIndex:
    """Postings of every term: ``docs[offsets[k]:offsets[k + 1]]`` are the
    documents (ascending) holding term ``k`` of ``vocabulary`` and ``counts`` the
    matching term frequencies (float64, as every ``TermStats`` gives them)."""

    vocabulary: dict[str, int]
    offsets: np.ndarray
    docs: np.ndarray
    counts: np.ndarray

    @classmethod
    def build(cls, terms: Iterable[str], owners: np.ndarray, n_docs: int) -> TermIndex:
        """The index of the term occurrences ``terms`` (in any order), each in the
        document ``owners`` gives at the same position."""
        vocabulary: dict[str, int] = {}
        code = np.fromiter(
            (vocabulary.setdefault(t, len(vocabulary)) for t in terms),
            dtype=np.int64,
            count=len(owners),
        )
        # one key per (term, document): sorted by term, then document
        pairs, counts = np.unique(code * max(1, n_docs) + owners, return_counts=True)
        term = pairs // max(1, n_docs)
        offsets = np.searchsorted(term, np.arange(len(vocabulary) + 1))
        docs = pairs - term * max(1, n_docs)
        tf = counts.astype(np.float64)
        for a in (offsets, docs, tf):
            a.flags.writeable = False
        return cls(vocabulary, offsets, docs, tf)

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """The documents holding ``term`` (ascending) and its count in each."""
        k = self.vocabulary.get(term)
        if k is None:
            return self.docs[:0], self.counts[:0]
        lo, hi = int(self.offsets[k]), int(self.offsets[k + 1])
        return self.docs[lo:hi], self.counts[lo:hi]
