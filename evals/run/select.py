"""Narrowing a config's run from the command line (``packproof eval --suite
--strategy --tag``), and listing what a run would do (``--list``).

- ``--suite``: a suite's name (its file's stem) or a shell-style pattern of it;
- ``--strategy``: a configured strategy as written, in canonical form, or by its
  label (a named packer by its name). When the config's baseline is not among
  those kept, the first kept strategy is the baseline;
- ``--tag``: the scenarios with a tag (or a turn with a tag) matching it,
  exactly or as a pattern (``category:*``).

Each may be given more than once (any match is kept). A filter that keeps
nothing is one line naming what there is. A narrowed run is its own run (the
filters are in its manifest, so in its run id).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from packproof.evals.run.config import EvalConfig
from packproof.evals.run.runner import tasks
from packproof.packer.errors import InputError

__all__ = ["Selection", "describe_run", "narrow"]


@dataclass(frozen=True)
class Selection:
    suites: tuple[str, ...] = ()
    strategies: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.suites or self.strategies or self.tags)

    def to_json(self) -> dict[str, Any]:
        return {k: list(v) for k, v in dataclasses.asdict(self).items() if v}


def _spec_of(config: EvalConfig, ref: str) -> str:
    spec = config.find(ref)
    if spec is None:
        raise InputError(
            "--strategy",
            "not one of the config's strategies",
            expected=" | ".join(config.labels.values()),
            found=ref,
        )
    return spec


def narrow(config: EvalConfig, selection: Selection) -> EvalConfig:
    """``config`` with only the selected suites, strategies and tags."""
    if not selection:
        return config
    suites = config.suites
    if selection.suites:
        suites = tuple(
            p
            for p in config.suites
            if any(
                fnmatchcase(p.stem, want) or fnmatchcase(p.name, want) for want in selection.suites
            )
        )
        if not suites:
            raise InputError(
                "--suite",
                "matches none of the config's suites",
                expected=" | ".join(p.stem for p in config.suites),
                found=" ".join(selection.suites),
            )
    specs = config.specs
    if selection.strategies:
        chosen = {_spec_of(config, ref) for ref in selection.strategies}
        specs = tuple(s for s in config.specs if s in chosen)
    narrowed = dataclasses.replace(
        config,
        suites=suites,
        specs=specs,
        baseline=config.baseline if config.baseline in specs else specs[0],
        compare=tuple((a, b) for a, b in config.compare if a in specs and b in specs),
        packers={k: v for k, v in config.packers.items() if k in specs},
        tags=selection.tags,
    )
    if selection.tags and not tasks(narrowed):
        raise InputError(
            "--tag",
            "no scenario of the selected suites has a matching tag",
            found=" ".join(selection.tags),
        )
    return narrowed


def describe_run(config: EvalConfig, selection: Selection | None = None) -> list[str]:
    """What the run would do, without running it: suites (scenarios, turns),
    strategies (label and what packs it), budgets and the number of cells."""
    work = tasks(config)
    scenarios: dict[str, dict[str, int]] = {}
    seen: set[tuple[str, str]] = set()
    for task in work:
        counts = scenarios.setdefault(task.suite, {"scenarios": 0, "turns": 0})
        if (task.suite, task.scenario.id) not in seen:
            seen.add((task.suite, task.scenario.id))
            counts["scenarios"] += 1
            counts["turns"] += len(task.scenario.turns)
    turns = sum(c["turns"] for c in scenarios.values())
    cells = turns * len(config.specs) * len(config.budgets)
    lines = [f"config {config.source} ({config.name})"]
    if selection is not None and selection:
        shown = "; ".join(f"{k} {' '.join(v)}" for k, v in selection.to_json().items())
        lines.append(f"filters: {shown}")
    lines.append(f"suites ({len(scenarios)}):")
    width = max((len(s) for s in scenarios), default=0)
    lines += [
        f"  {suite.ljust(width)}  {c['scenarios']} scenarios, {c['turns']} turns"
        for suite, c in scenarios.items()
    ]
    lines.append(f"strategies ({len(config.specs)}; baseline {config.label(config.baseline)}):")
    width = max(len(config.label(s)) for s in config.specs)
    for spec in config.specs:
        what = config.packers[spec].source if spec in config.packers else spec
        lines.append(f"  {config.label(spec).ljust(width)}  {what}")
    lines.append("budgets: " + ", ".join(str(b) for b in config.budgets))
    lines.append(
        f"cells: {cells} ({turns} turns x {len(config.specs)} strategies x "
        f"{len(config.budgets)} budgets)"
    )
    return lines
