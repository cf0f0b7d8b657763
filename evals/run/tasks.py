"""How an eval config is cut into tasks, the units of work the executors ship.

A task is consecutive turns of one scenario under a set of specs: its turns'
requests are parsed once and packed under each of its specs and every budget
from the same item table (runner.py). A scenario's turns are cut into tasks of
:data:`TURNS_PER_TASK` turns under every spec. A replay runs its steps in order,
so it is one task per group of specs (:func:`spec_groups`): the specs that share
a ranking (one strategy, packed plain and cache-aware) run together, so that a
step is ranked, reserved and parsed once for all of them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Final

from packproof.evals.run.suites import load_suite
from packproof.evals.scenarios.format import Scenario
from packproof.packer.packspec import parse_pack_spec

if TYPE_CHECKING:
    from packproof.evals.run.config import EvalConfig

__all__ = ["SPECS_PER_TASK", "TURNS_PER_TASK", "Task", "cell_key", "spec_groups", "tasks"]


@dataclass(frozen=True)
class Task:
    """Consecutive turns of one scenario: every spec x budget cell of them runs
    together, and a conversation's items are parsed once for all of them."""

    suite: str
    scenario: Scenario
    turns: tuple[int, ...]
    specs: tuple[str, ...] | None = None  # None: every spec of the config


# Turns per task: items are parsed once per task; tasks small enough to share out.
TURNS_PER_TASK: Final = 32
# Specs per replay task at most: one strategy's many variants (a tuning grid's)
# are still shared out between workers.
SPECS_PER_TASK: Final = 5


def cell_key(suite: str, scenario: str, turn: int, spec: str, budget: int | str) -> str:
    return f"{suite}/{scenario}#{turn}|{spec}|{budget}"


def tasks(config: EvalConfig, per_task: int = TURNS_PER_TASK) -> list[Task]:
    """The config's tasks. A replay is one task per group of specs (each (spec,
    budget) chain runs its steps in order, and is priced as one chain; chains run
    in parallel); other scenarios are cut into tasks of ``per_task`` turns."""
    out: list[Task] = []
    groups: list[tuple[str, ...]] | None = None
    for path in config.suites:
        suite = path.stem
        for scenario in load_suite(path):
            if config.tags and not _tagged(scenario, config.tags):
                continue
            n = len(scenario.turns)
            if scenario.replay:
                groups = groups or spec_groups(config.specs, config.packers)
                out.extend(Task(suite, scenario, tuple(range(n)), g) for g in groups)
                continue
            out.extend(
                Task(suite, scenario, tuple(range(start, min(n, start + per_task))))
                for start in range(0, n, per_task)
            )
    return out


def spec_groups(
    specs: Sequence[str], packers: Collection[str] = (), most: int = SPECS_PER_TASK
) -> list[tuple[str, ...]]:
    """``specs`` grouped by the strategy that ranks them (``bm25`` with every
    ``bm25+cache(...)``), in the order each strategy first appears, a group of
    more than ``most`` split into near-equal parts; a named packer (in
    ``packers``) is a group of its own."""
    by_strategy: dict[object, list[str]] = {}
    for spec in specs:
        key = ("packer", spec) if spec in packers else parse_pack_spec(spec).strategy
        by_strategy.setdefault(key, []).append(spec)
    out: list[tuple[str, ...]] = []
    for group in by_strategy.values():
        # the fewest parts of at most `most` specs: each of `size`, the first `longer` one more
        size, longer = divmod(len(group), -(-len(group) // most))
        start = 0
        while start < len(group):
            end = start + size + (longer > 0)
            out.append(tuple(group[start:end]))
            start, longer = end, longer - 1
    return out


def _tagged(scenario: Scenario, tags: Sequence[str]) -> bool:
    """Whether the scenario, or one of its turns, has a tag matching one of
    ``tags`` (exactly, or as a shell-style pattern: ``category:*``)."""
    have = {*scenario.tags, *(t for turn in scenario.turns for t in turn.tags)}
    return any(fnmatchcase(tag, want) for want in tags for tag in have)
