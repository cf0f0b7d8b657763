"""``--significance ALPHA``: a metric's move beyond its allowance fails the gate
only when a paired test says it is not noise.

For each ``REGRESSED`` metric check, the two runs' cells of that strategy label
and budget are paired by what a cell is (suite, scenario, turn, label, budget;
:mod:`packproof.evals.compare.pairs`), and the mean of current - baseline gets a
cluster-bootstrap interval and a two-sided sign-flip permutation p over
scenarios (the turns of one conversation are not independent). The check stays
``REGRESSED`` when p < alpha and the paired mean moves the wrong way; otherwise
it becomes ``not significant``, shown and not failing. The allowance is judged
on the summary's means (a point estimate); the test only confirms the move.

A regression that cannot be tested keeps failing on its point estimate, and
says why: a replay metric (one value per chain or probe, not per cell; the
cells file has none), no cell of the group in both runs, or too few scenarios
for any p to reach alpha (with k scenarios an exact sign-flip test cannot go
below 2 / 2**k, and a random one, with R resamples, below 2 / (R + 1)).
Resamples, confidence and seed are the current run's, so the verdict is
deterministic; ``eval-summary.v1.json`` bounds them (checked when the summary is
read), and each run's cells are read as strictly as ``packproof compare`` reads
them (a cell recorded twice, a metric that is no finite number: one line, exit 2).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packproof.evals.gate.checks import NOT_SIGNIFICANT, REGRESSED, Check
from packproof.evals.gate.metrics import GATEABLE
from packproof.packer.errors import InputError, require

if TYPE_CHECKING:
    import pandas as pd

    from packproof.evals.compare.pairs import Cells

__all__ = ["Settings", "judge_regressions", "load_run_cells", "settings_of", "smallest_p"]


@dataclasses.dataclass(frozen=True)
class Settings:
    """The test's level and the bootstrap's settings (the current run's)."""

    alpha: float
    resamples: int
    confidence: float
    seed: int


def smallest_p(clusters: int, resamples: int) -> float:
    """The smallest two-sided p of a sign-flip test over ``clusters`` scenarios:
    2 / 2**k when exact (2**k <= resamples), else 2 / (resamples + 1)."""
    return max(2.0 / 2.0**clusters, 2.0 / (resamples + 1))


def settings_of(current: Mapping[str, Any], alpha: float) -> Settings:
    """The current run's settings, as its summary (checked against
    ``eval-summary.v1.json``: resamples in [1, 100,000], a seed >= 0, a
    confidence in (0, 1)) holds them."""
    manifest = current["manifest"]
    return Settings(
        alpha=alpha,
        resamples=int(manifest["bootstrap_resamples"]),
        confidence=float(current["confidence"]),
        seed=int(manifest["seed"]),
    )


def load_run_cells(summary_path: Path, role: str) -> Cells:
    """A run's cells from ``metrics.csv`` or ``metrics.csv.gz`` beside its
    summary (:func:`~packproof.evals.compare.pairs.load_cells`: every field
    checked); refused with one line when neither is there."""
    require("pandas", "eval", "packproof gate --significance")
    from packproof.evals.compare.pairs import CELLS_FILES, load_cells

    folder = summary_path.parent
    if not any((folder / name).exists() for name in CELLS_FILES):
        raise InputError(
            "",
            f"--significance needs the {role} run's metrics.csv (or metrics.csv.gz) "
            "beside its summary.json",
            expected=" or ".join(str(folder / n) for n in CELLS_FILES),
            found="neither",
            source=str(summary_path),
        )
    return load_cells(summary_path, role)


def _judge(check: Check, pairs: pd.DataFrame, settings: Settings) -> Check:
    from packproof.evals.compare.pairs import paired_test

    mine = pairs[(pairs["label"] == check.strategy) & (pairs["budget"] == check.budget)]
    if not len(mine):
        return dataclasses.replace(check, untested="no cell in both runs to pair")
    clusters = int(mine["cluster"].nunique())
    floor = smallest_p(clusters, settings.resamples)
    if floor >= settings.alpha:
        why = (
            f"{clusters} scenarios cannot reach p < {settings.alpha:g} "
            f"(smallest p {floor:.3g}): judged on the means"
        )
        return dataclasses.replace(check, untested=why)
    test = paired_test(mine, settings.resamples, settings.confidence, settings.seed)
    assert test is not None  # there are pairs
    wrong_way = GATEABLE[check.metric].wrong_way(float(test["mean"])) > 0
    significant = wrong_way and float(test["p_value"]) < settings.alpha
    verdict = REGRESSED if significant else NOT_SIGNIFICANT
    return dataclasses.replace(check, test=test, verdict=verdict)


def judge_regressions(
    checks: Sequence[Check], baseline: Cells, current: Cells, settings: Settings
) -> tuple[Check, ...]:
    """The checks, each ``REGRESSED`` metric judged by a paired test."""
    from packproof.evals.compare.pairs import pair_cells

    paired: dict[str, pd.DataFrame] = {}
    out = []
    for check in checks:
        gated = GATEABLE.get(check.metric)
        if check.verdict == REGRESSED and gated is not None:
            if not gated.per_cell:
                why = "per chain, not per cell: not tested for significance"
                check = dataclasses.replace(check, untested=why)
            else:
                if gated.name not in paired:
                    paired[gated.name] = pair_cells(baseline, current, gated.name)
                check = _judge(check, paired[gated.name], settings)
        out.append(check)
    return tuple(out)
