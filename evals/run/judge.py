"""How an external pack is judged: held to the pack contract first
(:func:`pack_problem`, the one check ``packproof eval`` and the pytest plugin
share), recorded as a failed cell when it broke it or never came
(:func:`failed_cell`), and otherwise read into the reference result, whose fresh
tail, anchors and budget stay packproof's (:func:`judged`)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Collection, Mapping
from typing import Any, Final, Literal

import numpy as np

from packproof.evals.run.replay import PACK
from packproof.packer.pipeline import PackResult
from packproof.packer.reasons import O_ANCHORED, O_BUDGET, O_INCLUDED, O_TAIL, OUTCOMES
from packproof.packer.render import TRACE_SCHEMA_ID
from packproof.packer.result import PACKED  # per outcome code: is the item packed?
from packproof.packer.schema import validate

__all__ = [
    "FAILURES",
    "Failure",
    "check_answer",
    "failed_cell",
    "judged",
    "pack_problem",
    "trace_contradiction",
    "traced",
]

Failure = Literal["TIMEOUT", "CRASH", "PARSE_ERROR", "SCHEMA_ERROR", "DESYNC"]
FAILURES: Final = ("TIMEOUT", "CRASH", "PARSE_ERROR", "SCHEMA_ERROR", "DESYNC")


def pack_problem(pack: Mapping[str, Any], known: Collection[str]) -> str | None:
    """Why ``pack`` is not a pack of a request whose ids are ``known`` (None: it
    is one), worded to follow "the answer". The one check of an answer,
    ``packproof eval``'s and the pytest plugin's: it breaks the pack schema,
    packs an id the request does not have or one id twice, or carries a trace
    that names an id the request does not have, names one twice, opens a
    decision with a reason that is not an outcome, or, being packproof's own
    trace, contradicts the items (:func:`trace_contradiction`). The pack is its
    ``items``: the trace only explains them (:func:`judged`)."""
    errors = validate("pack", pack)
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return f"is not a ContextPack v1: {errors[0]}{more}"
    packed = [it["recordRef"] for it in pack["items"]]
    named = [cand["id"] for cand in _candidates(pack)]
    for what, refs in (("packs", packed), ("has a trace naming", named)):
        unknown = [ref for ref in refs if ref not in known]
        if unknown:
            return f"{what} ids the request does not have: {unknown[:5]}"
        twice = sorted(ref for ref, n in Counter(refs).items() if n > 1)
        if twice:
            return f"{what} ids more than once: {twice[:5]}"
    for cand in _candidates(pack):
        reason = cand["decision"]["reason"][0]
        if reason not in OUTCOMES:
            return f"has a trace opening {cand['id']}'s reasons with {reason!r}, not an outcome"
    return trace_contradiction(pack)


def trace_contradiction(pack: Mapping[str, Any]) -> str | None:
    """Where packproof's own trace in ``pack`` says another selection than its
    ``items`` (None: it agrees, or there is no such trace): an id the trace
    decides packed (its outcome is one that packs it) that is not among the
    items, or an item the trace does not decide packed. The items are the pack,
    so such a trace explains a pack that was not given: the answer is refused
    rather than scored from either. The pack's schema and ids are checked."""
    if not traced(pack):
        return None
    packed = {it["recordRef"] for it in pack["items"]}
    said = {
        cand["id"]
        for cand in _candidates(pack)
        if PACKED[OUTCOMES.index(cand["decision"]["reason"][0])]
    }
    for what, refs in (
        ("decides packed ids that are not among its items", said - packed),
        ("does not decide packed ids that are among its items", packed - said),
    ):
        if refs:
            shown = sorted(refs)[:5]
            more = f" (and {len(refs) - 5} more)" if len(refs) > 5 else ""
            return f"has a trace that contradicts its items: it {what}: {shown}{more}"
    return None


def _candidates(pack: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    trace = pack.get("trace")
    return list(trace["candidates"]) if isinstance(trace, Mapping) else []


def check_answer(request: Mapping[str, Any], pack: dict[str, Any]) -> tuple[Failure | None, Any]:
    """An answer held to the pack contract: (None, pack), or ``SCHEMA_ERROR`` and
    why (:func:`pack_problem`)."""
    problem = pack_problem(pack, {it["id"] for it in request["items"]})
    if problem is not None:
        return "SCHEMA_ERROR", f"the answer {problem}"
    return None, pack


def failed_cell(
    record: Mapping[str, Any], failure: str, error: object, latency_s: float
) -> dict[str, Any]:
    """The record of a cell the external packer failed (``TIMEOUT``, ``CRASH``,
    ...): no pack and no metrics, the failure and its message kept."""
    return {
        **record,
        "status": failure,
        "error": str(error),
        "mode": None,
        "selected": [],
        "failures": [],
        "metrics": {},
        "latency_ms": round(latency_s * 1000, 3),
        PACK: [],
    }


def traced(pack: Mapping[str, Any]) -> bool:
    """Whether an external pack carries packproof's own trace (then :func:`judged`
    reads every candidate's decision from it exactly)."""
    trace = pack.get("trace")
    return isinstance(trace, Mapping) and trace.get("schema") == TRACE_SCHEMA_ID


def judged(reference: PackResult, pack: Mapping[str, Any]) -> PackResult:
    """The reference result with an external pack's selection: the fresh tail,
    anchors and budget stay packproof's definitions (so the metrics judge the
    external packer by the same rules). What is packed is the pack's
    ``items``, in their order, and nothing else. With packproof's own trace in
    the pack, outcome, rank and mode are read from it (each outcome only where
    it agrees with the items, which :func:`trace_contradiction` holds it to);
    otherwise packed items rank first in pack order and the rest newest first.
    The pack is one :func:`pack_problem` found nothing wrong with: every id it
    names is the request's."""
    items = reference.items
    position = items.position
    packed = [position[it["recordRef"]] for it in pack["items"]]
    kept = np.zeros(len(items), dtype=bool)
    kept[packed] = True
    trace = pack.get("trace")
    outcome = np.full(len(items), O_BUDGET, dtype=np.int8)
    rank = np.zeros(len(items), dtype=np.int64)
    if isinstance(trace, Mapping) and traced(pack):
        for cand in trace["candidates"]:
            i = position[cand["id"]]
            outcome[i] = OUTCOMES.index(cand["decision"]["reason"][0])
            rank[i] = cand["rank"] or 0
        mode = trace["mode"]
        # never scored from the trace: an outcome that says otherwise than the items
        # (refused by pack_problem) is the items' plain one
        wrong = PACKED[outcome] != kept
        outcome[wrong & kept] = O_INCLUDED
        outcome[wrong & ~kept] = O_BUDGET
    else:
        outcome[kept] = O_INCLUDED
        outcome[kept & reference.anchored] = O_ANCHORED
        outcome[kept & reference.in_tail] = O_TAIL
        evictable = reference.evictable.tolist()
        scored = set(evictable)  # each set made once: a pack of 100k items stays linear
        order = [i for i in packed if i in scored]
        first = set(order)
        rest = [i for i in evictable[::-1] if i not in first]
        rank[order + rest] = np.arange(1, len(order) + len(rest) + 1)
        mode = "external"
    return dataclasses.replace(
        reference,
        outcome=outcome,
        rank=rank,
        mode=mode,
        pack_order=np.array(packed, dtype=np.int64),
        placement=None,
        cache=None,
    )
