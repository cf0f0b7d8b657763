"""Tokenizers: lossless-claw's ASCII tokenizer and the Unicode analyzer."""

from __future__ import annotations

import pytest

from packproof.packer.text import ENGLISH_STOPWORDS, LCM_TOKENIZER, Analyzer, lcm_terms


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("auth2 login-flow v3.1", ["auth2", "login", "flow", "v3"]),  # REFERENCE.md example
        ("", []),
        ("a b c", []),  # single characters are dropped
        ("Hello HELLO hello", ["hello", "hello", "hello"]),
        ("café naïve", ["caf", "na", "ve"]),  # accented letters act as separators
        ("数据库 migration", ["migration"]),  # CJK is not searchable
        ("snake_case x_y", ["snake", "case"]),
    ],
)
def test_lcm_terms(text: str, terms: list[str]) -> None:
    assert lcm_terms(text) == terms
    assert LCM_TOKENIZER.terms(text) == terms


def test_analyzer_keeps_words_of_every_script_whole() -> None:
    a = Analyzer()
    assert a.terms("Café naïve Привет हिन्दी 안녕하세요") == [
        "café",
        "naïve",
        "привет",
        "हिन्दी",
        "안녕하세요",
    ]
    assert a.terms("v3.1 snake_case") == ["v3", "1", "snake", "case"]


def test_analyzer_splits_cjk_runs_into_bigrams() -> None:
    a = Analyzer()
    assert a.terms("用户认证失败") == ["用户", "户认", "认证", "证失", "失败"]
    assert a.terms("我") == ["我"]  # a lone character stays a unigram
    assert a.terms("iPhone手机") == ["iphone", "手机"]
    assert a.terms("データベース") == ["デー", "ータ", "タベ", "ベー", "ース"]


def test_chinese_prompt_finds_chinese_item() -> None:
    a = Analyzer()
    assert set(a.terms("认证")) <= set(a.terms("用户认证失败了"))


def test_stopwords_are_lucene_english_set() -> None:
    assert len(ENGLISH_STOPWORDS) == 33
    a = Analyzer(stopwords="english")
    assert a.terms("the cat is on the mat") == ["cat", "mat"]


def test_english_stemming() -> None:
    pytest.importorskip("Stemmer")
    a = Analyzer(stem="english")
    assert a.terms("running runs ran") == ["run", "run", "ran"]


def test_terms_many_equals_terms() -> None:
    texts = ["Hello world", "数据库迁移", "naïve café", "", "the THE"]
    for analyzer in (Analyzer(), Analyzer(stopwords="english")):
        assert analyzer.terms_many(texts) == [analyzer.terms(t) for t in texts]
