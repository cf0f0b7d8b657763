"""The vectorised corpus scan gives exactly what explicit term lists give."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from packproof.packer import termstats
from packproof.packer.termstats import ListStats, MemoStats, SliceStats, SubsetStats
from packproof.packer.text import LCM_TOKENIZER, Analyzer, Tokenizer

PIECES = [
    "a",
    "ab",
    "Abc",
    "x1",
    "1",
    "99",
    "you",
    "your",
    "thank-you",
    "don't",
    "snake_case",
    "v3.1",
    "数据库",
    "迁移",
    "😀",
    "naïve",
    "Café",
    "İstanbul",
    "ß",
    "K",
    " ",
    "  ",
    "\n",
    "\t",
    "-",
    "",
    "ǅ",
]

texts_st = st.lists(st.lists(st.sampled_from(PIECES), max_size=8).map("".join), max_size=12)
queries_st = st.lists(
    st.sampled_from(
        [
            "a",
            "ab",
            "abc",
            "x1",
            "99",
            "you",
            "your",
            "thank",
            "don",
            "t",
            "snake",
            "case",
            "v3",
            "数据",
            "据库",
            "naïve",
            "café",
            "na",
            "ve",
            "caf",
            "istanbul",
            "i̇stanbul",
            "ss",
            "ß",
            "k",
        ]
    ),
    max_size=5,
    unique=True,
)
TOKENIZERS: list[Tokenizer] = [Analyzer(), Analyzer(stopwords="english"), LCM_TOKENIZER]


def reference(tokenizer: Tokenizer, texts: list[str]) -> ListStats:
    return ListStats([tokenizer.terms(t) for t in texts])


def assert_same(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> None:
    for x, y in zip(a, b, strict=True):
        assert x.tolist() == y.tolist()


@given(texts=texts_st, query=queries_st)
def test_stats_equal_explicit_term_lists(texts: list[str], query: list[str]) -> None:
    for tokenizer in TOKENIZERS:
        fast = tokenizer.stats(texts)
        slow = reference(tokenizer, texts)
        assert fast.lengths.tolist() == slow.lengths.tolist(), tokenizer
        assert_same(fast.frequencies(query), slow.frequencies(query))


@given(texts=texts_st, query=queries_st, data=st.data())
def test_subset_stats_equal_stats_of_the_subset(
    texts: list[str], query: list[str], data: st.DataObject
) -> None:
    keep = sorted(data.draw(st.sets(st.integers(0, max(0, len(texts) - 1)))) if texts else [])
    index = np.array(keep, dtype=np.int64)
    for tokenizer in TOKENIZERS:
        sub = SubsetStats(tokenizer.stats(texts), index)
        direct = reference(tokenizer, [texts[i] for i in keep])
        assert sub.lengths.tolist() == direct.lengths.tolist()
        assert_same(sub.frequencies(query), direct.frequencies(query))


@given(texts=texts_st, queries=st.lists(queries_st, min_size=1, max_size=4))
def test_memo_stats_count_each_term_once_and_answer_alike(
    texts: list[str], queries: list[list[str]]
) -> None:
    for tokenizer in TOKENIZERS:
        memo = MemoStats(tokenizer.stats(texts))
        slow = reference(tokenizer, texts)
        for query in queries:  # later queries reuse earlier terms' counts
            got = memo.frequencies(query)
            assert_same(got, slow.frequencies(query))
        assert set(memo._terms) == {t for q in queries for t in q}


# Terms no tokenizer makes but a caller may ask for: the scan matches them across
# word boundaries, so the index must leave them to the scan.
ODD_TERMS = ["snake_case", "thank-you", "v3.1", "don't", "Abc", "", " ", "a b"]


@given(
    texts=texts_st,
    queries=st.lists(queries_st, min_size=1, max_size=4),
    odd=st.lists(st.sampled_from(ODD_TERMS), max_size=3, unique=True),
    after=st.integers(0, 6),
)
def test_indexed_memo_stats_answer_as_the_scan(
    texts: list[str], queries: list[list[str]], odd: list[str], after: int
) -> None:
    """Once indexed (after ``after`` terms), a memo answers every query as the
    scan would: tokenizer terms as term lists count them, other terms as scanned."""
    with mock.patch.object(termstats, "INDEX_AFTER", after):
        for tokenizer in TOKENIZERS:
            memo = MemoStats(tokenizer.stats(texts))
            scan = tokenizer.stats(texts)
            slow = reference(tokenizer, texts)
            for query in queries:
                assert_same(memo.frequencies(query), slow.frequencies(query))
                mixed = [*query, *(t for t in odd if t not in query)]
                assert_same(memo.frequencies(mixed), scan.frequencies(mixed))
            # indexed once more than ``after`` terms were asked
            assert bool(memo._index) == (len(memo._terms) > after), tokenizer


@given(texts=texts_st, query=queries_st, data=st.data(), index=st.booleans())
def test_slice_stats_equal_stats_of_the_window(
    texts: list[str], query: list[str], data: st.DataObject, index: bool
) -> None:
    n = len(texts)
    start = data.draw(st.integers(0, n))
    stop = data.draw(st.integers(start, n))
    inner_start = data.draw(st.integers(0, stop - start))
    inner_stop = data.draw(st.integers(inner_start, stop - start))
    with mock.patch.object(termstats, "INDEX_AFTER", 0 if index else 10**9):
        for tokenizer in TOKENIZERS:
            memo = MemoStats(tokenizer.stats(texts))
            window = SliceStats.of(memo, start, stop)
            direct = reference(tokenizer, texts[start:stop])
            assert window.lengths.tolist() == direct.lengths.tolist()
            assert_same(window.frequencies(query), direct.frequencies(query))
            # a window of a window reads the same memo
            nested = SliceStats.of(window, inner_start, inner_stop)
            assert isinstance(nested, SliceStats) and nested.parent is memo
            direct = reference(tokenizer, texts[start + inner_start : start + inner_stop])
            assert nested.lengths.tolist() == direct.lengths.tolist()
            assert_same(nested.frequencies(query), direct.frequencies(query))
            # a window of anything else is a subset
            plain = SliceStats.of(tokenizer.stats(texts), start, stop)
            assert_same(plain.frequencies(query), window.frequencies(query))
