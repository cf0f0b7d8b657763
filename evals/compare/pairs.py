"""Two runs' cells, paired: what ``packproof compare`` and the gate's significance
test (``packproof gate --significance``) share.

A run's cells are read from ``metrics.csv`` (or ``metrics.csv.gz``, the compact
copy ``make baseline`` commits) beside its ``summary.json``: one row per cell,
every metric a column. Two runs' cells pair by what a cell is, not by how a spec
was spelled: (suite, scenario, turn, strategy label, budget). So, like the gate's
groups, a changed default parameter does not unpair a strategy's cells.

Both files are read strictly, before any work: the summary against
``eval-summary.v1.json`` (which bounds the resamples, confidence and seed a
paired test uses) with each strategy listed once, and every field of the cells
file as an eval writes it, so that a cell written twice is refused rather than
counted twice (:func:`load_cells`).

The test of a paired difference respects how cells cluster: the turns of one
scenario are not independent, so :func:`paired_test` uses
:func:`~packproof.evals.report.stats.cluster_paired` (a cluster-bootstrap interval
and a sign-flip permutation test over scenarios).
"""

from __future__ import annotations

import csv
import gzip
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from packproof.packer.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CELL", "Cells", "groups_of", "load_cells", "pair_cells", "paired_test"]

CELLS_FILES: Final = ("metrics.csv", "metrics.csv.gz")
# What a cell is, across runs: the columns two runs' cells pair on.
CELL: Final = ("suite", "scenario", "turn", "label", "budget")
_TEXT: Final = ("key", "status", "suite", "scenario", "strategy", "spec", "budget", "mode")
_FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")  # metrics.csv quotes these
# A line of metrics.csv is a cell: a few hundred characters. A longer one is no
# metrics.csv, and is refused before it is read whole (a gzip of 4 MB can expand
# to 1 GB of one line: read as one, it would take 2 GB of memory).
MAX_LINE: Final = 1 << 20
_SLACK: Final = 1e-9  # a metric's range, give or take the rounding of its last digit


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
    or a ``summary.json``); ``role`` names it in errors. Refused with one line,
    before any work, when the summary is missing, unreadable or not an eval
    summary (``eval-summary.v1.json``, which bounds the bootstrap settings a
    paired test uses), or the cells file is missing or not what an eval writes
    (:func:`_read_cells`)."""
    from packproof.evals.gate.inputs import load_summary

    summary_path = _summary_path(path)
    folder = summary_path.parent
    summary = load_summary(summary_path, role)
    found = next((folder / n for n in CELLS_FILES if (folder / n).exists()), None)
    if found is None:
        raise InputError(
            "",
            f"the {role} has no per-cell metrics beside its summary",
            expected=" or ".join(CELLS_FILES),
            found="neither",
            source=str(folder),
        )
    labels: dict[str, str] = {}
    for i, strategy in enumerate(summary["strategies"]):  # cells pair by label: one each
        spec, label = strategy["spec"], strategy["label"]
        if spec in labels or label in labels.values():
            raise InputError(
                f"/strategies/{i}",
                f"the {role} summary lists a strategy twice",
                expected="each spec and label once",
                found=label,
                source=str(summary_path),
            )
        labels[spec] = label
    return Cells(summary, _read_cells(found, role, labels), folder)


def _rows(found: Path, role: str) -> tuple[list[str], list[list[str]], list[int]]:
    """The header, the rows and each row's line of a cells file, read as text
    (csv, not pandas: a row's fields are counted, and a value that is no
    number is seen, not made NaN)."""
    opener: Any = gzip.open if found.suffix == ".gz" else open
    try:
        with opener(found, "rt", encoding="utf-8", newline="") as f:
            reader = csv.reader(_bounded_lines(f, found))
            header = next(reader, [])
            rows, lines = [], []
            keys: dict[str, int] = {}  # a cell twice is refused as it is read, not after
            key = header.index("key") if "key" in header else None
            for row in reader:
                if len(row) != len(header):
                    raise InputError(
                        f"line {reader.line_num}",
                        "a row of another width than the header",
                        expected=f"{len(header)} fields",
                        found=len(row),
                        source=str(found),
                    )
                if key is not None and keys.setdefault(row[key], reader.line_num) < reader.line_num:
                    raise InputError(
                        f"line {reader.line_num} /key",
                        f"a cell recorded twice (first on line {keys[row[key]]})",
                        expected="each cell once",
                        found=row[key],
                        source=str(found),
                    )
                rows.append(row)
                lines.append(reader.line_num)
    except (OSError, EOFError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError("", f"cannot read the {role}'s cells: {exc}", source=str(found)) from None
    missing = [c for c in ("key", "status", *CELL[:3], "spec", "budget") if c not in header]
    if missing:
        raise InputError("", f"not a metrics.csv: no column {missing[0]!r}", source=str(found))
    twice = [c for c in header if header.count(c) > 1]
    if twice:
        raise InputError("line 1", f"column {twice[0]!r} named twice", source=str(found))
    return header, rows, lines


def _bounded_lines(stream: Any, found: Path) -> Iterator[str]:
    """The lines of ``stream``, each refused before it is read past
    :data:`MAX_LINE` characters (memory stays bounded whatever the file expands to)."""
    number = 0
    while line := stream.readline(MAX_LINE + 1):
        number += 1
        if len(line) > MAX_LINE:
            raise InputError(
                f"line {number}",
                "a line too long for a metrics.csv (a row is one cell)",
                expected=f"at most {MAX_LINE} characters",
                found=f"more than {MAX_LINE}",
                source=str(found),
            )
        yield line


def _read_cells(found: Path, role: str, labels: Mapping[str, str]) -> pd.DataFrame:
    """A run's cells from its ``metrics.csv`` (or gzip copy), every field checked
    as an eval writes it, each refusal naming the line and the column: every row
    as wide as the header, the key columns present; ``turn`` a whole number;
    every metric empty or a finite number, and in its range when the gate knows
    it (>= 0; a share <= 1); each spec one the summary lists; each cell
    (:data:`CELL`) once."""
    import numpy as np
    import pandas as pd

    from packproof.evals.gate.metrics import GATEABLE

    header, rows, lines = _rows(found, role)
    table = pd.DataFrame(rows, columns=header, dtype=object)  # indexed by row: lines[i]

    def refuse(rows: pd.Series, column: str, message: str, expected: str) -> None:
        first = int(rows.index[rows.to_numpy(dtype=bool)][0])
        raise InputError(
            f"line {lines[first]} /{column}",
            message,
            expected=expected,
            found=table.at[first, column],
            source=str(found),
        )

    table = table[~table["key"].str.startswith("replay|")].copy()  # replay group rows
    for column in _TEXT:
        if column in table:  # undo metrics.csv's spreadsheet quoting
            quoted = table[column].str.match(r"^'[=+\-@\t\r]")
            table.loc[quoted, column] = table.loc[quoted, column].str.slice(1)
    known = table["spec"].isin(list(labels))
    if not known.all():
        refuse(~known, "spec", "cells of a strategy the summary does not list", "a listed spec")
    whole = table["turn"].str.fullmatch(r"\d{1,9}")
    if not whole.all():
        refuse(~whole, "turn", "not a turn number", "an integer >= 0")
    table["turn"] = table["turn"].astype("int64")
    for column in [c for c in header if c not in (*_TEXT, "turn")]:
        text = table[column]
        values = pd.to_numeric(text.where(text != "", None), errors="coerce")
        bad = (text != "") & ~np.isfinite(values.to_numpy(dtype="float64", na_value=np.nan))
        if bad.any():
            refuse(bad, column, "not a finite number", "a number, or empty where undefined")
        metric = GATEABLE.get(column)  # a metric the gate knows: >= 0, a share <= 1
        if metric is not None:
            high = 1.0 if metric.share else np.inf
            out = (values < -_SLACK) | (values > high + _SLACK)
            if out.any():
                within = "in [0, 1]" if metric.share else ">= 0"
                refuse(out, column, f"{column} out of its range", f"a number {within}")
        table[column] = values.astype("float64")  # numbers, NaN where undefined
    table["label"] = table["spec"].map(labels)
    again = table.duplicated(list(CELL), keep="first")
    if again.any():
        repeated = table.loc[table.index[again.to_numpy()][0], list(CELL)]
        same = (table[list(CELL)] == repeated).all(axis=1).to_numpy()
        line = lines[int(table.index[same][0])]
        refuse(again, "key", f"a cell recorded twice (first on line {line})", "each cell once")
    for column in [*_TEXT, "label"]:
        if column in table:
            table[column] = table[column].astype("string")
    table["cluster"] = (table["suite"] + "/" + table["scenario"]).astype("string")
    return table.reset_index(drop=True)


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
