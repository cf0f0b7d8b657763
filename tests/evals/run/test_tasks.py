"""A config is cut into tasks: a replay's specs that share a ranking (one
strategy, plain and cache-aware) run as one task, which gives every record the
tasks of one spec each give, and the grid keeps every cell once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packproof.evals.metrics.cache.files import profile
from packproof.evals.run.config import load_config
from packproof.evals.run.runner import run_task
from packproof.evals.run.tasks import Task, cell_key, spec_groups, tasks
from packproof.evals.scenarios.format import Scenario
from tests.evals.run.test_incremental_replay import replays

CACHE = "+cache(low_water=0.4,recall_share=0.3)"
SPECS = [
    "bm25",
    "chronological",
    "bm25" + CACHE,
    "hybrid",
    "hybrid(w_recency=1,w_relevance=0)" + CACHE,
    "bm25+cache(low_water=0.5,recall_share=0.3,recall_depth=4,carry_recall=false)",
    "hybrid" + CACHE,
    "chronological+cache(low_water=0.4)",
]


def test_specs_are_grouped_by_the_strategy_that_ranks_them() -> None:
    assert spec_groups(SPECS) == [
        ("bm25", "bm25" + CACHE, SPECS[5]),
        ("chronological", "chronological+cache(low_water=0.4)"),
        ("hybrid", "hybrid" + CACHE),
        ("hybrid(w_recency=1,w_relevance=0)" + CACHE,),  # other parameters: another ranking
    ]
    # a default spelled out ranks as the default does
    assert spec_groups(["bm25", "bm25(k1=1.2)"]) == [("bm25", "bm25(k1=1.2)")]


def test_a_large_group_is_split_into_near_equal_parts() -> None:
    variants = [f"bm25+cache(low_water=0.{i})" for i in range(1, 8)]
    assert [len(g) for g in spec_groups(variants, most=5)] == [4, 3]
    assert [len(g) for g in spec_groups(variants, most=3)] == [3, 2, 2]
    assert [s for g in spec_groups(variants, most=2) for s in g] == variants


def test_a_named_packer_is_a_group_of_its_own() -> None:
    assert spec_groups(["bm25", "mine", "bm25+cache(low_water=0.4)"], {"mine"}) == [
        ("bm25", "bm25+cache(low_water=0.4)"),
        ("mine",),
    ]


def _replay_config(tmp_path: Path) -> Path:
    from tests.evals.run.test_replay import REPLAY
    from tests.evals.scenarios.test_scenario_errors import packproof

    (tmp_path / "r.yaml").write_text(REPLAY)
    assert packproof("scenarios", "compile", "r.yaml", cwd=tmp_path).returncode == 0
    path = tmp_path / "cfg.yaml"
    path.write_text(
        "name: grouped\nsuites: [compiled/r.jsonl]\n"
        f"strategies: {SPECS!r}\nbudgets: [1000, 4000]\n".replace("'", '"')
    )
    return path


def test_a_replay_is_one_task_per_group_and_the_grid_keeps_every_cell(tmp_path: Path) -> None:
    config = load_config(_replay_config(tmp_path))
    work = tasks(config)
    assert [t.specs for t in work] == spec_groups(config.specs)  # the specs spelled out
    assert [len(t.specs or ()) for t in work] == [3, 2, 2, 1]
    (scenario,) = {t.scenario.id: t.scenario for t in work}.values()
    keys = [
        cell_key(t.suite, t.scenario.id, k, s, b)
        for t in work
        for k in t.turns
        for s in t.specs or ()
        for b in config.budgets
    ]
    assert len(keys) == len(set(keys)) == len(scenario.turns) * len(SPECS) * 2


def _stable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records without their latency, by key."""
    return sorted(
        ({k: v for k, v in r.items() if k != "latency_ms"} for r in records),
        key=lambda r: str(r["key"]),
    )


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=replays(), budgets=st.lists(st.integers(1, 250), min_size=1, max_size=2))
def test_specs_run_together_give_the_records_of_one_task_per_spec(
    scenario: Scenario, budgets: list[int]
) -> None:
    profiles = [(name, profile(name)) for name in ("anthropic", "openai")]
    turns = tuple(range(len(scenario.turns)))
    kw: dict[str, Any] = {"profiles": profiles, "static_prefix_tokens": (0, 100)}
    # every spec in one task: each ranking shared by the specs of its strategy only
    together = run_task(Task("s", scenario, turns, tuple(SPECS)), SPECS, budgets, **kw)
    alone = [
        r for s in SPECS for r in run_task(Task("s", scenario, turns, (s,)), SPECS, budgets, **kw)
    ]
    assert _stable(together) == _stable(alone)
