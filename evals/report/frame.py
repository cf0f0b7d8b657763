"""A run's cells as a pandas DataFrame: the table the report aggregates, and
what :func:`packproof.evals.load_run` gives a Python user to slice.

One row per cell (suite, scenario, turn, spec, budget), in cell-key order
(:func:`~packproof.evals.report.model.order_records`), with typed columns:

- ``key``, ``suite``, ``scenario``, ``strategy``, ``status``, ``mode``: strings;
  ``turn``: int; ``probe``: bool; ``t``: float (NaN outside replays);
- ``spec`` and ``label``: ordered categoricals in the config's strategy order;
  ``budget``: an ordered categorical of the config's budgets (ints, and
  ``"scenario"`` for each scenario's own budget); ``budget_tokens``: int;
- ``cluster``: the conversation a cell belongs to (``suite/scenario``): the
  turns of one scenario are not independent, so the report's cluster
  statistics resample these, not cells;
- ``tags``: the cell's tags (a tuple), and one column per ``breakdown_tags``
  prefix, named after it (``category:`` gives ``category``), holding the rest of
  the first tag with that prefix (``multi-hop``) or NA;
- every metric of the records: float64 with NaN where a metric is undefined
  (recall without gold evidence), or nullable Int64 for the counts in
  :data:`COUNTS`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from packproof.evals.metrics.cell import HARD_INVARIANTS
from packproof.packer.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COUNTS", "cells_frame", "load_run", "order_records", "tag_column"]

_STRINGS: Final = ("key", "suite", "scenario", "strategy", "status", "mode")
# Metrics that count (docs/metrics.md): nullable Int64 columns; every other
# metric is a float64 column with NaN where it is undefined.
COUNTS: Final = frozenset(
    (
        *HARD_INVARIANTS,
        "must_exclude_violations",
        "over_budget",
        "selected_count",
        "tokens_used",
    )
)


def tag_column(prefix: str) -> str:
    """The column of a breakdown prefix: ``category:`` -> ``category``."""
    return prefix.rstrip(":-_/ ") or prefix


class Ordered(list[dict[str, Any]]):
    """Records :func:`order_records` put in order, and the order they are in:
    ordered again the same way, they are returned as they are."""

    def __init__(self, records: list[dict[str, Any]], by: tuple[Any, ...]) -> None:
        super().__init__(records)
        self.by = by


def order_records(
    records: Sequence[dict[str, Any]], specs: Sequence[str], budgets: Sequence[Any]
) -> list[dict[str, Any]]:
    """Records in cell-key order: suite, scenario, turn, then the config's spec
    and budget order. Executors finish in any order; reports never do."""
    by = (tuple(specs), tuple(str(b) for b in budgets))
    if isinstance(records, Ordered) and records.by == by:
        return records
    spec_at = {s: i for i, s in enumerate(specs)}
    budget_at = {b: i for i, b in enumerate(by[1])}
    ordered = sorted(
        records,
        key=lambda r: (
            r["suite"],
            r["scenario"],
            r["turn"],
            spec_at[r["spec"]],
            budget_at[str(r["budget"])],
        ),
    )
    return Ordered(ordered, by)


def cells_frame(
    records: Sequence[Mapping[str, Any]],
    *,
    specs: Sequence[str],
    labels: Mapping[str, str],
    budgets: Sequence[Any],
    breakdown_tags: Sequence[str] = (),
) -> pd.DataFrame:
    """The records (already in cell-key order) as one typed row each."""
    import pandas as pd

    # one pass over the records (each is read once, while it is in the CPU's cache)
    fields = [
        (
            *(r.get(name) for name in _STRINGS),
            r["turn"],
            r.get("probe", False),
            r.get("t"),
            r["spec"],
            r["budget"],
            r.get("budget_tokens"),
            r.get("tags", ()),
            r["metrics"],
        )
        for r in records
    ]
    *strings, turn, probe, t, spec, budget, budget_tokens, tags, metrics = (
        list(zip(*fields, strict=True)) if fields else [()] * (len(_STRINGS) + 8)
    )
    names = sorted({m for r in metrics for m in r})
    columns: dict[str, Any] = {
        name: pd.array(list(values), dtype="string")
        for name, values in zip(_STRINGS, strings, strict=True)
    }
    columns["turn"] = pd.array(list(map(int, turn)), dtype="int64")
    columns["probe"] = pd.array(list(map(bool, probe)), dtype="bool")
    columns["t"] = pd.array([float("nan") if v is None else float(v) for v in t], dtype="float64")

    def ordered(values: list[Any], categories: Sequence[Any]) -> pd.Categorical:
        return pd.Categorical(values, dtype=pd.CategoricalDtype(list(categories), ordered=True))

    columns["spec"] = ordered(list(spec), specs)
    columns["label"] = ordered([labels[s] for s in spec], [labels[s] for s in specs])
    by_text = {str(b): b for b in budgets}
    columns["budget"] = ordered(list(map(by_text.__getitem__, map(str, budget))), budgets)
    columns["budget_tokens"] = pd.array(list(budget_tokens), dtype="Int64")
    suite, scenario = strings[1], strings[2]
    columns["cluster"] = pd.array(list(map("{}/{}".format, suite, scenario)), dtype="string")
    tag_tuples = list(map(tuple, tags))
    columns["tags"] = tag_tuples
    for prefix in breakdown_tags:
        columns[tag_column(prefix)] = pd.array(
            [
                next((t[len(prefix) :] for t in ts if t.startswith(prefix)), None)
                for ts in tag_tuples
            ],
            dtype="string",
        )
    table = pd.DataFrame.from_records(list(metrics), columns=names)
    for name in names:
        columns[name] = table[name].astype("Int64" if name in COUNTS else "float64")
    return pd.DataFrame(columns)


def load_run(path: str | Path) -> pd.DataFrame:
    """The cells of the eval run in ``path`` (a run folder, or ``reports/<config name>/latest``)
    as a DataFrame (see the module docstring for its columns). A folder that is
    not a complete run is refused with one line (:class:`InputError`)."""
    from packproof.evals.run.folder import INCOMPLETE
    from packproof.evals.run.journal import journal_path, read_results

    run = Path(path)
    if (run / INCOMPLETE).exists():
        raise InputError("", "this run has not finished its reports", source=str(run))
    journal = journal_path(run)
    try:
        text = (run / "summary.json").read_text(encoding="utf-8")
        if not journal.is_file():
            raise InputError("", f"not an eval run folder: no {journal.name}", source=str(run))
    except OSError as exc:
        raise InputError(
            "",
            f"not an eval run folder: cannot read summary.json ({exc.strerror})",
            source=str(run),
        ) from None
    try:
        summary = json.loads(text)
        strategies = summary["strategies"]
        specs = [s["spec"] for s in strategies]
        labels = {s["spec"]: s["label"] for s in strategies}
        budgets = summary["budgets"]
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(
            "", f"summary.json is not an eval summary ({exc})", source=str(run / "summary.json")
        ) from None
    records = read_results(journal)
    return cells_frame(
        order_records(records, specs, budgets),
        specs=specs,
        labels=labels,
        budgets=budgets,
        breakdown_tags=summary.get("breakdown_tags", ()),
    )
