"""Metrics of one packed turn, and across turns. Formulas: docs/metrics.md.

Everything here is a pure function of a :class:`~packer.pipeline.PackResult`
(and the scenario's gold ``relevant`` ids); a metric that is undefined for a cell
(recall with no gold evidence) is ``None``, never a made-up 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np

from packer.model import QUARANTINED
from packer.pipeline import PackResult
from packer.render import context_pack
from packer.select import CategoryCaps

__all__ = [
    "HARD_INVARIANTS",
    "cell_metrics",
    "mrr",
    "ndcg_at",
    "oracle_recall",
    "pack_ranking",
    "prefix_stability",
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
    """The pack's ranking of every eligible item: always-kept items first (tail
    and anchors, newest first), then the evictable candidates in the strategy's
    order (score descending, then newer ordinal; chronological: newest first).
    Items excluded by the trust policy are not ranked."""
    items = result.items
    protected = np.flatnonzero(result.in_tail | result.anchored)[::-1]
    evictable = result.evictable[np.argsort(result.rank[result.evictable], kind="stable")]
    return [items.ids[i] for i in [*protected.tolist(), *evictable.tolist()]]


def ndcg_at(ranking: Sequence[str], relevant: Sequence[str], k: int = 10) -> float | None:
    """Binary-gain nDCG@k: sum over the first k of rel_i / log2(i + 2), divided
    by the same sum for an ideal ranking. None without gold evidence."""
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
    kept = {items.ids[i] for i in np.flatnonzero(result.in_tail | result.anchored).tolist()}
    found = len(gold & kept)
    candidates = sorted(
        (int(items.tokens[i]), int(items.ordinals[i]), i)
        for i in result.evictable.tolist()
        if items.ids[i] in gold
    )
    protected = np.flatnonzero(result.in_tail | result.anchored).tolist()
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


def _recall(packed: set[str], relevant: Sequence[str]) -> float | None:
    return len(packed & set(relevant)) / len(relevant) if relevant else None


def cell_metrics(
    result: PackResult,
    relevant: Sequence[str],
    expectation_failures: Sequence[str] | None,
    expectations: Sequence[Mapping[str, Any]] = (),
    pack_items: Sequence[Mapping[str, Any]] | None = None,
    known: Mapping[str, float | None] | None = None,
) -> dict[str, Any]:
    """Every per-cell metric of one packed turn (docs/metrics.md). ``pack_items``
    are the packed items as an external packer wrote them (their citations are
    checked); by default, ctxpack's own rendering. ``known`` holds values
    already computed for an equivalent cell (``ndcg@10`` and ``mrr`` depend only
    on the ranking, ``oracle_recall`` only on the budget), which are reused."""
    items = result.items
    included = result.included
    packed = set(result.selected_ids)
    gold = list(dict.fromkeys(relevant))
    known = known or {}
    recall = _recall(packed, gold)
    oracle = known["oracle_recall"] if "oracle_recall" in known else oracle_recall(result, gold)
    if "ndcg@10" in known and "mrr" in known:
        ndcg, rr = known["ndcg@10"], known["mrr"]
    else:
        ranking = pack_ranking(result)
        ndcg, rr = ndcg_at(ranking, gold, 10), mrr(ranking, gold)
    must_include = [i for exp in expectations for i in exp.get("must_include", [])]
    must_exclude = [i for exp in expectations for i in exp.get("must_exclude", [])]
    quarantined = (items.trust == QUARANTINED) & included
    cited = [
        it["citations"].get("recordRef") == it["recordRef"] != ""
        for it in (context_pack(result)["items"] if pack_items is None else pack_items)
    ]
    n_tail = int(result.in_tail.sum())
    n_anchor = int(result.anchored.sum())
    budget = result.request.budget_tokens
    return {
        "evidence_recall": recall,
        "evidence_hit": None if recall is None else float(recall == 1.0),
        "ndcg@10": ndcg,
        "mrr": rr,
        "oracle_recall": oracle,
        "regret": None if recall is None or oracle is None else oracle - recall,
        "must_include_recall": (
            sum(i in packed for i in must_include) / len(must_include) if must_include else None
        ),
        "must_exclude_violations": sum(i in packed for i in must_exclude),
        "expectation_pass": (
            None if expectation_failures is None else float(not expectation_failures)
        ),
        "tokens_used": result.used_tokens,
        "budget_utilisation": result.used_tokens / budget,
        "budget_violations": int(result.evictable_tokens_used > result.remaining_tokens),
        "tail_retention": (float(included[result.in_tail].mean()) if n_tail else None),
        "tail_lost": int((~included[result.in_tail]).sum()),
        "anchor_retention": (float(included[result.anchored].mean()) if n_anchor else None),
        "anchors_lost": int((~included[result.anchored]).sum()),
        "citation_coverage": sum(cited) / len(cited) if cited else None,
        "citations_missing": len(cited) - sum(cited),
        "quarantined_included": (
            int(quarantined.sum()) if result.request.trust_policy != "off" else 0
        ),
        "selected_count": len(packed),
        "over_budget": int(result.over_budget),
    }


def prefix_stability(previous: Sequence[str], current: Sequence[str]) -> float:
    """Share of the previous pack's prefix kept unchanged by the next pack: the
    longest common prefix (in pack order) over the previous pack's length. A
    provider's prompt cache survives exactly that prefix; 1.0 when the previous
    pack was empty."""
    if not previous:
        return 1.0
    common = 0
    for a, b in zip(previous, current, strict=False):
        if a != b:
            break
        common += 1
    return common / len(previous)
