"""The openclaw-mem strategy: its parameters as values, and the hook it provides."""

from __future__ import annotations

import pytest

from packproof.packer import InputError, build_strategy, parse_request
from packproof.packer.pipeline import decide, rank, reserve
from packproof.packer.strategies import is_policy, is_policy_name
from packproof.packer.strategies.openclaw_mem import OpenclawMem


def test_defaults_are_openclaw_mems_built_in_ones() -> None:
    strategy = build_strategy("openclaw-mem", {})
    assert isinstance(strategy, OpenclawMem)
    assert strategy.params() == {
        "decision_min": 1,
        "event_max_ratio": 0.4,
        "importance_factor": "on",
        "include_archived": "off",
        "limit": 12,
        "preference_min": 1,
        "profile": "composite",
        "quotas": "on",
        "recency_factor": "on",
        "relevance_factor": "on",
        "state_factor": "on",
        "tail_budget": "fixed",
        "tail_budget_tokens": 0,
        "tail_max_items": 4,
        "use_factor": "on",
    }


def test_integer_parameters_stay_integers_in_the_spec() -> None:
    strategy = build_strategy("openclaw-mem", {"limit": 5.0, "tail_max_items": -2})
    assert strategy.label() == "openclaw-mem(limit=5,tail_max_items=-2)"
    assert (
        strategy.spec()["params"]["limit"] == 5 and type(strategy.spec()["params"]["limit"]) is int
    )


@pytest.mark.parametrize(
    ("params", "where", "message"),
    [
        ({"limit": 2.5}, "/strategy/params/limit", "wrong type (expected an integer"),
        ({"limit": 0}, "/strategy/params/limit", "out of range (expected an integer >= 1"),
        ({"tail_budget_tokens": -1}, "/strategy/params/tail_budget_tokens", "out of range"),
        ({"profile": "bm25"}, "/strategy/params/profile", "unknown value"),
        ({"quotas": True}, "/strategy/params/quotas", "unknown value"),
    ],
)
def test_bad_parameters_name_their_pointer(params: dict, where: str, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(InputError) as info:
        build_strategy("openclaw-mem", params)
    assert info.value.where == where and message in str(info.value)


def test_it_is_the_one_policy_of_the_registry() -> None:
    assert is_policy(build_strategy("openclaw-mem", {}))
    assert not is_policy(build_strategy("bm25", {}))
    assert is_policy_name("openclaw-mem") and not is_policy_name("hybrid")
    assert not is_policy_name("no-such-strategy")


def test_the_pipeline_hands_it_the_reservation_once_for_every_budget() -> None:
    """rank() is empty for a policy; decide() asks the policy, at any budget, from
    one reservation (as the eval runner reserves once per turn)."""
    request = {
        "items": [
            {"id": "obs:1", "text": "deploy notes", "kind": "memory"},
            {"id": "obs:2", "text": "deploy checklist for friday", "kind": "memory"},
            {"id": "tail:1", "text": "deploy?"},
        ],
        "prompt": "deploy",
        "budget_tokens": 100,
        "fresh_tail": {"count": 1},
        "strategy": "openclaw-mem(tail_budget_tokens=4)",
    }
    base = parse_request(request)
    reserved = reserve(base)
    ranked = rank(base, reserved)
    assert ranked.ranking.scores is None and len(ranked.order) == 0
    packs = {}
    for budget in (3, 6, 100):
        req = parse_request({**request, "budget_tokens": budget}, items=base.items)
        result = decide(req, reserved, ranked)
        packs[budget] = [base.items.ids[i] for i in result.order]
        assert result.policy is not None and result.mode == "ranked"
    assert packs == {3: ["tail:1"], 6: ["tail:1"], 100: ["obs:1", "obs:2", "tail:1"]}


def test_tail_budget_fit_reserves_what_the_tail_lines_take() -> None:
    """With the default tail budget (0) openclaw-mem drops its tail lines
    (max_items_reached); ``tail_budget=fit`` reserves their own 2 + 3 tokens
    (chars4), as a caller passing --tail-budget-tokens 5 would, so both are kept
    and the 4-token record fills the 4 tokens left of 9; at 8 the record no
    longer fits beside the reserved 5."""
    request = {
        "token_counter": "chars4",
        "items": [
            {"id": "obs:1", "text": "deploy on friday", "kind": "memory"},
            {"id": "tail:1", "text": "ok then"},
            {"id": "tail:2", "text": "deploy when?"},
        ],
        "prompt": "deploy",
        "budget_tokens": 9,
        "fresh_tail": {"count": 2},
    }

    def packed(spec: str, budget: int) -> list[str]:
        req = parse_request({**request, "strategy": spec, "budget_tokens": budget})
        result = decide(req, reserve(req), rank(req, reserve(req)))
        return [req.items.ids[i] for i in result.order]

    assert packed("openclaw-mem", 9) == ["obs:1"]
    assert packed("openclaw-mem(tail_budget=fit)", 9) == ["obs:1", "tail:1", "tail:2"]
    assert packed("openclaw-mem(tail_budget=fit)", 8) == ["tail:1", "tail:2"]
