"""clarity2 replays a conversation as the plugin's hooks do, whichever way it finds
what an answer references: the tracker (entities, mentions, references and
their order) and the ranking equal those of the replay that asks
``Tracker.referenced_in`` at every answer (the strategy's former code, kept here
as the reference), on drawn conversations (any roles, turns out of order or 0,
ids that are substrings of others). ``keys_in`` is ``key in text``."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from packproof.packer.clarity2.extract import extract
from packproof.packer.clarity2.tracker import Tracker
from packproof.packer.model import ROLES
from packproof.packer.request import parse_request
from packproof.packer.strategies.base import Ranking, ScoringView
from packproof.packer.strategies.clarity2 import Clarity2, keys_in

_USER, _ASSISTANT = ROLES.index("user"), ROLES.index("assistant")

# Words that make entities of every type, words that contain their ids, and filler.
WORDS = (
    "PackProof",
    "packproof",
    "ContextPack",
    "context-pack",
    "pack",
    "lossless-claw",
    "lossless_claw",
    "openclaw",
    "clarity",
    "Reflect",
    "read",
    "bread",
    "exec",
    "subagent",
    "memory/notes.md",
    "memory_notes_md",
    "README.md",
    "readme_md",
    "config.json",
    "Alice",
    "alice",
    "person:alice",
    "Bob",
    "decided to ship it",
    "we will test",
    "decision:ship_it",
    "the",
    "and",
    "fast-track",
    "well-known",
    "İ",
    "\u212a",
)


def _replay_asking_every_answer(strategy: Clarity2, view: ScoringView) -> tuple[Tracker, Ranking]:
    """The tracker and ranking as clarity2 made them before (referenced_in per answer)."""
    tracker = Tracker(
        weights={
            "tf": strategy.weight_tf,
            "idf": strategy.weight_idf,
            "recency": strategy.weight_recency,
            "relationship": strategy.weight_relationship,
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
    totals = {e.id: s.total for e, s in tracker.scored()}
    injected = {e.id for e, _ in tracker.injected()}
    n = len(items)
    scores, named, marked = np.zeros(n), np.zeros(n), np.zeros(n)
    for i, text in enumerate(items.texts):
        ids = [e.id for e in extract(text, 1) if e.id in totals]
        if ids:
            scores[i] = max(totals[x] for x in ids)
            named[i] = len(ids)
            marked[i] = float(any(x in injected for x in ids))
    return tracker, Ranking(scores=scores, components={"entities": named, "injected": marked})


def _state(tracker: Tracker) -> list[Any]:
    entities = [
        (
            e.id,
            e.mention_count,
            list(e.history),
            e.first_mention_turn,
            e.last_mention_turn,
            [(r.target, r.type, r.strength) for r in e.relationships],
            e.is_anchor,
        )
        for e in tracker.entities.values()
    ]
    return [
        entities,
        list(tracker.references.items()),
        list(tracker.document_frequency.items()),
        tracker.documents,
        tracker.current_turn,
    ]


TEXT = st.lists(st.sampled_from(WORDS), max_size=9).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(TEXT, st.sampled_from([*ROLES, "user", "assistant"]), st.integers(0, 6)),
        min_size=1,
        max_size=24,
    ),
    prompt=st.one_of(st.none(), TEXT),
    current_turn=st.integers(0, 30),
    weights=st.fixed_dictionaries({}, optional={"weight_tf": st.sampled_from([0.0, 15.0, 40.0])}),
)
def test_the_replay_is_the_one_that_asks_every_answer(
    rows: list[tuple[str, str, int]],
    prompt: str | None,
    current_turn: int,
    weights: dict[str, float],
) -> None:
    items = [
        {"id": f"m{k}", "text": text, "role": role, "turn": turn, "tokens": 1}
        for k, (text, role, turn) in enumerate(rows)
    ]
    req = parse_request({"items": items, "budget_tokens": 10, "current_turn": current_turn})
    view = ScoringView(req.items, prompt, req.current_turn)
    strategy = Clarity2(**weights)
    want_tracker, want = _replay_asking_every_answer(strategy, view)
    assert _state(strategy.tracker(view)) == _state(want_tracker)
    got = strategy.rank(view)
    assert got.scores is not None and want.scores is not None
    assert got.scores.tobytes() == want.scores.tobytes()
    assert list(got.components) == list(want.components)
    for name, column in want.components.items():
        assert got.components[name].tobytes() == column.tobytes(), name


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.text(alphabet="ab:_-. İ\u212a", max_size=14), max_size=6),
    keys=st.lists(st.text(alphabet="ab:_-.i\u0307", max_size=4), max_size=8),
)
def test_keys_in_is_key_in_text(texts: list[str], keys: list[str]) -> None:
    lowered = [t.lower() for t in texts]
    want = [{k for k in keys if k in text} for text in lowered]
    assert keys_in(lowered, set(keys)) == want
