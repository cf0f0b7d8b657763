"""Metrics: hand-computed values, and nDCG/MRR cross-checked against ir-measures
on packs (the evictable candidates ranked, the always-kept and trust-excluded
gold left out)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packproof.evals.metrics.cell import (
    cell_metrics,
    mrr,
    ndcg_at,
    oracle_recall,
    pack_ranking,
    ranked_relevant,
)
from packproof.evals.metrics.stability import kept_prefix, prefix_stability
from packproof.packer import pack
from packproof.packer.render import render


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
def test_ndcg_and_mrr_equal_ir_measures_on_rankings(n: int, data: st.DataObject) -> None:
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


ALWAYS_DECIDED = {"protected_tail", "anchored", "trust_quarantined_excluded"}


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 20), data=st.data())
def test_cell_ndcg_and_mrr_equal_ir_measures_over_the_evictable_candidates(
    n: int, data: st.DataObject
) -> None:
    """A cell's nDCG@10 and MRR are ir-measures' over a run of the trace's ranked
    candidates (in the trace's rank order), with qrels the gold items whose
    decision the strategy made: neither kept (tail, anchor) nor trust-excluded."""
    ir = pytest.importorskip("ir_measures")
    words = ["alpha", "beta", "gamma"]  # few words: tied scores test the tie-break
    items = [
        {
            "id": f"m{i}",
            "text": " ".join(data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=3))),
            "tokens": data.draw(st.integers(1, 5)),
            "ordinal": i,
            "anchored": data.draw(st.booleans()),
            "trust": data.draw(st.sampled_from(["unknown", "quarantined"])),
        }
        for i in range(n)
    ]
    result = pack(
        {
            "items": items,
            "budget_tokens": data.draw(st.integers(1, 40)),
            "prompt": "alpha gamma",
            "strategy": data.draw(st.sampled_from(["chronological", "bm25", "hybrid"])),
            "fresh_tail": {"count": data.draw(st.integers(0, 3))},
            "trust_policy": data.draw(st.sampled_from(["off", "exclude_quarantined"])),
        }
    )
    gold = data.draw(st.lists(st.sampled_from([it["id"] for it in items]), min_size=1, unique=True))
    m = cell_metrics(result, gold, None)
    candidates = render(result)["trace"]["candidates"]
    ranked = sorted((c["rank"], c["id"]) for c in candidates if c["rank"] is not None)
    run = [ir.ScoredDoc("q", ref, float(len(ranked) - r)) for r, ref in ranked]
    judged = [
        c["id"]
        for c in candidates
        if c["id"] in gold and not ALWAYS_DECIDED & set(c["decision"]["reason"])
    ]
    assert pack_ranking(result) == [ref for _, ref in ranked]
    assert sorted(ranked_relevant(result, gold)) == sorted(judged)
    if not judged:  # no gold left for the ranking to place: undefined, not 0
        assert m["ndcg@10"] is None and m["mrr"] is None
        return
    qrels = [ir.Qrel("q", ref, 1) for ref in judged]
    got = {str(x.measure): x.value for x in ir.iter_calc([ir.nDCG @ 10, ir.RR], qrels, run)}
    assert m["ndcg@10"] == pytest.approx(got["nDCG@10"], abs=1e-9)
    assert m["mrr"] == pytest.approx(got["RR"], abs=1e-9)
    assert m["mrr"] > 0  # every judged gold item is ranked


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


def test_pack_ranking_is_the_strategy_order_of_the_evictable_candidates() -> None:
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
    # d (the tail) and a (anchored) are kept whatever the strategy does: not
    # ranked; c (the match) comes first, then b
    assert pack_ranking(result) == ["c", "b"]


def _kept_and_evictable(strategy: str = "chronological", **request: Any) -> dict[str, Any]:
    """a anchored, b, c, d evictable, q the fresh tail."""
    items = _items(("a", 2), ("b", 2), ("c", 2), ("d", 2), ("q", 2))
    items[0]["anchored"] = True
    return {
        "items": items,
        "budget_tokens": 6,
        "prompt": "q",
        "strategy": strategy,
        "fresh_tail": {"count": 1},
        **request,
    }


def test_ndcg_and_mrr_leave_the_always_kept_gold_out() -> None:
    result = pack(_kept_and_evictable())
    assert pack_ranking(result) == ["d", "c", "b"]  # chronological: newest first
    # gold a is anchored (kept anyway): only b is judged, third of three
    m = cell_metrics(result, ["a", "b"], None)
    assert m["mrr"] == pytest.approx(1 / 3)
    assert m["ndcg@10"] == pytest.approx((1 / math.log2(4)) / 1.0)
    m = cell_metrics(result, ["c", "b", "q"], None)  # q is the tail
    assert m["mrr"] == pytest.approx(1 / 2)
    assert m["ndcg@10"] == pytest.approx(
        (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    )


def test_ndcg_and_mrr_are_undefined_when_all_gold_is_kept_anyway() -> None:
    result = pack(_kept_and_evictable())
    for gold in (["q"], ["a"], ["a", "q"]):
        m = cell_metrics(result, gold, None)
        assert m["evidence_recall"] == 1.0  # packed, as its retention metrics say
        assert m["ndcg@10"] is None and m["mrr"] is None


def test_ndcg_and_mrr_leave_the_trust_excluded_gold_out() -> None:
    request = _kept_and_evictable(trust_policy="exclude_quarantined")
    request["items"][2]["trust"] = "quarantined"
    result = pack(request)
    assert pack_ranking(result) == ["d", "b"]
    # c cannot be packed whatever the strategy does: recall and the oracle count
    # it as missed (the oracle could pack b, in the 2 tokens left), the ranking
    # metrics leave it out
    m = cell_metrics(result, ["c", "b"], None)
    assert m["evidence_recall"] == 0.0 and m["oracle_recall"] == 0.5
    assert m["mrr"] == pytest.approx(1 / 2)
    assert m["ndcg@10"] == pytest.approx(1 / math.log2(3))
    m = cell_metrics(result, ["c"], None)
    assert m["evidence_recall"] == 0.0 and m["ndcg@10"] is None and m["mrr"] is None
    # with the trust policy off, c is an evictable candidate like any other
    off = pack({**request, "trust_policy": "off"})
    assert cell_metrics(off, ["c"], None)["mrr"] == pytest.approx(1 / 2)


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
    assert m["mrr"] == pytest.approx(1 / 3)  # the evictable ranking n2, n1, e (q is the tail)
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
