"""Okapi BM25 with Lucene's idf over the candidate set."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..termstats import TermStats, per_document_order
from ..text import Analyzer
from .base import NO_SEARCHABLE_TERMS, Ranking, ScoringView, StrategyBase, param, register
from .bm25lite import distinct

__all__ = ["BM25", "Bm25Params", "bm25_scores", "lucene_idf"]


def lucene_idf(df: int, n_docs: int) -> float:
    """Lucene's BM25 idf, always positive: ``ln(1 + (N - df + 0.5) / (df + 0.5))``."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def bm25_scores(stats: TermStats, query: Sequence[str], k1: float, b: float) -> np.ndarray:
    """BM25 of every document for the DISTINCT ``query`` terms (Lucene variant, as
    ``bm25s`` ``method="lucene"``; Kamphuis et al., ECIR 2020):

        score(d) = sum_t idf(t) * tf(t,d) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))

    with idf from :func:`lucene_idf` and N, df, avgdl over the documents of ``stats``.
    """
    lengths = stats.lengths
    n_docs = len(lengths)
    scores = np.zeros(n_docs, dtype=np.float64)
    if not n_docs or not query:
        return scores
    doc, term, tf = per_document_order(stats, query)
    if not len(doc):
        return scores
    avgdl = float(lengths.mean())
    df = np.bincount(term, minlength=len(query))
    idf = np.array([lucene_idf(int(d), n_docs) for d in df])
    norm = k1 * (1.0 - b + b * lengths[doc] / avgdl)
    # Each document's pairs come in query order (np.add.at adds in array order):
    # each score is summed in query order, as a loop over the query terms would.
    np.add.at(scores, doc, idf[term] * tf / (tf + norm))
    return scores


@dataclass(frozen=True)
class Bm25Params:
    """Parameters shared by every strategy that scores with BM25."""

    k1: float = param(1.2, "term-frequency saturation (Lucene default 1.2)", minimum=0)
    b: float = param(0.75, "length normalisation, 0 = none, 1 = full", minimum=0)
    stopwords: str = param("none", "drop Lucene's English stopwords", choices=("none", "english"))
    stem: str = param(
        "none", "Snowball stemming (needs the stem extra)", choices=("none", "english")
    )

    def __post_init__(self) -> None:
        self.analyzer()  # stem="english" without the stem extra: one line, exit 2

    def analyzer(self) -> Analyzer:
        return Analyzer(stopwords=self.stopwords, stem=self.stem)  # type: ignore[arg-type]

    def relevance(self, view: ScoringView) -> tuple[np.ndarray, tuple[str, ...]]:
        """BM25 scores of the candidates and the distinct analysed prompt terms."""
        analyzer = self.analyzer()
        query = distinct(analyzer.terms(view.prompt or ""))
        if not query:
            return np.zeros(len(view.items), dtype=np.float64), ()
        return bm25_scores(view.items.term_stats(analyzer), query, self.k1, self.b), tuple(query)


@register
@dataclass(frozen=True)
class BM25(StrategyBase, Bm25Params):
    """Okapi BM25 relevance to the prompt with the Lucene idf computed over the
    evictable candidates; the Unicode tokenizer of :mod:`packproof.packer.text`; the same
    greedy skip-not-stop fill and chronological fallback as ``bm25lite``."""

    name: ClassVar[str] = "bm25"
    formula: ClassVar[str] = "sum_t ln(1+(N-df+.5)/(df+.5)) * tf / (tf + k1*(1-b+b*|d|/avgdl))"

    def rank(self, view: ScoringView) -> Ranking:
        scores, terms = self.relevance(view)
        if not terms:
            return Ranking(scores=None, fallback=NO_SEARCHABLE_TERMS)
        return Ranking(scores=scores, components={"bm25": scores}, terms=terms)
