"""Clarity v2 conformance: a recorded conversation replayed through
:mod:`packproof.packer.clarity2` must give the plugin's mentions, injections and
references at every turn, and its entities' scores, parts and counts at the end.

The ``clarity`` peer (:mod:`.clarity`) hands the v2 cases of
``../shared/data/clarity/v2-cases.jsonl.gz`` here. Scores agree to 1e-9 (the data's
README: V8's ``Math.log`` and ``Math.exp`` can be one ulp from Python's); ids, orders,
counts and histories exactly. The pruner's keep and prune lists are not checked here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from packproof.packer.clarity2.tracker import Conversation, Tracker, legacy_scores, replay
from packproof.packer.clarity_pruner import PrunerItem, PrunerSettings, category_of, v1_prune
from packproof.packer.errors import InputError

from .cases import Difference

__all__ = ["TOLERANCE", "check", "diagnose", "is_v2", "pruner_outcome"]

TOLERANCE = 1e-9


def is_v2(case: Mapping[str, Any]) -> bool:
    """Whether ``case`` is a recorded v2 conversation (``input.turns``)."""
    data = case.get("input")
    return case.get("kind") == "v2" or (isinstance(data, Mapping) and "turns" in data)


def _conversation(case: Mapping[str, Any]) -> Conversation:
    try:
        return Conversation.from_input(case["input"])
    except (KeyError, TypeError, AttributeError) as exc:
        raise InputError(
            "/input/turns", "a v2 case needs input.turns", expected="a list of turns", found=exc
        ) from exc


def _expected(case: Mapping[str, Any]) -> Mapping[str, Any]:
    expected = case.get("expected")
    if not isinstance(expected, Mapping) or "turns" not in expected:
        raise InputError(
            "/expected/turns", "a v2 case needs expected.turns", expected="a list of turns"
        )
    return expected


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, float | int) and isinstance(b, float | int):
        return math.isclose(a, b, rel_tol=0, abs_tol=TOLERANCE)
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _entity_row(tracker: Tracker, entity_id: str) -> dict[str, Any]:
    entity = tracker.entities[entity_id]
    s = tracker.score(entity)
    return {
        "total_score": s.total,
        "uncapped": s.uncapped,
        "components": {
            "tf": s.tf,
            "idf": s.idf,
            "recency": s.recency,
            "anchor": s.anchor,
            "relationship_boost": s.relationship_boost,
            "weighted": s.weighted,
        },
        "mention_count": entity.mention_count,
        "mention_history": entity.history,
        "last_mention_turn": entity.last_mention_turn,
        "is_anchor": entity.is_anchor,
        "relationships": len(entity.relationships),
        "document_frequency": tracker.document_frequency.get(entity.normalized, 0),
    }


def pruner_outcome(tracker: Tracker, data: Mapping[str, Any]) -> dict[str, Any]:
    """``RelevancePruner.evaluate`` on the tracker's legacy scores, as the case records it."""
    scored = [PrunerItem(e.id, s.total, e.mention_count, e.is_anchor) for e, s in tracker.scored()]
    settings = PrunerSettings.of(data.get("pruning") or {}, "config")
    result = v1_prune(scored, settings, bool(data.get("strictMode")))
    walked_keep = [
        d for d in result.decisions.values() if d.keep or d.reason.startswith("hard_cap(")
    ]
    by_category: dict[str, int] = {}
    for d in sorted(walked_keep, key=lambda d: d.position):
        by_category[d.category] = by_category.get(d.category, 0) + 1
    kept_total = 0.0
    for ref in result.keep:
        kept_total += result.decisions[ref].adjusted_score
    return {
        "keep": result.keep,
        "prune": result.prune,
        "categories": {item.id: category_of(item.id) for item in scored},
        "stats": {
            "totalEvaluated": len(scored),
            "keeping": len(result.keep),
            "pruning": len(result.prune),
            "anchoredKept": sum(1 for item in scored if item.anchored and item.id in result.keep),
            "byCategory": by_category,
            "averageKeptScore": kept_total / len(result.keep) if result.keep else 0,
        },
    }


def check(case: Mapping[str, Any]) -> list[Difference]:
    """Every way the replay differs from the recording (empty when it matches)."""
    expected = _expected(case)
    tracker, records = replay(_conversation(case))
    out: list[Difference] = []

    def compare(what: str, want: Any, got: Any) -> None:
        if not _close(want, got):
            out.append(Difference(what, want, got))

    want_turns = expected["turns"]
    compare("clarity2: turns", len(want_turns), len(records))
    for want, got in zip(want_turns, records, strict=False):
        at = f"clarity2: turn {want.get('turn')}"
        compare(f"{at} mentioned", list(want.get("mentioned", [])), list(got.mentioned))
        injected = [{"id": i.id, "score": i.score, "shown": i.shown} for i in got.injected]
        compare(f"{at} injected", list(want.get("injected", [])), injected)
        compare(f"{at} referenced", want.get("referenced"), got.referenced and list(got.referenced))
    compare("clarity2: total_documents", expected.get("total_documents"), tracker.documents)
    compare("clarity2: current_turn", expected.get("current_turn"), tracker.current_turn)
    want_order = [e["id"] for e in expected.get("entities", [])]
    compare("clarity2: entity order", want_order, [e.id for e, _ in tracker.scored()])
    for want in expected.get("entities", []):
        if want["id"] not in tracker.entities:
            continue
        row = _entity_row(tracker, want["id"])
        for key, value in row.items():
            compare(f"clarity2: {want['id']} {key}", want.get(key), value)
    compare("clarity2: legacy_scores", expected.get("legacy_scores"), legacy_scores(tracker))
    compare(
        "clarity2: injected_now",
        expected.get("injected_now"),
        [e.id for e, _ in tracker.injected()],
    )
    if "pruner" in expected:
        got_pruner = pruner_outcome(tracker, case["input"])
        for key, value in got_pruner.items():
            compare(f"clarity2: pruner {key}", expected["pruner"].get(key), value)
    return out


def diagnose(case: Mapping[str, Any]) -> str:
    """The inputs behind the first differing turn: its texts and the weights."""
    differences = check(case)
    if not differences:
        return "matches"
    conversation = _conversation(case)
    first = differences[0].what
    for index, turn in enumerate(conversation.turns):
        if first.startswith(f"clarity2: turn {index} "):
            return (
                f"turn {index}: user {turn.user!r}; assistant {turn.assistant!r}; "
                f"anchors {list(turn.anchor)}; weights {dict(conversation.weights)}"
            )
    return f"{len(conversation.turns)} turns; weights {dict(conversation.weights)}"
