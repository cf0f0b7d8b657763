"""``packproof gate`` end to end: load and check the inputs, compare, and (with a
significance level) judge each regression by a paired test over scenarios. When
the two summaries are one run, the result says so first.

Loading comes apart from judging so that the command can check its outputs
against every file the gate reads (:meth:`GateInputs.reads`, the default current
run found from the baseline among them) before the gate runs."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packproof.evals.gate.checks import GateResult, compare
from packproof.evals.gate.inputs import Gates, default_current, load_gates, load_summary
from packproof.evals.gate.significance import judge_regressions, load_run_cells, settings_of
from packproof.evals.project import run_files
from packproof.packer.errors import InputError
from packproof.packer.files import Input

__all__ = ["GateInputs", "gate_inputs", "judge_gate", "run_gate"]


@dataclass(frozen=True)
class GateInputs:
    """The gate's inputs, loaded and checked: the gates file and the two summaries
    (``current``: the one given, or the baseline config's latest run)."""

    baseline: Path
    current: Path
    gates: Path
    rules: Gates
    base: Mapping[str, Any]
    cur: Mapping[str, Any]

    def reads(self) -> list[Input]:
        """Every file the gate reads, by what it is, so none is written over: the
        gates file, both summaries and the files beside each (the cells
        ``--significance`` pairs among them), whether given or found by default."""
        return [
            Input(self.gates, "the gates file"),
            *run_files(self.baseline, "the baseline"),
            *run_files(self.current, "the current run"),
        ]


def gate_inputs(baseline: Path, current: Path | None, gates: Path) -> GateInputs:
    """Load and check the gates file and the summaries. ``current`` None: the
    latest run of the baseline's config (:func:`~.inputs.default_current`)."""
    rules = load_gates(gates)
    base = load_summary(baseline, "baseline")
    current = default_current(base) if current is None else current
    cur = load_summary(current, "current")
    if base["manifest"]["name"] != cur["manifest"]["name"]:  # e.g. latest is another config
        raise InputError(
            "/manifest/name",
            "the summaries come from different eval configs",
            expected=f"a run of {base['manifest']['name']!r} (the baseline's)",
            found=cur["manifest"]["name"],
            source=str(current),
        )
    return GateInputs(baseline, current, gates, rules, base, cur)


def run_gate(
    baseline: Path,
    current: Path | None,
    gates: Path,
    *,
    significance: float | None = None,
) -> GateResult:
    """Load and check the files (:func:`gate_inputs`), then compare
    (:func:`judge_gate`)."""
    return judge_gate(gate_inputs(baseline, current, gates), significance=significance)


def judge_gate(inputs: GateInputs, *, significance: float | None = None) -> GateResult:
    """Compare the loaded inputs. ``significance``: the level a regression's
    paired test must reach to fail (default: the gates file's
    ``significance.alpha``, else no test)."""
    baseline, current, base, cur = inputs.baseline, inputs.current, inputs.base, inputs.cur
    alpha = inputs.rules.alpha if significance is None else significance
    rules = dataclasses.replace(inputs.rules, alpha=alpha)
    result = compare(base, cur, rules, (str(baseline), str(current)))
    confidence = None
    checks = result.checks
    if alpha is not None:
        settings = settings_of(cur, alpha)
        confidence = settings.confidence
        base_cells = load_run_cells(baseline, "baseline")
        cur_cells = load_run_cells(current, "current")
        checks = judge_regressions(checks, base_cells, cur_cells, settings)
    header = (
        f"baseline: {baseline} ({base['manifest']['run_id']})",
        f"current:  {current} ({cur['manifest']['run_id']})",
        f"gates:    {rules.source}: {rules.describe()}",
    )
    notes = (*_same_run(baseline, current, base, cur), *result.notes)
    return dataclasses.replace(
        result, checks=checks, header=header, notes=notes, alpha=alpha, confidence=confidence
    )


def _same_run(
    baseline: Path, current: Path, base: Mapping[str, Any], cur: Mapping[str, Any]
) -> list[str]:
    """A note when the baseline and the current run are one run: one file, or
    one run id (a hash of what the results are a function of: config, suites,
    packers, packproof's code; evals/run/identity.py)."""
    run_id = cur["manifest"]["run_id"]
    if baseline.resolve() == current.resolve():
        return [
            f"the baseline and the current run are the same run ({run_id}, one file): "
            "the run is compared with itself, so nothing can have changed"
        ]
    if base["manifest"]["run_id"] == run_id:
        return [
            f"the baseline and the current run are the same run ({run_id}): its inputs "
            "(the run id hashes them) are unchanged since the baseline was taken"
        ]
    return []
