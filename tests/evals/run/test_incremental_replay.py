"""A replay packed incrementally (each step a window of one parsed table, sharing
its term statistics, citation verdicts and position index) packs every step
exactly as packing that step's whole request from scratch does: the same pack
and trace bytes, the same records, under every registered strategy, plain and
cache-aware (whose previous pack is the chain's last step pack, as the runner
feeds it)."""

from __future__ import annotations

import dataclasses
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packproof.evals.metrics.answers import Answers
from packproof.evals.metrics.cell import cell_metrics, oracle_recall
from packproof.evals.run import replay, runner
from packproof.evals.run.chains import cache_state
from packproof.evals.run.packers import Configured
from packproof.evals.run.replay import Chains, previous_pack
from packproof.evals.run.runner import Task, run_task
from packproof.evals.scenarios.format import Scenario, Turn, kept_reasons
from packproof.packer import termstats
from packproof.packer.model import IMPORTANCE, KINDS, ROLES, TRUST
from packproof.packer.pipeline import PackResult, pack
from packproof.packer.request import parse_request
from packproof.packer.strategies import REGISTRY, is_policy_name

SPECS = [
    *sorted(REGISTRY),
    # a policy decides the whole pack itself: it is never cache-aware
    *(
        f"{name}+cache(low_water=0.4,recall_share=0.3)"
        for name in sorted(REGISTRY)
        if not is_policy_name(name)
    ),
    "bm25+cache(low_water=0.5,recall_share=0.3,recall_depth=4,carry_recall=false)",
]
WORDS = [
    "cache",
    "caching",
    "deploy",
    "the",
    "you",
    "a",
    "x1",
    "v3.1",
    "snake_case",
    "thank-you",
    "Café",
    "naïve",
    "数据库",
    "迁移",
    "😀",
    "İstanbul",
    "ß",
    "\n",
]
TEXT = st.lists(st.sampled_from(WORDS), max_size=7).map(" ".join)


@st.composite
def item(draw: st.DrawFn, i: int) -> dict[str, Any]:
    out: dict[str, Any] = {"id": f"m{i}", "text": draw(TEXT), "role": draw(st.sampled_from(ROLES))}
    if draw(st.booleans()):
        out["tokens"] = draw(st.integers(0, 60))
    if draw(st.integers(0, 4)) == 0:
        out["kind"] = draw(st.sampled_from(KINDS))
    if draw(st.integers(0, 5)) == 0:
        out["anchored"] = True
    if draw(st.integers(0, 3)) == 0:
        out["trust"] = draw(st.sampled_from(TRUST))
    if draw(st.integers(0, 3)) == 0:
        out["importance"] = draw(st.sampled_from(IMPORTANCE))
    if draw(st.integers(0, 3)) == 0:
        out["category"] = draw(st.sampled_from(["a", "b"]))
    return out


@st.composite
def replays(draw: st.DrawFn) -> Scenario:
    n = draw(st.integers(1, 9))
    items = [draw(item(i)) for i in range(n)]
    exclude = draw(st.integers(0, 3)) == 0
    # every step packs its newest item (a replay's rule): a first message and a
    # fresh tail, and nothing the trust policy drops
    items[0]["kind"] = "message"
    for it in items:
        if it.get("trust") == "quarantined" and (exclude or it is items[0]):
            del it["trust"]
    if draw(st.integers(0, 5)) == 0:  # ordinals out of list order: turns parsed alone
        for i, it in enumerate(items):
            it["ordinal"] = 2 * (n - i)
    base: dict[str, Any] = {
        "budget_tokens": draw(st.integers(1, 200)),
        "token_counter": draw(st.sampled_from(["lcm", "chars4"])),
        "fresh_tail": {"count": draw(st.integers(1, 3))},
    }
    if draw(st.booleans()):
        base["fresh_tail"]["max_tokens"] = draw(st.integers(0, 80))
    if draw(st.integers(0, 3)) == 0:
        base["max_items"] = draw(st.integers(1, 6))
    if draw(st.integers(0, 3)) == 0:
        base["category_caps"] = {"a": draw(st.integers(0, 2))}
    if exclude:
        base["trust_policy"] = "exclude_quarantined"
    turns, t = [], 0.0
    probes = draw(st.integers(0, 2))
    for k in range(n + probes):
        t += draw(st.sampled_from([0.0, 30.0, 400.0, 4000.0])) if k else 0.0
        upto = min(k + 1, n)
        prompt = draw(st.one_of(st.none(), TEXT, st.just(items[upto - 1]["text"])))
        request = {**base, "items": items[:upto], "prompt": prompt}
        ids = [it["id"] for it in items[:upto]]
        relevant = tuple(draw(st.lists(st.sampled_from(ids), max_size=3, unique=True)))
        answers = tuple(draw(st.lists(TEXT, max_size=2)))
        turns.append(Turn(request, relevant, {}, t=t, probe=k >= n, answers=answers))
    return Scenario("incremental", "random replay", (), tuple(turns), "random.yaml", 1)


def from_scratch(scenario: Scenario, spec: str, budget: int) -> list[tuple[PackResult, Any]]:
    """Each step packed alone from its whole request; a cache-aware chain fed its
    last step pack as the runner feeds it."""
    configured = Configured.of(spec, {})
    chains: Chains = {}
    chain = (spec, str(budget))
    out = []
    for turn in scenario.turns:
        req = dataclasses.replace(
            parse_request(turn.request), strategy=configured.strategy, budget_tokens=budget
        )
        if configured.cache is not None:
            req = dataclasses.replace(req, cache_aware=configured.cache)
            previous = previous_pack(chains, chain, req.items, turn.t)
            req = dataclasses.replace(req, previous_pack=previous)
        result = pack(req)
        packed = [(req.items.ids[i], int(req.items.tokens[i])) for i in result.order]
        state = cache_state(req, result, packed, None, turn.t)
        if not turn.probe:
            chains[chain] = state.link
        out.append((result, (packed, state.breakpoints)))
    return out


def incremental(scenario: Scenario, budget: int) -> tuple[list[dict[str, Any]], list[PackResult]]:
    """run_task's records of every spec, and the pack result behind each."""
    results: list[PackResult] = []
    decide = runner.decide

    def keep(*args: Any) -> PackResult:
        results.append(decide(*args))
        return results[-1]

    task = Task("random", scenario, tuple(range(len(scenario.turns))))
    # Pricing reads only the segments (compared below), and refuses a step that
    # packed nothing, which openclaw-mem's own policy may do under a tight budget.
    with mock.patch.object(runner, "decide", keep), mock.patch.object(replay, "_price"):
        records = run_task(task, SPECS, [budget])
    return records, results


UNPRICED = ("prefix_stability", "prefix_stability_tokens")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=replays(), budget=st.integers(1, 250), compact=st.booleans(), index=st.booleans())
def test_incremental_replay_packs_as_each_step_from_scratch(
    scenario: Scenario, budget: int, compact: bool, index: bool
) -> None:
    if compact:  # as read from a compiled suite: the items once, shared
        scenario = Scenario.from_json(scenario.to_json())
    # index: the conversation's term statistics answer from the inverted index
    # from the first term on (a long replay's case), else by scanning
    with mock.patch.object(termstats, "INDEX_AFTER", 0 if index else 10**9):
        records, results = incremental(scenario, budget)
    assert len(records) == len(results) == len(scenario.turns) * len(SPECS)
    expected = {spec: from_scratch(scenario, spec, budget) for spec in SPECS}
    # the runner computes a turn's oracle recall once per budget, with its first spec
    oracles = {
        k: oracle_recall(result, list(dict.fromkeys(turn.relevant)))
        for k, ((result, _), turn) in enumerate(
            zip(expected[SPECS[0]], scenario.turns, strict=True)
        )
    }
    for record, got in zip(records, results, strict=True):
        k, spec = record["turn"], record["spec"]
        turn = scenario.turns[k]
        want, (packed, breakpoints) = expected[spec][k]
        where = (spec, k)
        assert got.to_json() == want.to_json(), where
        assert record["selected"] == want.selected_ids, where
        assert record["mode"] == want.mode, where
        assert record["segments"] == [list(p) for p in packed], where
        assert record["breakpoints"] == breakpoints, where
        assert record["reasons"] == kept_reasons(turn, want), where
        answers = Answers(turn.answers, want.items)
        known = {"oracle_recall": oracles[k]}
        metrics = cell_metrics(want, turn.relevant, None, known=known, answers=answers)
        assert {k: v for k, v in record["metrics"].items() if k not in UNPRICED} == metrics, where
