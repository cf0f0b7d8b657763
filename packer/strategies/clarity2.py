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

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..clarity2.extract import extract
from ..clarity2.tracker import Tracker
from ..model import ROLES
from .base import Ranking, ScoringView, StrategyBase, param, register

__all__ = ["Clarity2"]

_USER = ROLES.index("user")
_ASSISTANT = ROLES.index("assistant")


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
        tracker = Tracker(
            weights={
                "tf": self.weight_tf,
                "idf": self.weight_idf,
                "recency": self.weight_recency,
                "relationship": self.weight_relationship,
            }
        )
        items = view.items
        for i, text in enumerate(items.texts):
            tracker.current_turn = int(items.turns[i])
            if items.roles[i] == _USER and text:
                tracker.track_mentions(text)
            elif items.roles[i] == _ASSISTANT and text:
                for entity_id in tracker.referenced_in(text):
                    tracker.track_reference(entity_id)
        tracker.current_turn = view.current_turn
        if view.prompt:
            tracker.track_mentions(view.prompt)
        return tracker

    def rank(self, view: ScoringView) -> Ranking:
        tracker = self.tracker(view)
        totals = {e.id: s.total for e, s in tracker.scored()}
        injected = {e.id for e, _ in tracker.injected()}
        n = len(view.items)
        scores = np.zeros(n)
        named = np.zeros(n)
        marked = np.zeros(n)
        for i, text in enumerate(view.items.texts):
            ids = [e.id for e in extract(text, 1) if e.id in totals]
            if ids:
                scores[i] = max(totals[x] for x in ids)
                named[i] = len(ids)
                marked[i] = float(any(x in injected for x in ids))
        return Ranking(scores=scores, components={"entities": named, "injected": marked})
