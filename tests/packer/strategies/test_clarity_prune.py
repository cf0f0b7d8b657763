"""clarity-prune: Clarity v1's pruner as a policy over the ``clarity`` scores, then
the token budget; hand cases per rule, and the plugin's recorded keep lists."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from packproof.packer import build_strategy, pack
from packproof.packer.errors import InputError
from packproof.packer.strategies import is_policy, is_policy_name

from ..helpers import msg, reasons, run

SHARED = Path(__file__).resolve().parents[4] / "shared/data/clarity/scorer-cases.jsonl.gz"


def item(item_id: str, mentions: int, last: int, tokens: int = 1, **extra: Any) -> dict[str, Any]:
    return msg(
        item_id,
        item_id,
        tokens=tokens,
        mentions=mentions,
        references=0,
        last_mention_turn=last,
        **extra,
    )


def receipt(result: Any) -> dict[str, Any]:
    out: dict[str, Any] = result.to_dict()["trace"]["extensions"]["clarity_pruner"]
    return out


def test_it_is_a_policy_with_clarity_s_scorer_parameters() -> None:
    strategy = build_strategy("clarity-prune", {})
    assert is_policy(strategy) and is_policy_name("clarity-prune")
    assert not is_policy_name("clarity")
    clarity = build_strategy("clarity", {}).params()
    assert clarity.items() <= strategy.params().items()
    assert strategy.params()["prune_threshold"] == 8.0
    assert strategy.params()["max_context_items"] == 50.0


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(InputError, match="unknown value"):
        build_strategy("clarity-prune", {"strict_mode": "yes"})


def test_anchored_is_kept_and_below_threshold_is_pruned_once_the_target_is_met() -> None:
    # current turn 20: stale items with 1 mention score ~0 (< pruneThreshold 8)
    items = [
        item("old-a", 1, 0),
        item("old-b", 1, 0),
        item("anchor", 0, 0, anchored=True),
        item("fresh", 1, 20),  # frequency 10 + recency 20 = 30: score_threshold
    ]
    result = run(items, 100, "clarity-prune", {"target_context_items": 2}, current_turn=20)
    why = reasons(result)
    assert why["anchor"] == ["anchored"] and why["fresh"] == ["within_budget"]
    r = receipt(result)
    assert r["decisions"]["anchor"]["reason"] == "anchored"
    assert r["decisions"]["fresh"]["reason"] == "score_threshold"
    # anchor and fresh already make the target of 2: no stale one is kept "under_target"
    assert why["old-a"] == why["old-b"] == ["below_threshold_target_reached"]
    assert r["keep"] == ["anchor", "fresh"] and r["prune"] == ["old-a", "old-b"]


def test_under_target_keeps_low_scores() -> None:
    items = [item("old-a", 1, 0), item("old-b", 1, 0)]
    result = run(items, 100, "clarity-prune", {"target_context_items": 1}, current_turn=20)
    r = receipt(result)
    assert r["decisions"]["old-a"]["reason"] == "under_target"
    assert reasons(result)["old-b"] == ["below_threshold_target_reached"]


def test_category_full_by_the_category_field_else_the_id() -> None:
    items = [
        item("a", 1, 20, category="x"),
        item("b", 1, 20, category="x"),
        item("tool:c", 1, 20),
        item("tool:d", 1, 20),
        item("e", 1, 20, category="y"),
    ]
    result = run(items, 100, "clarity-prune", {"max_items_per_category": 1}, current_turn=20)
    why = reasons(result)
    # equal scores: the walk keeps the conversation's order
    assert why["a"] == why["tool:c"] == why["e"] == ["within_budget"]
    assert why["b"] == why["tool:d"] == ["category_full"]
    assert receipt(result)["decisions"]["tool:c"]["category"] == "tool"


def test_min_mentions_keeps_before_the_category_limit() -> None:
    items = [item("a", 1, 20, category="x"), item("b", 3, 0, category="x")]
    result = run(items, 100, "clarity-prune", {"max_items_per_category": 0}, current_turn=20)
    why = reasons(result)
    assert why["b"] == ["within_budget"] and why["a"] == ["category_full"]
    assert receipt(result)["decisions"]["b"]["reason"] == "min_mentions"


def test_strict_mode_keeps_high_scores_and_essentials() -> None:
    items = [
        item("hi", 1, 20, category="x"),  # 30 >= strict threshold 25
        item("ess", 0, 0, category="x", importance="must_remember"),
        item("lo", 1, 19, category="x"),  # 10 + 15 = 25: strict_score too
    ]
    params = {"strict_mode": "on", "max_items_per_category": 0}
    r = receipt(run(items, 100, "clarity-prune", params, current_turn=20))
    assert r["decisions"]["hi"]["reason"] == "strict_score"
    assert r["decisions"]["lo"]["reason"] == "strict_score"
    assert r["decisions"]["ess"]["reason"] == "strict_essential"
    assert r["prune"] == []


def test_hard_cap_cuts_the_lowest_kept_but_never_an_anchor() -> None:
    items = [
        item("anchor", 0, 0, anchored=True),
        item("a", 3, 20),
        item("b", 2, 20),
        item("c", 1, 20),
    ]
    result = run(items, 100, "clarity-prune", {"max_context_items": 1}, current_turn=20)
    why = reasons(result)
    r = receipt(result)
    assert r["keep"] == ["anchor"]
    assert r["decisions"]["a"]["reason"] == "hard_cap(min_mentions)"
    assert why["a"] == why["b"] == why["c"] == ["hard_cap"]
    # max_context_items 0: the plugin cuts the anchor too; packproof keeps it
    result = run(items, 100, "clarity-prune", {"max_context_items": 0}, current_turn=20)
    assert receipt(result)["decisions"]["anchor"]["reason"] == "hard_cap(anchored)"
    assert reasons(result)["anchor"] == ["anchored"]


def test_the_budget_takes_the_kept_items_first_fit_in_the_pruner_s_order() -> None:
    items = [
        item("tail-ish", 0, 0, tokens=3, anchored=True),
        item("big", 3, 20, tokens=10),  # the best score, too big for what is left
        item("mid", 2, 20, tokens=4),
        item("small", 1, 20, tokens=3),
    ]
    result = run(items, 10, "clarity-prune", {}, current_turn=20)
    why = reasons(result)
    assert why["tail-ish"] == ["anchored"]
    assert why["big"] == ["budget_tokens_exceeded"]
    assert why["mid"] == why["small"] == ["within_budget"]
    trace = result.to_dict()["trace"]["budget"]
    assert trace["anchor_tokens"] == 3 and trace["remaining_tokens"] == 7
    assert receipt(result)["decisions"]["big"]["budget"] == "budget_tokens_exceeded"


def test_max_items_and_the_fresh_tail() -> None:
    items = [
        item("a", 3, 20),
        item("b", 2, 20),
        item("c", 1, 20),
        msg("last", "the newest turn", tokens=1),
    ]
    result = run(
        items, 100, "clarity-prune", {}, current_turn=20, fresh_tail={"count": 1}, max_items=2
    )
    why = reasons(result)
    assert why["last"] == ["protected_tail"]
    assert why["a"] == ["within_budget"] and why["b"] == why["c"] == ["max_items_reached"]
    assert "last" not in receipt(result)["decisions"]  # the pruner never sees the tail


# --- the plugin's recorded decisions (../shared) ------------------------------------------


def _shared_cases() -> list[dict[str, Any]]:
    if not SHARED.exists():
        return []
    tiers = {"essential", "high", "normal", "low"}
    out = []
    with gzip.open(SHARED, "rt", encoding="utf-8") as f:
        for line in f:
            case = json.loads(line)
            given = case["input"]
            context = given.get("existingContext") or []
            if case.get("request_omitted") or any(c.get("tier") not in tiers for c in context):
                continue
            out.append(case)
    return out[::40][:40]


def _request(case: dict[str, Any]) -> dict[str, Any] | None:
    """The case's request with the plugin's effective settings as parameters
    (None: one of them is no packproof parameter value)."""
    e = case["expected"]
    s, p = e["scorer_effective"], e["pruner_effective"]
    multipliers = p.get("tierMultipliers") or {}
    params = {
        "half_life": s["halfLife"],
        "recency_window": s["recencyWindow"],
        "recency_bonus": s["recencyBonus"],
        "reference_weight": s["referenceWeight"],
        "frequency_scale": s["frequencyScale"],
        "anchor_bonus": s["anchorBonus"],
        "prune_threshold": p["pruneThreshold"],
        "strict_mode_preserve_threshold": p["strictModePreserveThreshold"],
        "max_items_per_category": p["maxItemsPerCategory"],
        "target_context_items": p["targetContextItems"],
        "max_context_items": p["maxContextItems"],
        "min_mentions_preserve": p["minMentionsPreserve"],
        "use_tier_multipliers": "on" if p["useTierMultipliers"] else "off",
        "strict_mode": "on" if e["strict_mode"] else "off",
        **{"tier_" + t: multipliers.get(t) or 1.0 for t in ("essential", "high", "normal", "low")},
    }
    try:
        build_strategy("clarity-prune", params)
    except InputError:
        return None
    req = dict(case["request"])
    req["strategy"] = {"name": "clarity-prune", "params": params}
    return req


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/data/clarity is absent")
def test_it_keeps_what_the_plugin_keeps_on_shared_cases() -> None:
    checked = 0
    for case in _shared_cases():
        req = _request(case)
        if req is None:
            continue
        result = pack(req)
        expected = case["expected"]["pruner"]
        r = receipt(result)
        assert r["keep"] == expected["keep"], case["id"]
        assert r["prune"] == expected["prune"], case["id"]
        for ref, theirs in case["expected"]["items"].items():
            assert r["decisions"][ref]["reason"] == theirs["reason"], (case["id"], ref)
        # everything fits: packed = the plugin's keep list, plus any anchor it cut
        anchors = {it["id"] for it in req["items"] if it.get("anchored")}
        packed = {result.items.ids[i] for i in result.order}
        assert packed == set(expected["keep"]) | anchors, case["id"]
        checked += 1
    assert checked >= 20
