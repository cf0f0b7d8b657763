"""Every expectation of every golden scenario, under every registered strategy; gold
answers through the compiled mirror."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from packproof.evals.scenarios.compile import (
    check_compiled,
    compile_sources,
    load_sources,
    write_compiled,
)
from packproof.evals.scenarios.format import (
    Scenario,
    expectation_failures,
    load_compiled,
    pack_turn,
)
from packproof.packer import InputError
from packproof.packer.strategies import REGISTRY, parse_spec
from tests.paths import ROOT

SCENARIOS_DIR = ROOT / "scenarios"
SOURCES = sorted(SCENARIOS_DIR.glob("*.yaml"))
LOADED = load_sources(SOURCES)
ALL: list[Scenario] = [sc for scenarios in LOADED.values() for sc in scenarios]


def cases() -> list[pytest.param]:
    out = []
    for sc in ALL:
        for k, turn in enumerate(sc.turns):
            # every strategy held to "*"'s (unless it decides the whole pack) or its
            # own, and every spec an expectation is keyed by
            names = [name for name in sorted(REGISTRY) if turn.expectations(name)]
            specs = sorted(key for key in turn.expect if key != "*" and key not in REGISTRY)
            for strategy in names + specs:
                suffix = f"@turn{k}" if len(sc.turns) > 1 else ""
                out.append(pytest.param(sc, k, strategy, id=f"{sc.id}{suffix}[{strategy}]"))
    return out


@pytest.mark.parametrize(("scenario", "turn", "strategy"), cases())
def test_expectation(scenario: Scenario, turn: int, strategy: str) -> None:
    name, params = parse_spec(strategy)
    result = pack_turn(scenario.turns[turn], {"name": name, "params": params})
    failures = expectation_failures(scenario.turns[turn], strategy, result)
    assert not failures, f"{scenario.file}:{scenario.line} {scenario.id}: " + "; ".join(failures)


def test_compiled_mirrors_are_up_to_date() -> None:
    problems = check_compiled(compile_sources(LOADED))
    assert not problems, "\n".join(problems)


def test_every_scenario_has_an_expectation() -> None:
    lacking = [sc.id for sc in ALL if not any(t.expect for t in sc.turns)]
    assert not lacking


ANSWERED = """\
scenarios:
  - id: answered-single
    why: A single-turn scenario whose prompt has gold answers, one of them a number.
    request:
      budget_tokens: 10
      prompt: when did it start
      items:
        - [a, user, 1, it started in 2022]
    relevant: [a]
    answers: ["in 2022", 2022]
  - id: answered-turns
    why: A conversation whose second turn has a gold answer and whose first has none.
    request:
      budget_tokens: 10
      items:
        - [a, user, 1, hello]
    turns:
      - prompt: hi
      - items: [[b, assistant, 1, the code is 42]]
        prompt: what is the code
        answers: ["42"]
"""


def test_gold_answers_compile_and_round_trip_through_the_mirror(tmp_path: Path) -> None:
    source = tmp_path / "answered.yaml"
    source.write_text(ANSWERED)
    loaded = load_sources([source])
    single, conversation = loaded[source]
    assert single.turns[0].answers == ("in 2022", "2022")  # a number becomes its text
    assert [t.answers for t in conversation.turns] == [(), ("42",)]
    (written,) = write_compiled(compile_sources(loaded), tmp_path / "compiled")
    lines = [json.loads(line) for line in written.read_text("utf-8").splitlines()]
    # only a turn with answers carries the field, so mirrors without any keep their bytes
    assert ["answers" in t for line in lines for t in line["turns"]] == [True, False, True]
    assert load_compiled(written) == [single, conversation]


def test_a_conversation_gives_answers_per_turn_only(tmp_path: Path) -> None:
    source = tmp_path / "bad.yaml"
    bad = ANSWERED.replace("    turns:\n", "    answers: [hello]\n    turns:\n")
    source.write_text(bad)
    with pytest.raises(InputError, match="schema violation"):
        load_sources([source])
    source.write_text(ANSWERED.replace('answers: ["42"]', "answers: [true]"))
    with pytest.raises(InputError, match="schema violation"):
        load_sources([source])


def test_the_existing_mirrors_carry_no_answers() -> None:
    for sc in ALL:
        assert all(t.answers == () for t in sc.turns)
        assert all("answers" not in t for t in sc.content()["turns"])
