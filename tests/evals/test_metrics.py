"""Metrics: hand-computed values, and nDCG/MRR cross-checked against ir-measures."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxpack.evals.metrics.cell import (
    cell_metrics,
    mrr,
    ndcg_at,
    oracle_recall,
    pack_ranking,
)
from ctxpack.evals.metrics.stability import kept_prefix, prefix_stability
from ctxpack.packer import pack


def test_ndcg_and_mrr_by_hand() -> None:
    ranking = ["a", "b", "c", "d"]
    assert ndcg_at(ranking, ["b", "d"], 10) == pytest.approx(
        (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    )
    assert ndcg_at(ranking, ["a"], 10) == 1.0
    assert ndcg_at(ranking, ["z"], 10) == 0.0
    assert ndcg_at(ranking, [], 10) is None
    assert ndcg_at(ranking, ["d"], 3) == 0.0  # beyond the cut-off
    assert mrr(ranking, ["c", "d"]) == pytest.approx(1 / 3)
    assert mrr(ranking, ["z"]) == 0.0 and mrr(ranking, []) is None


@given(n=st.integers(1, 25), data=st.data())
def test_ndcg_and_mrr_equal_ir_measures(n: int, data: st.DataObject) -> None:
    ir = pytest.importorskip("ir_measures")
    ranking = [f"d{i}" for i in data.draw(st.permutations(range(n)))]
    relevant = data.draw(st.lists(st.sampled_from([*ranking, "unranked"]), min_size=1, unique=True))
    qrels = [ir.Qrel("q", doc, 1) for doc in relevant]
    # distinct descending scores encode our order, so trec_eval's own sort (by
    # score, ties by doc id) cannot reorder it
    run = [ir.ScoredDoc("q", doc, float(n - i)) for i, doc in enumerate(ranking)]
    got = {str(m.measure): m.value for m in ir.iter_calc([ir.nDCG @ 10, ir.RR], qrels, run)}
    assert ndcg_at(ranking, relevant, 10) == pytest.approx(got["nDCG@10"], abs=1e-9)
    assert mrr(ranking, relevant) == pytest.approx(got["RR"], abs=1e-9)


def test_prefix_stability() -> None:
    assert prefix_stability([], ["a"]) == 1.0
    assert prefix_stability(["a", "b", "c", "d"], ["a", "b", "x", "d", "e"]) == 0.5
    assert prefix_stability(["a", "b"], ["a", "b", "c"]) == 1.0
    assert prefix_stability(["a", "b"], ["b"]) == 0.0


def _items(*spec: tuple[str, int]) -> list[dict[str, object]]:
    return [
        {"id": i, "text": t, "tokens": k, "ordinal": n}
        for n, (i, k, t) in enumerate((s[0], s[1], f"text {s[0]}") for s in spec)
    ]


def test_pack_ranking_puts_kept_items_first_then_the_strategy_order() -> None:
    items = _items(("a", 1), ("b", 1), ("c", 1), ("d", 1))
    items[0]["anchored"] = True
    items[2]["text"] = "alpha"
    result = pack(
        {
            "items": items,
            "budget_tokens": 10,
            "prompt": "alpha",
            "strategy": "bm25",
            "fresh_tail": {"count": 1},
        }
    )
    # d is the tail, a anchored (newest first among kept), then c (the match), then b
    assert pack_ranking(result) == ["d", "a", "c", "b"]


def test_oracle_takes_the_cheapest_gold_items() -> None:
    items = _items(("g1", 6), ("g2", 3), ("g3", 3), ("x", 1))
    result = pack({"items": items, "budget_tokens": 7, "strategy": "chronological"})
    # chronological keeps x, g3, g2 (7 tokens): recall 2/3; best possible: g2 + g3 = 6 -> 2/3
    assert oracle_recall(result, ["g1", "g2", "g3"]) == pytest.approx(2 / 3)
    result = pack({"items": items, "budget_tokens": 6, "strategy": "chronological"})
    assert oracle_recall(result, ["g1", "g2", "g3"]) == pytest.approx(2 / 3)
    assert oracle_recall(result, ["g1"]) == 1.0
    assert oracle_recall(result, []) is None


def test_cell_metrics_by_hand() -> None:
    items = _items(("e", 5), ("n1", 3), ("n2", 3), ("q", 2))
    items[0]["text"] = "the deploy key rotates weekly"
    items[3]["role"] = "user"
    result = pack(
        {
            "items": items,
            "budget_tokens": 8,
            "prompt": "deploy key",
            "fresh_tail": {"count": 1},
            "strategy": "chronological",
        }
    )
    m = cell_metrics(result, ["e"], [], [{"must_include": ["q"], "must_exclude": ["n2"]}])
    assert result.selected_ids == ["n1", "n2", "q"]
    assert m["evidence_recall"] == 0.0 and m["evidence_hit"] == 0.0
    assert m["oracle_recall"] == 1.0 and m["regret"] == 1.0
    assert m["mrr"] == pytest.approx(1 / 4)  # ranking q, n2, n1, e
    assert m["must_include_recall"] == 1.0 and m["must_exclude_violations"] == 1
    assert m["expectation_pass"] == 1.0
    assert m["tokens_used"] == 8 and m["budget_utilisation"] == 1.0
    assert m["tail_retention"] == 1.0 and m["anchor_retention"] is None
    assert m["citation_coverage"] == 1.0 and m["selected_count"] == 3
    assert all(
        m[k] == 0
        for k in (
            "budget_violations",
            "citations_missing",
            "quarantined_included",
            "tail_lost",
            "anchors_lost",
        )
    )


def test_kept_prefix_counts_items_and_tokens() -> None:
    before = [("a", 10), ("b", 20), ("c", 30)]
    assert kept_prefix(before, [("a", 10), ("b", 20), ("x", 5)]) == (2, 30)
    assert kept_prefix(before, [*before, ("d", 1)]) == (3, 60)
    assert kept_prefix(before, [("b", 20)]) == (0, 0)
    assert kept_prefix([], [("a", 10)]) == (0, 0)
