"""The Clarity plugin's v2 entity scorer (OpenClaw, ``lib/v2/integration.js`` at
kbarbel640-del/openclaw 88bb3988), the scorer the plugin loads by default.

Clarity v2 scores *entities* (projects, plugins, tools, files, persons, decisions
found in user messages), not messages. How packproof maps them to items:

1. **The replay.** The candidates are replayed in ordinal order as the plugin's
   hooks see a conversation (:mod:`packproof.packer.clarity2`): a ``user`` item is a
   tracked user message (one document) at its ``turn``; an ``assistant`` item is an
   answer, whose text references the entities it names (one more mention each);
   ``tool`` and ``system`` items are not read, as the plugin reads neither. The
   request's prompt, when there is one, is then tracked at ``current_turn`` as the
   user message the plugin scores before it injects.
2. **An item's score** is the best score at ``current_turn`` among the entities its
   own text yields (extracted as a user message would be), 0 when it names none.
3. **Injection.** The entities the plugin would inject now (score >= 15, the first
   8 in score order) mark the items that name one: component ``injected`` is 1.
   The fill is packproof's, greedy by score; an injected entity scores at least as
   much as any entity not injected, so the items naming one come first.

Anchors are the shared policy's (anchored items are kept, not ranked); the plugin's
``/anchor`` bonus of 5 applies to no candidate.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..clarity2.extract import Entity, extract
from ..clarity2.tracker import _PREFIX, Tracker
from ..model import ROLES
from .base import Ranking, ScoringView, StrategyBase, param, register

__all__ = ["Clarity2", "keys_in"]

_USER = ROLES.index("user")
_ASSISTANT = ROLES.index("assistant")


def keys_in(texts: Sequence[str], keys: Collection[str]) -> list[set[str]]:
    """For each text, the ``keys`` that occur in it (``key in text``), found
    without testing every key against every text: a key's characters are all in
    the keys' alphabet, so it occurs within one run of those characters. Each
    distinct run is read once, as its substrings of the keys' lengths."""
    found: list[set[str]] = [set() for _ in texts]
    if "" in keys:
        for each in found:
            each.add("")
    by_length: dict[int, set[str]] = {}
    for key in keys:
        if key:
            by_length.setdefault(len(key), set()).add(key)
    if not by_length:
        return found
    alphabet = sorted({c for key in keys for c in key})
    run = re.compile("[" + "".join(re.escape(c) for c in alphabet) + "]+")
    where: dict[str, list[int]] = {}
    for k, text in enumerate(texts):
        for part in set(run.findall(text)):
            where.setdefault(part, []).append(k)
    lengths = sorted(by_length)
    for part, at in where.items():
        hits: set[str] = set()
        m = len(part)
        for size in lengths:
            if size > m:
                break
            wanted = by_length[size]
            hits.update(w for i in range(m - size + 1) if (w := part[i : i + size]) in wanted)
        if hits:
            for k in at:
                found[k] |= hits
    return found


@register
@dataclass(frozen=True)
class Clarity2(StrategyBase):
    """Clarity v2: each item scores as the best-scoring entity it names, with the
    plugin's ``min(100, 1.5 tf + 2.5 idf + 30 recency + 5 anchor + 100 mean
    relationship strength)`` at the default weights (see the module docstring)."""

    name: ClassVar[str] = "clarity2"
    formula: ClassVar[str] = (
        "max over named entities of min(100, tf*wtf/10 + idf*widf/10 + exp(-age/5)*wrec"
        " + anchor + 10*mean_strength*wrel)"
    )

    weight_tf: float = param(15.0, "weight of ln(1 + recent mentions), divided by 10")
    weight_idf: float = param(25.0, "weight of the smoothed idf, divided by 10")
    weight_recency: float = param(30.0, "weight of exp(-turns since last mention / 5)")
    weight_relationship: float = param(10.0, "weight of 10 x the mean relationship strength")

    def tracker(self, view: ScoringView) -> Tracker:
        """The plugin's tracker after the candidates and the prompt (see above)."""
        return self._replayed(view)[0]

    def _replayed(self, view: ScoringView) -> tuple[Tracker, dict[int, list[str]]]:
        """The tracker, and the entity ids of each tracked user item at a turn
        above 0 (those ``extract(text, 1)`` gives: every turn above 0 makes the
        same entities, only their mention turns differ).

        An answer references the scored entities whose id (less its prefix,
        lower-cased) occurs in it, in score order (:meth:`Tracker.referenced_in`).
        The entities are those of the user items before it, so the user items
        are extracted first and the ids each answer names are found at once
        (:func:`keys_in`); an answer then scores only the entities it names, not
        every entity tracked so far."""
        tracker = Tracker(
            weights={
                "tf": self.weight_tf,
                "idf": self.weight_idf,
                "recency": self.weight_recency,
                "relationship": self.weight_relationship,
            }
        )
        items = view.items
        texts, roles, turns = items.texts, items.roles.tolist(), items.turns.tolist()
        mentioned: dict[int, list[Entity]] = {
            i: extract(text, turns[i]) for i, text in enumerate(texts) if roles[i] == _USER and text
        }
        named: dict[str, list[str]] = {}  # each id once, under its key
        for id_ in dict.fromkeys(e.id for found in mentioned.values() for e in found):
            named.setdefault(_PREFIX.sub("", id_).lower(), []).append(id_)
        answers = [i for i, text in enumerate(texts) if roles[i] == _ASSISTANT and text]
        keys = keys_in([texts[i].lower() for i in answers], named)
        references = dict(zip(answers, keys, strict=True))
        created: dict[str, int] = {}  # tracker.entities' order
        own: dict[int, list[str]] = {}
        for i in range(len(texts)):
            tracker.current_turn = int(turns[i])
            found = mentioned.get(i)
            if found is not None:
                if turns[i] > 0:
                    own[i] = [e.id for e in found]
                for id_ in tracker.track_found(found):
                    created.setdefault(id_, len(created))
            elif i in references:
                entities = tracker.entities
                hit = {x for key in references[i] for x in named[key] if x in entities}
                scores = {x: tracker.score(entities[x]).total for x in hit}
                for entity_id in sorted(hit, key=lambda x: (-scores[x], created[x])):
                    tracker.track_reference(entity_id)
        tracker.current_turn = view.current_turn
        if view.prompt:
            tracker.track_mentions(view.prompt)
        return tracker, own

    def rank(self, view: ScoringView) -> Ranking:
        tracker, own = self._replayed(view)
        totals = {e.id: s.total for e, s in tracker.scored()}
        injected = {e.id for e, _ in tracker.injected()}
        n = len(view.items)
        scores = np.zeros(n)
        named = np.zeros(n)
        marked = np.zeros(n)
        for i, text in enumerate(view.items.texts):
            listed = own.get(i)
            if listed is None:
                listed = [e.id for e in extract(text, 1)]
            ids = [x for x in listed if x in totals]
            if ids:
                scores[i] = max(totals[x] for x in ids)
                named[i] = len(ids)
                marked[i] = float(any(x in injected for x in ids))
        return Ranking(scores=scores, components={"entities": named, "injected": marked})
