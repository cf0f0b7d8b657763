"""Metrics of one packed turn, and across turns. Formulas: docs/metrics.md.

Everything here is a pure function of a :class:`~packer.pipeline.PackResult`
(and the scenario's gold ``relevant`` ids and answers); a metric that is
undefined for a cell (recall with no gold evidence) is ``None``, never a made-up 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import numpy as np

from packproof.evals.metrics.answers import Answers
from packproof.packer.model import QUARANTINED, Items
from packproof.packer.pipeline import PackResult
from packproof.packer.render import item_entry
from packproof.packer.select import CategoryCaps

__all__ = [
    "HARD_INVARIANTS",
    "Citations",
    "cell_metrics",
    "mrr",
    "ndcg_at",
    "oracle_recall",
    "pack_ranking",
    "ranked_relevant",
]

# Must be exactly 0 in every cell: a pack that breaks one is wrong, not worse.
HARD_INVARIANTS: Final = (
    "budget_violations",
    "citations_missing",
    "quarantined_included",
    "tail_lost",
    "anchors_lost",
)


def pack_ranking(result: PackResult) -> list[str]:
    """The strategy's ranking of the evictable candidates: score descending, then
    newer ordinal (chronological: newest first). Always-kept items (fresh tail,
    anchors) and items excluded by the trust policy are not ranked: the strategy
    decides nothing about them."""
    items = result.items
    evictable = result.evictable[np.argsort(result.rank[result.evictable], kind="stable")]
    return [items.ids[i] for i in evictable.tolist()]


def _ranking_head(result: PackResult, judged: Sequence[str], k: int) -> list[str]:
    """The head of :func:`pack_ranking` that :func:`ndcg_at` (its first ``k``)
    and :func:`mrr` (up to its first ``judged`` item) read: the same values,
    without naming every ranked candidate."""
    items = result.items
    evictable = result.evictable[np.argsort(result.rank[result.evictable], kind="stable")]
    position = items.position
    hits = np.flatnonzero(np.isin(evictable, [position[ref] for ref in judged]))
    upto = max(k, int(hits[0]) + 1) if len(hits) else k
    return [items.ids[i] for i in evictable[:upto].tolist()]


def ranked_relevant(result: PackResult, relevant: Sequence[str]) -> list[str]:
    """The gold items the ranking metrics judge: those among the evictable
    candidates. Gold in the fresh tail or anchored is packed whatever the
    strategy does (its retention has its own metrics), and gold the trust policy
    excludes is lost whatever it does (evidence and oracle recall count it as
    missed): counting either would cap or floor nDCG and MRR the same for every
    strategy."""
    position = result.items.position
    candidate = np.zeros(len(result.items), dtype=bool)
    candidate[result.evictable] = True
    return [ref for ref in dict.fromkeys(relevant) if ref in position and candidate[position[ref]]]


def ndcg_at(ranking: Sequence[str], relevant: Sequence[str], k: int = 10) -> float | None:
    """Binary-gain nDCG@k: sum over the first k of rel_i / log2(i + 2), divided
    by the same sum for an ideal ranking (of every relevant item, ranked or not,
    as trec_eval does). None without gold evidence."""
    gold = set(relevant)
    if not gold:
        return None
    dcg = sum(1.0 / math.log2(i + 2) for i, ref in enumerate(ranking[:k]) if ref in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(gold))))
    return dcg / ideal


def mrr(ranking: Sequence[str], relevant: Sequence[str]) -> float | None:
    """Reciprocal rank of the first gold item (0 if none is ranked)."""
    gold = set(relevant)
    if not gold:
        return None
    return next((1.0 / (i + 1) for i, ref in enumerate(ranking) if ref in gold), 0.0)


def oracle_recall(result: PackResult, relevant: Sequence[str]) -> float | None:
    """The best evidence recall any selection could reach under the same budget,
    slots, category caps and trust policy, given the same always-kept items.

    Every gold item is worth 1, so the best selection takes the cheapest gold
    candidates first while they fit (and their category has room): with unit
    values, lightest-first greedy over a partition matroid is exact, so this is
    the optimum, not a bound."""
    gold = set(relevant)
    if not gold:
        return None
    items = result.items
    position = items.position
    at = np.array(sorted({position[ref] for ref in gold if ref in position}), dtype=np.int64)
    kept = result.in_tail | result.anchored
    found = int(kept[at].sum())
    open_gold = np.zeros(len(items), dtype=bool)
    open_gold[at] = True
    candidates = sorted(
        (int(items.tokens[i]), int(items.ordinals[i]), i)
        for i in result.evictable[open_gold[result.evictable]].tolist()
    )
    protected = np.flatnonzero(kept).tolist()
    caps = CategoryCaps(result.request.category_caps, [items.categories[i] for i in protected])
    left, slots = result.remaining_tokens, result.evictable_slots
    for cost, _, i in candidates:
        if slots is not None and slots <= 0:
            break
        if cost <= left and (not caps.active or caps.take(items.categories[i])):
            left -= cost
            found += 1
            slots = None if slots is None else slots - 1
    return found / len(gold)


class Citations:
    """Whether packproof's own pack entry for each item cites it, rendered once per
    item. An entry depends only on the item and whether it is in the fresh tail
    (:func:`packproof.packer.render.pack_entry`), so every pack over one item
    table, and over windows of it (a replay's steps), can share one of these:
    verdicts are kept per position of the base table and tail membership."""

    def __init__(self) -> None:
        self._base: Items | None = None
        # per tail membership (row) and base position: -1 not rendered yet, 0, 1
        self._flags = np.zeros((2, 0), dtype=np.int8)

    def of(self, result: PackResult) -> list[bool]:
        """The verdict for each packed item, in pack order."""
        base, start = result.items.base_window()
        if base is not self._base:
            self._base = base
            self._flags = np.full((2, len(base)), -1, dtype=np.int8)
        at = np.flatnonzero(result.included)
        rows = result.in_tail[at].astype(np.intp)
        flags = self._flags
        verdicts = flags[rows, at + start]
        for k in np.flatnonzero(verdicts < 0).tolist():
            i, row = start + int(at[k]), int(rows[k])
            # rendered from the base table: a window's lists are never sliced
            verdicts[k] = flags[row, i] = _cites(item_entry(base, i, bool(row)))
        out: list[bool] = (verdicts == 1).tolist()
        return out


def _cites(entry: Mapping[str, Any]) -> bool:
    return bool(entry["citations"].get("recordRef") == entry["recordRef"] != "")


def _share(hits: int, total: int) -> float | None:
    return hits / total if total else None


def cell_metrics(
    result: PackResult,
    relevant: Sequence[str],
    expectation_failures: Sequence[str] | None,
    expectations: Sequence[Mapping[str, Any]] = (),
    pack_items: Sequence[Mapping[str, Any]] | None = None,
    known: Mapping[str, float | None] | None = None,
    citations: Citations | None = None,
    answers: Answers | None = None,
) -> dict[str, Any]:
    """Every per-cell metric of one packed turn (docs/metrics.md). ``pack_items``
    are the packed items as an external packer wrote them (their citations are
    checked); by default, packproof's own pack entries (through ``citations``,
    which caches them over packs of one reservation). ``known`` holds
    values already computed for an equivalent cell (``ndcg@10`` and ``mrr``
    depend only on the ranking, ``oracle_recall`` only on the budget), which
    are reused. ``answers`` are the turn's gold answers matched against its
    items (``answer_token_recall`` and its ceiling; None without them)."""
    items = result.items
    included = result.included
    position = items.position
    gold = list(dict.fromkeys(relevant))
    known = known or {}

    def packed_count(ids: Iterable[str]) -> int:
        return sum(1 for ref in ids if ref in position and included[position[ref]])

    recall = _share(packed_count(gold), len(gold))
    oracle = known["oracle_recall"] if "oracle_recall" in known else oracle_recall(result, gold)
    if "ndcg@10" in known and "mrr" in known:
        ndcg, rr = known["ndcg@10"], known["mrr"]
    else:
        judged = ranked_relevant(result, gold) if gold else []
        ranking = _ranking_head(result, judged, 10) if judged else []
        ndcg, rr = ndcg_at(ranking, judged, 10), mrr(ranking, judged)
    must_include = [i for exp in expectations for i in exp.get("must_include", [])]
    must_exclude = [i for exp in expectations for i in exp.get("must_exclude", [])]
    if pack_items is not None:
        flags = [_cites(it) for it in pack_items]
    else:
        flags = (citations or Citations()).of(result)
    in_tail, anchored = result.in_tail, result.anchored
    n_tail, n_anchor = int(np.count_nonzero(in_tail)), int(np.count_nonzero(anchored))
    tail_kept = int(np.count_nonzero(included & in_tail))
    anchors_kept = int(np.count_nonzero(included & anchored))
    used = int(items.tokens[included].sum())
    evictable_used = used - result.tail_tokens - result.anchor_tokens
    budget = result.request.budget_tokens
    quarantined = 0
    if result.request.trust_policy != "off":
        quarantined = int(((items.trust == QUARANTINED) & included).sum())
    return {
        "evidence_recall": recall,
        "evidence_hit": None if recall is None else float(recall == 1.0),
        "ndcg@10": ndcg,
        "mrr": rr,
        "oracle_recall": oracle,
        "regret": None if recall is None or oracle is None else oracle - recall,
        "answer_token_recall": None if answers is None else answers.recall(included),
        "answer_token_ceiling": None if answers is None else answers.ceiling,
        "must_include_recall": _share(packed_count(must_include), len(must_include)),
        "must_exclude_violations": packed_count(must_exclude),
        "expectation_pass": (
            None if expectation_failures is None else float(not expectation_failures)
        ),
        "tokens_used": used,
        "budget_utilisation": used / budget,
        "budget_violations": int(evictable_used > result.remaining_tokens),
        "tail_retention": _share(tail_kept, n_tail),
        "tail_lost": n_tail - tail_kept,
        "anchor_retention": _share(anchors_kept, n_anchor),
        "anchors_lost": n_anchor - anchors_kept,
        "citation_coverage": _share(sum(flags), len(flags)),
        "citations_missing": len(flags) - sum(flags),
        "quarantined_included": quarantined,
        "selected_count": int(np.count_nonzero(included)),
        "over_budget": int(result.over_budget),
    }
