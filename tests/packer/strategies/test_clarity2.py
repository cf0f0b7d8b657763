"""clarity2: items score as the best Clarity v2 entity they name; injected entities
mark their items (the mapping in packer/strategies/clarity2.py)."""

from __future__ import annotations

import math

import pytest

from packproof.packer.clarity2.tracker import Conversation, replay

from ..helpers import msg, run


def ranked(
    items: list[dict[str, object]], current_turn: int, **request: object
) -> dict[str, tuple[float, float]]:
    result = run(items, 1, "clarity2", current_turn=current_turn, **request)
    assert result.ranking.scores is not None
    ids = [result.items.ids[i] for i in result.evictable]
    injected = result.ranking.components["injected"].tolist()
    return dict(zip(ids, zip(result.ranking.scores.tolist(), injected, strict=True), strict=True))


def test_an_item_scores_as_its_best_entity_and_naming_none_scores_zero() -> None:
    items = [
        msg("old", "we ship ClaraCore next week", turn=1, tokens=1),
        msg("chat", "lunch is at noon today", role="assistant", turn=2, tokens=1),
    ]
    scores = ranked(items, 4)
    # 2 mentions at turn 1, 1 document of 1: 1.5 ln 3 + 2.5 (ln(2/2) + 1) + 30 exp(-3/5)
    want = 1.5 * math.log(3) + 2.5 + 30 * math.exp(-0.6)
    assert scores["old"] == (pytest.approx(want, abs=1e-12), 1.0)
    assert scores["chat"] == (0.0, 0.0)


def test_the_scores_are_the_replayed_trackers() -> None:
    texts = ["awareness calls web_fetch for pages", "then web_search once more please"]
    items = [msg(f"u{i}", t, turn=i + 1, tokens=1) for i, t in enumerate(texts)]
    items.append(msg("answer", "web_search found it", role="assistant", turn=2, tokens=1))
    turns = [
        {"user": "", "assistant": ""},
        {"user": texts[0], "assistant": ""},
        {"user": texts[1], "assistant": "web_search found it"},
    ]
    tracker, _ = replay(Conversation.from_input({"turns": turns}))
    tracker.current_turn = 5
    want = {e.id: s.total for e, s in tracker.scored()}
    scores = ranked(items, 5)
    assert scores["u0"][0] == want["plugin:awareness"]
    assert scores["u1"][0] == want["tool:web_search"]
    assert scores["answer"][0] == want["tool:web_search"]


def test_the_prompt_is_tracked_as_the_current_user_message() -> None:
    items = [
        msg("a", "we ship MoltBot next week", turn=1, tokens=1),
        msg("pad", "nothing here", turn=1, tokens=1),
    ]
    without = ranked(items, 30)["a"]
    with_prompt = ranked(items, 30, prompt="how is MoltBot doing?")["a"]
    assert without[1] == 0.0  # exp(-29/5) is long gone: below 15, not injected
    assert with_prompt[0] > without[0] and with_prompt[1] == 1.0


def test_weights_are_parameters() -> None:
    items = [
        msg("a", "we ship MoltBot next week", turn=1, tokens=1),
        msg("pad", "nothing", tokens=1),
    ]
    result = run(
        items, 1, "clarity2", {"weight_recency": 0, "weight_tf": 0, "weight_idf": 0}, current_turn=1
    )
    assert result.ranking.scores is not None
    assert result.ranking.scores.tolist()[0] == 0.0
