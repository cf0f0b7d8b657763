"""Every expectation of every golden scenario, under every registered strategy."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxpack.evals.scenarios.compile import check_compiled, compile_sources, load_sources
from ctxpack.evals.scenarios.format import Scenario, expectation_failures, pack_turn
from ctxpack.packer.strategies import REGISTRY

SCENARIOS_DIR = Path(__file__).resolve().parents[2] / "scenarios"
SOURCES = sorted(SCENARIOS_DIR.glob("*.yaml"))
LOADED = load_sources(SOURCES)
ALL: list[Scenario] = [sc for scenarios in LOADED.values() for sc in scenarios]


def cases() -> list[pytest.param]:
    out = []
    for sc in ALL:
        for k, turn in enumerate(sc.turns):
            named = set(turn.expect) - {"*"}
            for strategy in sorted(REGISTRY):
                if "*" in turn.expect or strategy in named:
                    suffix = f"@turn{k}" if len(sc.turns) > 1 else ""
                    out.append(pytest.param(sc, k, strategy, id=f"{sc.id}{suffix}[{strategy}]"))
    return out


@pytest.mark.parametrize(("scenario", "turn", "strategy"), cases())
def test_expectation(scenario: Scenario, turn: int, strategy: str) -> None:
    result = pack_turn(scenario.turns[turn], strategy)
    failures = expectation_failures(scenario.turns[turn], strategy, result)
    assert not failures, f"{scenario.file}:{scenario.line} {scenario.id}: " + "; ".join(failures)


def test_compiled_mirrors_are_up_to_date() -> None:
    problems = check_compiled(compile_sources(LOADED))
    assert not problems, "\n".join(problems)


def test_every_scenario_has_an_expectation() -> None:
    lacking = [sc.id for sc in ALL if not any(t.expect for t in sc.turns)]
    assert not lacking
