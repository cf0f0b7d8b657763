"""Clarity v2's entity extraction from one message (SCORER.md, "Extraction").

Ids are ``type:normalized``. Patterns run in a fixed order (projects: CamelCase,
hyphenated, tech suffixes; plugins; tools, then the singular "subagent"; files:
``memory/``, ``docs/``, ``UPPER.md``, generic ``.md``, ``.json``; persons;
decisions), each in text order, and every match is a mention: an id seen again in
the message gains one more. An entity created at turn 0 records no mention for
its first match. Every pair of entities is then related (0.3 both ways, project
contains file 0.5, plugin uses tool 0.7) before the semantic matcher merges
near-duplicates (:mod:`.matcher`). Regular expressions are ASCII, as JavaScript's
``\\b`` and ``\\w`` are.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from . import js
from .matcher import deduplicate

__all__ = ["Entity", "Relationship", "extract", "strip_injected"]

HISTORY = 20  # mention turns kept per entity


@dataclass
class Relationship:
    target: str
    type: str
    strength: float


@dataclass
class Entity:
    """One tracked entity: its mentions (``mention_count`` counts every one ever
    added; ``history`` keeps the last 20 turns) and relationships."""

    id: str
    type: str
    name: str
    normalized: str
    first_mention_turn: int
    last_mention_turn: int
    mention_count: int = 0
    history: list[int] = field(default_factory=list)
    relationships: list[Relationship] = field(default_factory=list)
    is_anchor: bool = False

    def add_mention(self, turn: int) -> None:
        self.mention_count += 1
        self.last_mention_turn = turn
        self.history.append(turn)
        if len(self.history) > HISTORY:
            del self.history[:-HISTORY]

    def relate(self, target: str, kind: str, strength: float) -> None:
        """A repeat of the same target and type adds a tenth, capped at 1."""
        for rel in self.relationships:
            if rel.target == target and rel.type == kind:
                rel.strength = min(1.0, rel.strength + strength * 0.1)
                return
        self.relationships.append(Relationship(target, kind, strength))

    def absorb(self, other: Entity) -> None:
        """The matcher's merge of ``other`` into this entity."""
        self.mention_count += other.mention_count
        self.history = sorted(self.history + other.history)[-HISTORY:]
        self.first_mention_turn = min(self.first_mention_turn, other.first_mention_turn)
        self.last_mention_turn = max(self.last_mention_turn, other.last_mention_turn)


_A = re.ASCII
_COMPOUNDS = frozenset(
    [
        "high-level",
        "well-known",
        "pre-flight",
        "so-called",
        "state-of-the-art",
        "end-to-end",
        "up-to-date",
        "built-in",
        "out-of-the-box",
        "long-term",
        "short-term",
        "real-time",
        "full-time",
        "part-time",
    ]
)
_STRIP = (
    re.compile(r"\[GUIDE[^\]]*\][\s\S]*?(?=\[|\Z)"),
    re.compile(r"\[CLARITY CONTEXT\][\s\S]*?(?=\[|Tracked mentions:|\Z)"),
    re.compile(r"\[REFLECT\][\s\S]*?(?=\[|Conversation info:|\Z)"),
    re.compile(r"\[LENS\][\s\S]*?(?=\[|Conversation info:|\Z)"),
    re.compile(rf"Conversation info \(untrusted metadata\):[{js.SPACE}]*```json[\s\S]*?```"),
)
_PLUGINS = ["clarity", "awareness", "continuity", "recover", "reflect", "guide", "sight"]
_TOOLS = [
    "sessions_spawn",
    "subagents",
    "memory_search",
    "memory_get",
    "recall",
    "reflect",
    "web_search",
    "web_fetch",
    "read",
    "write",
    "edit",
    "exec",
    "process",
    "nodes",
    "message",
    "canvas",
    "tts",
    "browser",
]
_PERSONS = ["Valerie", "Odyssey", "Cassandra", "Alice", "Bob"]

# (type, pattern, keep-this-match, normalize); in the order the plugin runs them.
_Rule = tuple[str, re.Pattern[str], Callable[[str], bool], Callable[[str], str]]


def _always(_: str) -> bool:
    return True


def _project(raw: str) -> str:
    return raw.lower().replace("-", "_")


def _file(raw: str) -> str:
    return re.sub(r"[/.\-]", "_", raw.lower())


_DECISION_KEEP = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def _decision(raw: str) -> str:
    return js.slice_units(js.lower_ascii_units(raw, _DECISION_KEEP), 30)


_RULES: tuple[_Rule, ...] = (
    ("project", re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)+\b", _A), _always, _project),
    ("project", re.compile(r"\b[a-z]+(?:-[a-z]+)+\b", _A), lambda m: m not in _COMPOUNDS, _project),
    (
        "project",
        re.compile(r"\b[a-z]{3,}(?:core|claw|stack|engine|router|board)\b", _A | re.I),
        _always,
        _project,
    ),
    ("plugin", re.compile(rf"\b(?:{'|'.join(_PLUGINS)})\b", _A | re.I), _always, str.lower),
    ("tool", re.compile(rf"\b(?:{'|'.join(_TOOLS)})\b", _A), _always, str.lower),
    ("tool", re.compile(r"\bsubagent\b", _A | re.I), _always, lambda _: "subagents"),
    ("file", re.compile(r"memory/[\w\-/]+\.md", _A | re.I), _always, _file),
    ("file", re.compile(r"docs/[\w\-/]+\.md", _A | re.I), _always, _file),
    ("file", re.compile(r"\b[A-Z_]+\.md\b", _A), _always, _file),
    ("file", re.compile(r"[\w\-/]+\.md", _A), lambda m: len(m) >= 5 and "http" not in m, _file),
    ("file", re.compile(r"\b[\w\-]+\.json\b", _A), _always, _file),
    ("person", re.compile(rf"\b(?:{'|'.join(_PERSONS)})\b", _A), _always, str.lower),
)
_DECISION = re.compile(
    rf"\b(decided to|we will|chosen|opted for|going with)[{js.SPACE}]+([^,.]+)", _A | re.I
)


def _display_name(kind: str, raw: str) -> str:
    """The entity's name, which the matcher's vectors read."""
    if kind == "project":
        rest = re.sub(r"[_-](\w)", lambda m: " " + m.group(1).upper(), raw[1:], flags=_A)
        return raw[:1].upper() + rest
    if kind == "plugin":
        return raw[:1].upper() + raw[1:].lower()
    if kind == "tool":
        return raw.lower()
    return raw


def strip_injected(text: str) -> str:
    """The message without the blocks other plugins inject."""
    for pattern in _STRIP:
        text = pattern.sub("", text)
    return text


def extract(text: str, turn: int) -> list[Entity]:
    """The entities of one message at ``turn``, in creation order, after merging
    (empty under 10 characters, before or after stripping injected blocks)."""
    if not text or js.length(text) < 10:
        return []
    text = strip_injected(text)
    if js.length(text) < 10:
        return []
    found: dict[str, Entity] = {}

    def add(kind: str, raw: str, normalized: str, name: str) -> None:
        key = f"{kind}:{normalized}"
        if key in found:
            found[key].add_mention(turn)
            return
        entity = Entity(key, kind, name, normalized, turn, turn)
        if turn > 0:
            entity.add_mention(turn)
        found[key] = entity

    for kind, pattern, keep, normalize in _RULES:
        for match in pattern.finditer(text):
            raw = match.group(0)
            if keep(raw):
                add(kind, raw, normalize(raw), _display_name(kind, raw))
    for match in _DECISION.finditer(text):
        said = js.slice_units(js.trim(match.group(2)), 50)
        add("decision", said, _decision(said), said)

    entities = list(found.values())
    for i, one in enumerate(entities):
        for two in entities[i + 1 :]:
            one.relate(two.id, "related", 0.3)
            two.relate(one.id, "related", 0.3)
            if one.type == "project" and two.type == "file":
                one.relate(two.id, "contains", 0.5)
            if two.type == "project" and one.type == "file":
                two.relate(one.id, "contains", 0.5)
            if one.type == "plugin" and two.type == "tool":
                one.relate(two.id, "uses", 0.7)
            if two.type == "plugin" and one.type == "tool":
                two.relate(one.id, "uses", 0.7)
    if len(entities) < 2:
        return entities
    remaining, related = deduplicate(entities)
    by_id = {e.id: e for e in remaining}
    for source, target, strength in related:
        if source in by_id:
            by_id[source].relate(target, "related", strength)
    return remaining
