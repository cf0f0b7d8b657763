"""Render a :class:`~packer.pack.PackResult` as a ContextPack v1 with its trace.

The pack satisfies openclaw-mem's ``openclaw-mem.context-pack.v1`` contract to
the letter (every required field, ``bundle_text`` as ``- [recordRef] text`` one
line per item, a citation per item); the trace (``ctxpack.pack.trace.v1``) is an
additive top-level field, as the contract allows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from .cacheaware import PLACEMENT_NAMES
from .jsonio import canonical, round_floats
from .model import IMPORTANCE, KINDS, MESSAGE, ROLES, TRUST, UNKNOWN_TRUST
from .reasons import (
    ANCHORED,
    DROPPED_PREVIOUS,
    FAIL_OPEN,
    IN_PREVIOUS,
    O_ANCHORED,
    O_APPENDED,
    O_INCLUDED,
    O_KEPT,
    O_QUARANTINED,
    O_RECALL,
    OUTCOMES,
    TRUST_ALLOWED,
    WITHIN_ITEM_LIMIT,
)
from .tokens import count_tokens

if TYPE_CHECKING:
    from .result import PackResult

__all__ = [
    "PACK_SCHEMA_ID",
    "TRACE_SCHEMA_ID",
    "context_pack",
    "pack_entry",
    "reasons_by_id",
    "render",
    "trace",
]

PACK_SCHEMA_ID: Final = "openclaw-mem.context-pack.v1"
TRACE_SCHEMA_ID: Final = "ctxpack.pack.trace.v1"
HOW_TO_USE: Final = (
    "Prefer bundle_text for direct injection.",
    "Use items[].recordRef as the citation key.",
    "If you need detail, retrieve L2 by recordRef (bounded).",
)


def _layer_and_type(result: PackResult, i: int) -> tuple[str, str]:
    """Tail items are L0 (messages there are ``recent_turn``); the rest L1."""
    kind = KINDS[result.items.kinds[i]]
    if result.in_tail[i]:
        return "L0", "recent_turn" if kind == "message" else kind
    return "L1", kind


def _bundle_line(ref: str, text: str) -> str:
    # One line per item: line breaks inside a text become spaces in the bundle
    # (items[].text keeps the text verbatim).
    return f"- [{ref}] " + " ".join(text.splitlines()) if text else f"- [{ref}] "


def pack_entry(result: PackResult, i: int) -> dict[str, Any]:
    """Item ``i`` as a packed item of the context pack. It depends only on the item
    and whether it is in the fresh tail, never on what else was packed."""
    items = result.items
    ref = items.ids[i]
    layer, kind = _layer_and_type(result, i)
    return {
        "recordRef": ref,
        "layer": layer,
        "type": kind,
        "importance": IMPORTANCE[items.importance[i]],
        "trust": TRUST[items.trust[i]],
        "text": items.texts[i],
        "citations": {"recordRef": ref, "url": items.urls[i]},
    }


def context_pack(result: PackResult) -> dict[str, Any]:
    req = result.request
    items = req.items
    packed = []
    lines = []
    for i in result.order:
        packed.append(pack_entry(result, i))
        lines.append(_bundle_line(items.ids[i], items.texts[i]))
    return {
        "schema": PACK_SCHEMA_ID,
        "meta": {
            "ts": req.ts,
            "query": req.prompt or "",
            "scope": req.scope,
            "budgetTokens": req.budget_tokens,
            "maxItems": req.max_items if req.max_items is not None else max(1, len(items)),
        },
        "bundle_text": "\n".join(lines),
        "items": packed,
        "notes": {"how_to_use": list(HOW_TO_USE)},
    }


def _reasons(
    result: PackResult, i: int, trust_on: bool, previous: np.ndarray | None = None
) -> list[str]:
    code = int(result.outcome[i])
    reasons = [OUTCOMES[code]]
    if result.anchored[i] and code != O_ANCHORED:
        reasons.append(ANCHORED)
    if code in _FILLED and result.request.max_items is not None:
        reasons.append(WITHIN_ITEM_LIMIT)
    if trust_on and code != O_QUARANTINED:
        reasons.append(FAIL_OPEN if result.items.trust[i] == UNKNOWN_TRUST else TRUST_ALLOWED)
    if previous is not None and previous[i] and code != O_KEPT:
        reasons.append(IN_PREVIOUS if result.included[i] else DROPPED_PREVIOUS)
    return reasons


_FILLED: Final = frozenset({O_INCLUDED, O_KEPT, O_APPENDED, O_RECALL})


def _in_previous(result: PackResult) -> np.ndarray | None:
    """Per item: did the previous pack hold it (None without a previous pack)?"""
    previous = result.request.previous_pack
    if previous is None or result.cache is None:
        return None
    held = np.zeros(len(result.items), dtype=bool)
    held[previous.positions] = True
    return held


def reasons_by_id(result: PackResult, ids: Iterable[str] | None = None) -> dict[str, list[str]]:
    """Each candidate's decision reasons, by id (as the trace lists them): of
    every candidate, or of the ``ids`` given (ids the request lacks are left out)."""
    trust_on = result.request.trust_policy != "off"
    previous = _in_previous(result)
    at: Iterable[tuple[int, str]]
    if ids is None:
        at = enumerate(result.items.ids)
    else:
        position = result.items.position
        at = ((position[ref], ref) for ref in dict.fromkeys(ids) if ref in position)
    return {ref: _reasons(result, i, trust_on, previous) for i, ref in at}


def _number(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def trace(result: PackResult, bundle_text: str) -> dict[str, Any]:
    req = result.request
    items = req.items
    ranking = result.ranking
    trust_on = req.trust_policy != "off"
    columns = {}
    for name in sorted(ranking.components):
        column = np.full(len(items), np.nan)
        column[result.evictable] = ranking.components[name]
        columns[name] = round_floats(column).tolist()
    score_list = round_floats(result.scores()).tolist()
    included = result.included.tolist()
    rank = result.rank.tolist()
    previous = _in_previous(result)
    candidates = []
    for i in range(len(items)):
        layer, kind = _layer_and_type(result, i)
        candidates.append(
            {
                "id": items.ids[i],
                "ordinal": int(items.ordinals[i]),
                "role": ROLES[items.roles[i]],
                "kind": KINDS[items.kinds[i]],
                "layer": layer,
                "type": kind,
                "importance": IMPORTANCE[items.importance[i]],
                "trust": TRUST[items.trust[i]],
                "tokens": int(items.tokens[i]),
                "score": _number(score_list[i]),
                "components": {
                    k: v for k, col in columns.items() if (v := _number(col[i])) is not None
                },
                "rank": rank[i] or None,
                "decision": {
                    "included": included[i],
                    "reason": _reasons(result, i, trust_on, previous),
                },
                "citations": {"recordRef": items.ids[i], "url": items.urls[i]},
            }
        )
    if result.cache is not None:
        _place(result, candidates)
    n_included = int(result.included.sum())
    bundle_tokens = int(count_tokens([bundle_text], req.token_counter)[0])
    tail_messages = int((result.in_tail & (items.kinds == MESSAGE)).sum())
    out: dict[str, Any] = {
        "schema": TRACE_SCHEMA_ID,
        "strategy": canonical(req.strategy.spec()),
        "spec": req.strategy.spec_string(),
        "token_counter": req.token_counter,
        "trust_policy": req.trust_policy,
        "mode": result.mode,
        "fallback": ranking.fallback,
        "query_terms": list(ranking.terms),
        "current_turn": req.current_turn,
        "fresh_tail": {
            "count": req.fresh_tail.count,
            "max_tokens": req.fresh_tail.max_tokens,
            "start_ordinal": None
            if result.tail_start is None
            else int(items.ordinals[result.tail_start]),
            "messages": tail_messages,
            "items": int(result.in_tail.sum()),
        },
        "budget": {
            "budget_tokens": req.budget_tokens,
            "max_items": req.max_items,
            "category_caps": dict(req.category_caps),
            "tail_tokens": result.tail_tokens,
            "anchor_tokens": result.anchor_tokens,
            "remaining_tokens": result.remaining_tokens,
            "evictable_slots": result.evictable_slots,
            "evictable_tokens_used": result.evictable_tokens_used,
            "used_tokens": result.used_tokens,
            "over_budget": result.over_budget,
        },
        "candidates": candidates,
        "output": {
            "includedCount": n_included,
            "excludedCount": len(items) - n_included,
            "citationsCount": n_included,
            "coverage": {"citationMissingCount": 0, "allIncludedHaveCitations": True},
            "bundleTokens": bundle_tokens,
            "bundleOverBudget": bundle_tokens > req.budget_tokens,
        },
    }
    if result.cache is not None:
        out["cache_aware"] = _cache_section(result)
    return out


def _place(result: PackResult, candidates: list[dict[str, Any]]) -> None:
    """Each candidate's placement (stable part or recall block) and 0-based
    position in the pack; None for items left out."""
    assert result.placement is not None
    names = result.placement.tolist()
    positions = dict(zip(result.order, range(len(result.order)), strict=True))
    for i, entry in enumerate(candidates):
        entry["placement"] = PLACEMENT_NAMES[names[i]]
        entry["position"] = positions.get(i)


def _cache_section(result: PackResult) -> dict[str, Any]:
    req = result.request
    decision = result.cache
    assert decision is not None and req.cache_aware is not None
    previous = req.previous_pack
    return {
        "options": req.cache_aware.to_json(),
        "action": decision.action,
        "why": decision.why,
        "previous_pack": None
        if previous is None
        else {"items": decision.previous_items, "elapsed_s": previous.elapsed_s},
        "kept_prefix_items": decision.kept_prefix_items,
        "high_water_tokens": decision.high_water_tokens,
        "low_water_tokens": decision.low_water_tokens,
        "recall_budget_tokens": decision.recall_budget_tokens,
        "stable_tokens": decision.stable_tokens,
        "recall_tokens": decision.recall_tokens,
    }


def render(result: PackResult) -> dict[str, Any]:
    """The ContextPack v1 object with the trace as an additive ``trace`` field."""
    out = context_pack(result)
    out["trace"] = trace(result, out["bundle_text"])
    return out
