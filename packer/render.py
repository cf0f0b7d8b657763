"""Render a :class:`~packer.pack.PackResult` as a ContextPack v1 with its trace.

The pack satisfies openclaw-mem's ``openclaw-mem.context-pack.v1`` contract to
the letter (every required field, ``bundle_text`` as ``- [recordRef] text`` one
line per item, a citation per item); the trace (``packproof.pack.trace.v1``) is an
additive top-level field, as the contract allows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Literal

import numpy as np

from .cacheassembly import trace_section
from .cacheaware import PLACEMENT_NAMES
from .jsonio import canonical, json_floats, mark_floats
from .model import IMPORTANCE, KINDS, MESSAGE, ROLES, TRUST, UNKNOWN_TRUST, Items
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
    from .strategies import Ranking

__all__ = [
    "PACK_SCHEMA_ID",
    "TRACE_LEVELS",
    "TRACE_SCHEMA_ID",
    "TraceLevel",
    "context_pack",
    "item_entry",
    "pack_entry",
    "reasons_by_id",
    "render",
    "trace",
]

PACK_SCHEMA_ID: Final = "openclaw-mem.context-pack.v1"
TRACE_SCHEMA_ID: Final = "packproof.pack.trace.v1"
# How much of the trace a pack carries. full: every candidate with all its
# fields; decisions: per candidate only id, tokens, score, rank and decision (and,
# cache-aware, placement and position), the trace saying "level": "decisions";
# none: no trace field.
TraceLevel = Literal["full", "decisions", "none"]
TRACE_LEVELS: Final[tuple[TraceLevel, ...]] = ("full", "decisions", "none")
HOW_TO_USE: Final = (
    "Prefer bundle_text for direct injection.",
    "Use items[].recordRef as the citation key.",
    "If you need detail, retrieve L2 by recordRef (bounded).",
)


def _layer_and_type(items: Items, i: int, in_tail: bool) -> tuple[str, str]:
    """Tail items are L0 (messages there are ``recent_turn``); the rest L1."""
    kind = KINDS[items.kinds[i]]
    if in_tail:
        return "L0", "recent_turn" if kind == "message" else kind
    return "L1", kind


def _bundle_line(ref: str, text: str) -> str:
    # One line per item: line breaks inside a text become spaces in the bundle
    # (items[].text keeps the text verbatim).
    return f"- [{ref}] " + " ".join(text.splitlines()) if text else f"- [{ref}] "


def pack_entry(result: PackResult, i: int) -> dict[str, Any]:
    """Item ``i`` as a packed item of the context pack. It depends only on the item
    and whether it is in the fresh tail, never on what else was packed."""
    return item_entry(result.items, i, bool(result.in_tail[i]))


def item_entry(items: Items, i: int, in_tail: bool) -> dict[str, Any]:
    """:func:`pack_entry` of item ``i`` of ``items``, in the fresh tail or not (a
    window's item renders as its base table's item at the window's offset)."""
    ref = items.ids[i]
    layer, kind = _layer_and_type(items, i, in_tail)
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
    # A policy writes its own bundle text (openclaw-mem's keeps line breaks inside a text).
    bundle_text = "\n".join(lines) if result.policy is None else result.policy.bundle_text
    return {
        "schema": PACK_SCHEMA_ID,
        "meta": {
            "ts": req.ts,
            "query": req.prompt or "",
            "scope": req.scope,
            "budgetTokens": req.budget_tokens,
            "maxItems": req.max_items if req.max_items is not None else max(1, len(items)),
        },
        "bundle_text": bundle_text,
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
    held[previous.held()] = True  # its recall block too, when given apart
    return held


def reasons_by_id(result: PackResult, ids: Iterable[str] | None = None) -> dict[str, list[str]]:
    """Each candidate's decision reasons, by id (as the trace lists them): of
    every candidate, or of the ``ids`` given (ids the request lacks are left out)."""
    trust_on = result.request.trust_policy != "off"
    previous = _in_previous(result)
    policy = result.policy
    at: Iterable[tuple[int, str]]
    if ids is None:
        at = enumerate(result.items.ids)
    else:
        position = result.items.position
        at = ((position[ref], ref) for ref in dict.fromkeys(ids) if ref in position)
    if policy is not None:
        return {ref: list(policy.reasons[i]) for i, ref in at}
    return {ref: _reasons(result, i, trust_on, previous) for i, ref in at}


def _decisions(result: PackResult, shared: bool) -> list[dict[str, Any]]:
    """Every candidate's decision, ``{"included", "reason"}`` (:func:`_reasons`),
    worked out once per distinct combination of what it depends on (the outcome,
    anchored, unknown trust, in the previous pack): a 100k-item pack has a
    handful. ``shared``: equal decisions are one object (for serialising only).
    A policy's pack has each candidate's reasons from the policy."""
    if result.policy is not None:
        included = result.included.tolist()
        return [
            {"included": inc, "reason": list(why)}
            for inc, why in zip(included, result.policy.reasons, strict=True)
        ]
    trust_on = result.request.trust_policy != "off"
    previous = _in_previous(result)
    key = result.outcome.astype(np.int64) * 8 + result.anchored * 4
    key += (result.items.trust == UNKNOWN_TRUST) * 2
    if previous is not None:
        key += previous
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    table = [
        (bool(result.included[i]), tuple(_reasons(result, i, trust_on, previous)))
        for i in first.tolist()
    ]
    if shared:
        one = [{"included": inc, "reason": list(why)} for inc, why in table]
        return [one[k] for k in inverse.ravel().tolist()]
    return [
        {"included": table[k][0], "reason": list(table[k][1])} for k in inverse.ravel().tolist()
    ]


def _names(codes: np.ndarray, names: tuple[str, ...]) -> list[str]:
    named: list[str] = np.array(names, dtype=object)[codes].tolist()
    return named


def _candidates(result: PackResult, level: TraceLevel, shared: bool) -> list[dict[str, Any]]:
    """The trace's per-candidate records, built column by column (a 100k-item
    pack has 100k of them; the per-item work is one dict per record)."""
    items = result.items
    ids = items.ids
    tokens = items.tokens.tolist()
    scores = json_floats(result.scores())
    ranks = [r or None for r in result.rank.tolist()]
    decisions = _decisions(result, shared)
    if level == "decisions":
        candidates = [
            {"id": ref, "tokens": t, "score": s, "rank": r, "decision": d}
            for ref, t, s, r, d in zip(ids, tokens, scores, ranks, decisions, strict=True)
        ]
    else:
        kinds = _names(items.kinds, KINDS)
        layers = np.where(result.in_tail, "L0", "L1").tolist()
        types = [
            "recent_turn" if tail and kind == "message" else kind
            for tail, kind in zip(result.in_tail.tolist(), kinds, strict=True)
        ]
        components = _components(result, result.ranking)
        candidates = [
            {
                "id": ref,
                "ordinal": ordinal,
                "role": role,
                "kind": kind,
                "layer": layer,
                "type": type_,
                "importance": importance,
                "trust": trust,
                "tokens": t,
                "score": s,
                "components": comps,
                "rank": r,
                "decision": d,
                "citations": {"recordRef": ref, "url": url},
            }
            for (
                ref,
                ordinal,
                role,
                kind,
                layer,
                type_,
                importance,
                trust,
                t,
                s,
                comps,
                r,
                d,
                url,
            ) in zip(
                ids,
                items.ordinals.tolist(),
                _names(items.roles, ROLES),
                kinds,
                layers,
                types,
                _names(items.importance, IMPORTANCE),
                _names(items.trust, TRUST),
                tokens,
                scores,
                components,
                ranks,
                decisions,
                items.urls,
                strict=True,
            )
        ]
    if result.cache is not None:
        _place(result, candidates)
    return candidates


def _components(result: PackResult, ranking: Ranking) -> list[dict[str, float]]:
    """Each candidate's score components by name: those it has (none unless scored)."""
    n = len(result.items)
    names = tuple(sorted(ranking.components))
    if not names:
        return [{} for _ in range(n)]
    matrix = np.full((len(names), n), np.nan)
    for row, name in zip(matrix, names, strict=True):
        row[result.evictable] = ranking.components[name]
    out: list[dict[str, Any]] = list(map(_dict_display(names), *map(json_floats, matrix)))
    for i in np.flatnonzero(np.isnan(matrix).any(axis=0)).tolist():  # unscored: NaN is None
        out[i] = {k: v for k, v in out[i].items() if v is not None}
    return out


@cache
def _dict_display(names: tuple[str, ...]) -> Callable[..., dict[str, Any]]:
    """``lambda v0, v1, ...: {names[0]: v0, names[1]: v1, ...}``, compiled once per
    set of names as dataclasses compile an ``__init__``: over 100k candidates it
    builds the dicts in half the time ``dict(zip(names, values))`` takes."""
    args = ", ".join(f"v{k}" for k in range(len(names)))
    body = ", ".join(f"{name!r}: v{k}" for k, name in enumerate(names))  # repr: literals
    display: Callable[..., dict[str, Any]] = eval(f"lambda {args}: {{{body}}}")
    return display


def trace(
    result: PackResult, bundle_text: str, level: TraceLevel = "full", *, shared: bool = False
) -> dict[str, Any]:
    """The trace of ``result`` at ``level``: ``full`` or ``decisions`` (see
    TRACE_LEVELS; a ``decisions`` trace says so in its ``level`` field).
    ``shared=True`` lets equal parts of candidates be one object: fine to
    serialise, a trap to edit (:meth:`PackResult.to_dict` never asks for it)."""
    req = result.request
    items = req.items
    ranking = result.ranking
    candidates = _candidates(result, level, shared)
    n_included = int(result.included.sum())
    bundle_tokens = int(count_tokens([bundle_text], req.token_counter)[0])
    tail_messages = int((result.in_tail & (items.kinds == MESSAGE)).sum())
    out: dict[str, Any] = {
        "schema": TRACE_SCHEMA_ID,
        **({"level": level} if level != "full" else {}),  # full traces keep their bytes
        "strategy": mark_floats(canonical(req.strategy.spec())),
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
        out["cache_aware"] = trace_section(result)
    if result.policy is not None and result.policy.extensions:
        # a policy's receipts, floats rounded as every float of the trace
        out["extensions"] = mark_floats(canonical(dict(result.policy.extensions)))
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


def render(
    result: PackResult, level: TraceLevel = "full", *, shared: bool = False
) -> dict[str, Any]:
    """The ContextPack v1 object with the trace at ``level`` as an additive
    ``trace`` field (none at level ``none``); ``shared`` as :func:`trace` has it."""
    if level not in TRACE_LEVELS:
        raise ValueError(f"unknown trace level {level!r} (known: {', '.join(TRACE_LEVELS)})")
    out = context_pack(result)
    if level != "none":
        out["trace"] = trace(result, out["bundle_text"], level, shared=shared)
    return out
