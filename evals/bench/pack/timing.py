"""The packer benchmark's timings: ``packer.pack`` and its render per strategy,
the bare tokenization pass and bm25s, each the best of its repeats, gathered per
corpus size with the ratios between them, and the growth between sizes."""

from __future__ import annotations

import functools
import itertools
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TypeVar

import numpy as np

import packproof.packer as packer
from packproof.evals.bench.common import log_pack as log
from packproof.evals.bench.common import timed
from packproof.evals.bench.pack.corpus import WORD, Corpus, build_items, build_request

__all__ = [
    "Bm25sTiming",
    "StrategyTiming",
    "best_of",
    "growth",
    "measure_size",
    "ratio",
    "time_bm25s",
    "time_strategy",
    "time_tokenize",
]

T = TypeVar("T")


def best_of(repeats: int, fn: Callable[[], T]) -> tuple[float, T]:
    """The fastest of ``repeats`` calls and the last result."""
    best = math.inf
    result: T | None = None
    for _ in range(repeats):
        result = None  # drop the previous result before the next run
        seconds, result = timed(fn)
        best = min(best, seconds)
    assert result is not None
    return best, result


def time_tokenize(texts: list[str], repeats: int) -> float:
    """The floor: lowercase and split every text once, keeping the term lists
    (a scorer needs them, and building them is much of the cost)."""
    return best_of(repeats, lambda: [WORD.findall(t.lower()) for t in texts])[0]


@dataclass(frozen=True)
class Bm25sTiming:
    tokenize: float
    index_query: float


def _bm25s_index_query(bm25s: Any, tokens: Any, prompt: str, n_docs: int) -> np.ndarray:
    retriever = bm25s.BM25(method="lucene")  # the idf the packer's bm25 uses
    retriever.index(tokens, show_progress=False)
    query = bm25s.tokenize([prompt], stopwords=None, show_progress=False, return_ids=False)[0]
    known = [t for t in query if t in retriever.vocab_dict]
    # get_scores fails on an empty query; no known term means every score is 0.
    scores: np.ndarray = retriever.get_scores(known) if known else np.zeros(n_docs)
    return scores


def time_bm25s(bm25s: Any, texts: list[str], prompt: str, repeats: int) -> Bm25sTiming:
    """Best-of-``repeats`` of bm25s's tokenize pass and, apart, of index + one query."""
    best_tok = best_iq = math.inf
    for _ in range(repeats):
        # Two clocks in one repeat: the index needs this repeat's tokens.
        tok_s, tokens = timed(
            functools.partial(bm25s.tokenize, texts, stopwords=None, show_progress=False)
        )
        iq_s, _ = timed(functools.partial(_bm25s_index_query, bm25s, tokens, prompt, len(texts)))
        best_tok, best_iq = min(best_tok, tok_s), min(best_iq, iq_s)
    return Bm25sTiming(best_tok, best_iq)


@dataclass(frozen=True)
class StrategyTiming:
    pack: float  # median over prompts of best-of-repeats
    pack_per_prompt: list[float]
    render: float  # best-of-repeats, first prompt's result
    mode: str  # the first prompt's pack mode
    selected: int


def time_strategy(
    name: str, items: list[dict[str, Any]], prompts: list[str], repeats: int
) -> StrategyTiming:
    """Pack time per prompt and the render time of the first prompt's pack (render
    hardly depends on the prompt and is the slowest step, so it is timed once)."""
    per_prompt: list[float] = []
    render = math.nan
    mode, selected = "", 0
    for index, prompt in enumerate(prompts):
        # A fresh parse per call: the packer caches terms on the parsed items only.
        request = build_request(items, prompt, name)  # outside the clock
        seconds, result = best_of(repeats, functools.partial(packer.pack, request))
        per_prompt.append(seconds)
        if index == 0:
            render = best_of(repeats, result.to_json)[0]
            mode, selected = result.mode, len(result.selected_ids)
        del result
    return StrategyTiming(statistics.median(per_prompt), per_prompt, render, mode, selected)


def ratio(a: float | None, b: float | None) -> float | None:
    # A zero denominator only happens on timer granularity at tiny sizes.
    return None if a is None or b is None or b <= 0 else a / b


def measure_size(
    corpus: Corpus,
    prompts: list[str],
    strategies: list[str],
    repeats: int,
    bm25s: ModuleType | None,
) -> dict[str, Any]:
    """Every timing at one corpus size, with the ratios between them."""
    n = len(corpus)
    texts = corpus.texts
    # One item list for every request at this size, as one caller's history would be.
    items = build_items(corpus)
    tokenize = time_tokenize(texts, repeats)
    log(f"{n} items: tokenize {tokenize:.4f} s")
    bm = None if bm25s is None else time_bm25s(bm25s, texts, prompts[0], repeats)
    if bm is not None:
        log(f"{n} items: bm25s tokenize {bm.tokenize:.4f} s, index+query {bm.index_query:.4f} s")
    per_strategy: dict[str, Any] = {}
    for name in strategies:
        st = time_strategy(name, items, prompts, repeats)
        log(f"{n} items: {name} pack {st.pack:.4f} s, render {st.render:.4f} s")
        per_strategy[name] = {
            "pack": st.pack,
            "pack_per_prompt": st.pack_per_prompt,
            "render": st.render,
            "mode": st.mode,
            "selected": st.selected,
            "pack_over_tokenize": ratio(st.pack, tokenize),
            "pack_over_bm25s": ratio(st.pack, None if bm is None else bm.index_query),
        }
    return {
        "size": n,
        "chars": sum(map(len, texts)),
        "tokenize": tokenize,
        "bm25s_tokenize": None if bm is None else bm.tokenize,
        "bm25s": None if bm is None else bm.index_query,
        "strategies": per_strategy,
    }


def growth(results: list[dict[str, Any]], strategies: list[str]) -> dict[str, dict[str, float]]:
    """Pack time ratio between each pair of consecutive sizes, per strategy."""
    out: dict[str, dict[str, float]] = {name: {} for name in strategies}
    for small, large in itertools.pairwise(results):
        for name in strategies:
            key = f"{small['size']}->{large['size']}"
            r = ratio(large["strategies"][name]["pack"], small["strategies"][name]["pack"])
            if r is not None:
                out[name][key] = r
    return out
