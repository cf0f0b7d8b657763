"""Two runs' cells, paired: what ``packproof compare`` and the gate's significance
test (``packproof gate --significance``) share.

A run's cells are read from ``metrics.csv`` (or ``metrics.csv.gz``, the compact
copy ``make baseline`` commits) beside its ``summary.json``: one row per cell,
every metric a column. Two runs' cells pair by what a cell is, not by how a spec
was spelled: (suite, scenario, turn, strategy label, budget). So, like the gate's
groups, a changed default parameter does not unpair a strategy's cells.

The test of a paired difference respects how cells cluster: the turns of one
scenario are not independent, so :func:`paired_test` uses
:func:`~packproof.evals.report.stats.cluster_paired` (a cluster-bootstrap interval
and a sign-flip permutation test over scenarios).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from packproof.packer.errors import InputError
from packproof.packer.jsonio import loads

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CELL", "Cells", "groups_of", "load_cells", "pair_cells", "paired_test"]

CELLS_FILES: Final = ("metrics.csv", "metrics.csv.gz")
# What a cell is, across runs: the columns two runs' cells pair on.
CELL: Final = ("suite", "scenario", "turn", "label", "budget")
_TEXT: Final = ("key", "status", "suite", "scenario", "strategy", "spec", "budget", "mode")
_FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")  # metrics.csv quotes these


@dataclass(frozen=True)
class Cells:
    """A run's summary and its cells (one row per cell; the replay group rows of
    metrics.csv are left out), with ``label`` and ``cluster`` columns added."""

    summary: Mapping[str, Any]
    frame: pd.DataFrame
    source: Path  # the folder the run's files were read from

    @property
    def suites(self) -> dict[str, str]:
        """The run's suites: file name -> sha256."""
        return {s["file"]: s["sha256"] for s in self.summary["manifest"]["suites"]}


def _summary_path(path: Path) -> Path:
    return path / "summary.json" if path.is_dir() else path


def load_cells(path: Path, role: str = "run") -> Cells:
    """The cells of the run at ``path`` (a run folder, ``reports/<name>/latest``,
    or a ``summary.json``); ``role`` names it in errors. Refused with one line
    when the summary or the cells file is missing or unreadable."""
    import pandas as pd

    summary_path = _summary_path(path)
    folder = summary_path.parent
    try:
        summary = loads(summary_path.read_bytes(), source=str(summary_path))
    except OSError as exc:
        raise InputError(
            "", f"cannot read the {role}'s summary: {exc.strerror}", source=str(summary_path)
        ) from None
    if not isinstance(summary, dict) or "strategies" not in summary or "manifest" not in summary:
        raise InputError(
            "", f"the {role}'s summary is not an eval summary", source=str(summary_path)
        )
    found = next((folder / n for n in CELLS_FILES if (folder / n).exists()), None)
    if found is None:
        raise InputError(
            "",
            f"the {role} has no per-cell metrics beside its summary",
            expected=" or ".join(CELLS_FILES),
            found="neither",
            source=str(folder),
        )
    try:
        # low_memory=False: read in one chunk, so a metric column empty in the
        # first rows is not typed per chunk (a DtypeWarning on stderr)
        table = pd.read_csv(
            found,
            dtype={c: "string" for c in _TEXT},
            keep_default_na=False,
            low_memory=False,
        )
    except (OSError, ValueError, EOFError) as exc:
        raise InputError("", f"cannot read the {role}'s cells: {exc}", source=str(found)) from None
    missing = [c for c in ("key", "suite", "scenario", "turn", "spec", "budget") if c not in table]
    if missing:
        raise InputError("", f"not a metrics.csv: no column {missing[0]!r}", source=str(found))
    table = table[~table["key"].str.startswith("replay|")].copy()  # replay group rows
    for column in _TEXT:
        if column in table:  # undo metrics.csv's spreadsheet quoting
            quoted = table[column].str.match(r"^'[=+\-@\t\r]")
            table.loc[quoted, column] = table.loc[quoted, column].str.slice(1)
    labels = {s["spec"]: s["label"] for s in summary["strategies"]}
    unknown = sorted(set(table["spec"]) - labels.keys())
    if unknown:
        raise InputError(
            "",
            f"cells of a strategy the summary does not list: {unknown[0]}",
            source=str(found),
        )
    table["label"] = table["spec"].map(labels).astype("string")
    table["cluster"] = (table["suite"] + "/" + table["scenario"]).astype("string")
    table["turn"] = table["turn"].astype("int64")
    for column in table.columns:  # metric columns: numbers, NaN where undefined
        if column not in (*_TEXT, "label", "cluster", "turn"):
            table[column] = pd.to_numeric(table[column].replace("", None), errors="coerce")
    return Cells(summary, table.reset_index(drop=True), folder)


def pair_cells(a: Cells, b: Cells, metric: str) -> pd.DataFrame:
    """One row per cell both runs have (:data:`CELL`) with ``metric`` defined in
    both and both cells ``ok``: the :data:`CELL` columns, ``cluster``, ``a``,
    ``b`` and ``diff`` (b - a), in a's cell order."""
    import pandas as pd

    columns = [*CELL, "cluster", "a", "b", "diff"]
    if metric not in a.frame or metric not in b.frame:
        return pd.DataFrame({c: [] for c in columns})

    def side(cells: Cells, name: str) -> pd.DataFrame:
        f = cells.frame
        f = f[(f["status"] == "ok") & f[metric].notna()]
        return f[[*CELL, "cluster", metric]].rename(columns={metric: name})

    both = side(a, "a").merge(side(b, "b").drop(columns="cluster"), on=list(CELL), how="inner")
    both["diff"] = both["b"] - both["a"]
    return both[columns].reset_index(drop=True)


def paired_test(
    pairs: pd.DataFrame, resamples: int, confidence: float, seed: int
) -> dict[str, Any] | None:
    """The mean of ``b - a`` over paired cells, its cluster-bootstrap interval and
    the sign-flip p-value over scenarios (``n`` cells, ``clusters``
    scenarios); None with no pairs."""
    from packproof.evals.report.stats import cluster_paired

    if not len(pairs):
        return None
    out = cluster_paired(
        pairs["b"].to_numpy(dtype="float64"),
        pairs["a"].to_numpy(dtype="float64"),
        pairs["cluster"].to_numpy(dtype=object).astype(str),
        resamples,
        confidence,
        seed,
    )
    if out is not None:
        out.setdefault("clusters", int(pairs["cluster"].nunique()))
    return out


def groups_of(pairs: pd.DataFrame) -> Sequence[tuple[tuple[str, str], pd.DataFrame]]:
    """The paired cells by (label, budget), in their first appearance's order."""
    if not len(pairs):
        return []
    keys = list(dict.fromkeys(zip(pairs["label"], pairs["budget"], strict=True)))
    grouped = dict(iter(pairs.groupby(["label", "budget"], sort=False)))
    return [((str(k[0]), str(k[1])), grouped[k]) for k in keys]
