"""packproof's evaluation harness (``packproof.evals``): the scenario lane, running,
metrics, reports, the gate and tuning. It imports the library (``packproof.packer``);
the library never imports it.

:func:`load_run` gives a run's cells as a pandas DataFrame (pandas comes with
the ``eval`` extra), one row per cell, to slice as you like::

    from packproof.evals import load_run
    cells = load_run("reports/default/latest")
    cells.groupby(["label", "budget"], observed=True)["evidence_recall"].mean()
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["load_run"]


def load_run(path: str | Path) -> pd.DataFrame:
    """The cells of the eval run in ``path`` (a run folder, or ``reports/<config name>/latest``)
    as a DataFrame with typed columns: see :mod:`packproof.evals.report.frame`."""
    from packproof.evals.report.frame import load_run as load

    return load(path)
