"""Clarity v2's tracker and scorer, and a conversation replayed as the plugin's hooks
drive it (SCORER.md, "Tracking", "Score" and "How index.js uses it").

Per entity at the current turn, with the weights ``w`` (constants.js
``DEFAULT_WEIGHTS``, replaced key by key by a ``weights`` key in ``scoring``):

- tf      = ln(1 + #history turns within 10 of the entity's own last mention)
- idf     = ln((documents + 1) / (df + 1)) + 1, a 0 or missing df taken as 1
- recency = exp(-(current turn - last mention turn) / 5)
- anchor  = 5 when anchored (never weighted)
- boost   = 10 * mean strength of the entity's relationships (0 without any)
- total   = min(100, tf*w.tf/10 + idf*w.idf/10 + recency*w.recency + anchor
                     + boost*w.relationship), summed in that order

``ln`` and ``exp`` are V8's (:mod:`.v8math`), so that ties fall as in the plugin.
Scores sort descending, ties in creation order. Each turn: a non-empty user message
is tracked (one document), the entities scoring >= 15 are injected (the first 8);
a non-empty answer references every scored entity whose id, less a ``project:``,
``tool:``, ``file:`` or ``keyword:`` prefix, occurs in it lower-cased (one more
mention each); the turn's anchors are set; the turn advances.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from . import v8math
from .extract import Entity, extract

__all__ = [
    "DEFAULT_WEIGHTS",
    "INJECT_LIMIT",
    "INJECT_MIN",
    "Conversation",
    "Score",
    "Tracker",
    "TurnRecord",
    "replay",
    "score_entity",
]

DEFAULT_WEIGHTS: Mapping[str, float] = {"tf": 15, "idf": 25, "recency": 30, "relationship": 10}
ANCHOR_BONUS = 5.0
TF_WINDOW = 10
RECENCY_TURNS = 5  # the plugin's "half-life": an e-folding time
CAP = 100.0
INJECT_MIN = 15.0
INJECT_LIMIT = 8
_PREFIX = re.compile(r"^(?:project|tool|file|keyword):")


class Score(NamedTuple):
    """One entity's score and its parts (``weighted`` in summation order)."""

    tf: float
    idf: float
    recency: float
    anchor: float
    relationship_boost: float
    weighted: dict[str, float]
    uncapped: float
    total: float


def score_entity(
    entity: Entity,
    current_turn: int,
    document_frequency: int,
    documents: int,
    weights: Mapping[str, float],
) -> Score:
    """``EntityScorer.scoreEntity`` of integration.js (see the module docstring)."""
    last = entity.last_mention_turn
    recent = sum(1 for t in entity.history if last - t <= TF_WINDOW)
    tf = v8math.log(1 + recent)
    df = document_frequency or 1
    idf = v8math.log((documents + 1) / (df + 1)) + 1
    recency = v8math.exp(-(current_turn - last) / RECENCY_TURNS)
    anchor = ANCHOR_BONUS if entity.is_anchor else 0.0
    boost = 0.0
    if entity.relationships:
        total_strength = 0.0
        for rel in entity.relationships:
            total_strength += rel.strength
        boost = total_strength / len(entity.relationships) * 10
    weighted = {
        "tf": tf * weights["tf"] / 10,
        "idf": idf * weights["idf"] / 10,
        "recency": recency * weights["recency"],
        "anchor": anchor,
        "relationship": boost * weights["relationship"],
    }
    uncapped = (
        weighted["tf"]
        + weighted["idf"]
        + weighted["recency"]
        + weighted["anchor"]
        + weighted["relationship"]
    )
    return Score(tf, idf, recency, anchor, boost, weighted, uncapped, min(CAP, uncapped))


@dataclass
class Tracker:
    """``V2ContextTracker``: entities in creation order, document frequencies by
    normalized name, reference counts, the current turn."""

    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    entities: dict[str, Entity] = field(default_factory=dict)
    document_frequency: dict[str, int] = field(default_factory=dict)
    documents: int = 0
    references: dict[str, int] = field(default_factory=dict)
    current_turn: int = 0

    def track_mentions(self, text: str) -> list[str]:
        """One user message: its entities merged in, counted as one document."""
        return self.track_found(extract(text, self.current_turn))

    def track_found(self, found: list[Entity]) -> list[str]:
        """:meth:`track_mentions` of a message whose entities ``found`` were
        extracted beforehand, at the current turn (and not tracked yet)."""
        for entity in found:
            known = self.entities.get(entity.id)
            if known is None:
                self.entities[entity.id] = entity
                continue
            for turn in entity.history:
                if turn not in known.history:
                    known.add_mention(turn)
        self.documents += 1
        for entity in found:
            name = entity.normalized
            self.document_frequency[name] = self.document_frequency.get(name, 0) + 1
        return [e.id for e in found]

    def score(self, entity: Entity) -> Score:
        df = self.document_frequency.get(entity.normalized, 0)
        return score_entity(entity, self.current_turn, df, self.documents, self.weights)

    def scored(self) -> list[tuple[Entity, Score]]:
        """Every entity with its score, highest first (ties: creation order)."""
        pairs = [(e, self.score(e)) for e in self.entities.values()]
        return sorted(pairs, key=lambda p: -p[1].total)

    def injected(self) -> list[tuple[Entity, Score]]:
        """What ``before_agent_start`` injects: score >= 15, the first 8."""
        return [p for p in self.scored() if p[1].total >= INJECT_MIN][:INJECT_LIMIT]

    def track_reference(self, entity_id: str) -> None:
        self.references[entity_id] = self.references.get(entity_id, 0) + 1
        entity = self.entities.get(entity_id)
        if entity is not None:
            entity.add_mention(self.current_turn)

    def referenced_in(self, answer: str) -> list[str]:
        """The scored ids ``agent_end`` finds in ``answer`` (score order)."""
        lowered = answer.lower()
        return [e.id for e, _ in self.scored() if _PREFIX.sub("", e.id).lower() in lowered]

    def anchor(self, entity_id: str) -> None:
        entity = self.entities.get(entity_id)
        if entity is not None:
            entity.is_anchor = True


def js_round(x: float) -> int:
    """JavaScript's ``Math.round``: halves up."""
    return math.floor(x + 0.5)


@dataclass(frozen=True)
class Injection:
    id: str
    score: float
    shown: int


@dataclass(frozen=True)
class TurnRecord:
    """One turn of a replay; ``referenced`` is None when the answer was empty."""

    turn: int
    mentioned: tuple[str, ...]
    injected: tuple[Injection, ...]
    referenced: tuple[str, ...] | None


@dataclass(frozen=True)
class Turn:
    user: str
    assistant: str
    anchor: tuple[str, ...] = ()


@dataclass(frozen=True)
class Conversation:
    """A conversation as the v2 cases hold it, with the scorer's weights."""

    turns: tuple[Turn, ...]
    weights: Mapping[str, float]

    @classmethod
    def from_input(cls, data: Mapping[str, Any]) -> Conversation:
        """From a case's ``input`` (``turns``; ``scoring.weights`` when given)."""
        turns = tuple(
            Turn(t.get("user") or "", t.get("assistant") or "", tuple(t.get("anchor") or ()))
            for t in data["turns"]
        )
        given = (data.get("scoring") or {}).get("weights") or {}
        return cls(turns, {**DEFAULT_WEIGHTS, **given})


def replay(conversation: Conversation) -> tuple[Tracker, list[TurnRecord]]:
    """The conversation through the plugin's hooks; the tracker after the last turn."""
    tracker = Tracker(weights=conversation.weights)
    records: list[TurnRecord] = []
    for turn in conversation.turns:
        mentioned: list[str] = []
        injected: tuple[Injection, ...] = ()
        if turn.user:
            mentioned = tracker.track_mentions(turn.user)
            injected = tuple(
                Injection(e.id, s.total, js_round(s.total)) for e, s in tracker.injected()
            )
        referenced: list[str] | None = None
        if turn.assistant:
            referenced = tracker.referenced_in(turn.assistant)
            for entity_id in referenced:
                tracker.track_reference(entity_id)
        records.append(
            TurnRecord(
                tracker.current_turn,
                tuple(mentioned),
                injected,
                None if referenced is None else tuple(referenced),
            )
        )
        for entity_id in turn.anchor:
            tracker.anchor(entity_id)
        tracker.current_turn += 1
    return tracker, records


def legacy_scores(tracker: Tracker) -> list[dict[str, Any]]:
    """``getScoredItems()``: what index.js and the pruner read."""
    return [
        {
            "id": e.id,
            "final_score": s.total,
            "breakdown": {
                "frequency": js_round(s.tf * s.idf),
                "recency": js_round(s.recency * 30),
                "utility": tracker.references.get(e.id, 0),
            },
            "metadata": {
                "mentionCount": e.mention_count,
                "anchored": e.is_anchor,
                "turnsSinceLastMention": tracker.current_turn - e.last_mention_turn,
            },
        }
        for e, s in tracker.scored()
    ]
