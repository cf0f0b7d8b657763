"""bm25: Okapi BM25 with the Lucene idf, by hand and against bm25s."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from packproof.packer.strategies.bm25 import bm25_scores, lucene_idf
from packproof.packer.termstats import ListStats
from packproof.packer.text import Analyzer
from tests.paths import ROOT

from ..helpers import msg, run

LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev.json"


def test_lucene_idf_by_hand() -> None:
    assert lucene_idf(1, 3) == pytest.approx(math.log(1 + 2.5 / 1.5))
    assert lucene_idf(3, 3) == pytest.approx(math.log(1 + 0.5 / 3.5))
    assert lucene_idf(3, 3) > 0  # never negative, unlike Robertson's idf


def test_bm25_scores_by_hand() -> None:
    docs = [["cat", "sat"], ["cat", "cat", "dog", "ran"], ["bird"]]
    k1, b = 1.2, 0.75
    got = bm25_scores(ListStats(docs), ["cat"], k1, b)
    avgdl = 7 / 3
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    d0 = idf * 1 / (1 + k1 * (1 - b + b * 2 / avgdl))
    d1 = idf * 2 / (2 + k1 * (1 - b + b * 4 / avgdl))
    assert got.tolist() == pytest.approx([d0, d1, 0.0], abs=1e-12)


def test_idf_matters_where_bm25lite_cannot_tell() -> None:
    # "the" is in every item; "kafka" in one. bm25lite scores both prompt terms
    # alike, so the short "the the" item wins; bm25's idf ranks the kafka item first.
    items = [
        msg("kafka", "the kafka consumer lag alert fired again", tokens=8, ordinal=0),
        msg("noise", "the the", tokens=8, ordinal=1),
        msg("other", "the weather is fine", tokens=8, ordinal=2),
        msg("tail", "ok", tokens=1, ordinal=3),
    ]
    prompt = "the kafka"
    assert run(items, 9, "bm25lite", prompt=prompt).selected_ids == ["noise", "tail"]
    assert run(items, 9, "bm25", prompt=prompt).selected_ids == ["kafka", "tail"]


def test_chinese_prompt_is_searchable() -> None:
    items = [
        msg("auth", "用户认证失败，请检查令牌", tokens=5, ordinal=0),
        msg("other", "今天天气很好", tokens=5, ordinal=1),
    ]
    result = run(items, 5, "bm25", prompt="认证失败")
    assert result.mode == "ranked"
    assert result.selected_ids == ["auth"]
    assert run(items, 5, "bm25lite", prompt="认证失败").mode == "chronological"


def real_text_corpus() -> list[str]:
    """Real conversation text: LoCoMo when present, else this repository's docs."""
    if LOCOMO.exists():
        data = json.loads(LOCOMO.read_text("utf-8"))
        conv = data[0]["conversation"]
        return [
            turn["text"]
            for key, session in conv.items()
            if key.startswith("session_") and isinstance(session, list)
            for turn in session
        ]
    return [
        line
        for p in sorted(ROOT.glob("**/*.md"))
        if ".venv" not in p.parts
        for line in p.read_text("utf-8").splitlines()
        if line.strip()
    ]


@pytest.mark.parametrize(("k1", "b"), [(1.2, 0.75), (1.5, 0.75), (0.9, 0.4), (2.0, 1.0)])
def test_scores_equal_bm25s_lucene_on_real_text(k1: float, b: float) -> None:
    bm25s = pytest.importorskip("bm25s")
    texts = real_text_corpus()
    assert len(texts) > 50
    analyzer = Analyzer()
    docs = analyzer.terms_many(texts)
    keep = [i for i, d in enumerate(docs) if d]  # bm25s drops empty documents' lengths oddly
    docs = [docs[i] for i in keep]
    kept_texts = [texts[i] for i in keep]
    retriever = bm25s.BM25(method="lucene", k1=k1, b=b, dtype="float64")
    retriever.index(docs, show_progress=False)
    queries = [docs[7][:3], docs[20][:5], ["caroline", "support", "group"], docs[3]]
    for query in queries:
        query = list(dict.fromkeys(query))
        known = [t for t in query if t in retriever.vocab_dict]
        if not known:
            continue
        expected = retriever.get_scores(known)
        got = bm25_scores(analyzer.stats(kept_texts), known, k1, b)
        np.testing.assert_allclose(
            bm25_scores(ListStats(docs), known, k1, b), expected, atol=1e-6, rtol=0
        )
        np.testing.assert_allclose(got, expected, atol=1e-6, rtol=0)
