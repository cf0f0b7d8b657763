"""``metrics.csv`` (one row per cell, every metric a column) and ``summary.json``
(the report model itself)."""

from __future__ import annotations

import csv
import io
from typing import Final

from ctxpack.evals.report.model import ReportContext, order_records
from ctxpack.packer.jsonio import canonical_array, dumps

__all__ = ["render_csv", "render_json"]


_KEYS: Final = (
    "key",
    "status",
    "suite",
    "scenario",
    "turn",
    "strategy",
    "spec",
    "budget",
    "budget_tokens",
    "mode",
)


# A spreadsheet runs a cell that starts with one of these as a formula.
_FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: object) -> object:
    """OWASP's CSV-injection defence for text cells: a leading quote makes a
    spreadsheet show the text instead of running it. Numbers are left as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def render_csv(ctx: ReportContext) -> str:
    """metrics.csv: one row per cell, every metric a column (latency excluded:
    it is the one figure that differs between identical runs); text cells that a
    spreadsheet would run as formulas are neutralised (:func:`_cell`)."""
    summary, records = ctx.summary, ctx.records
    names = sorted({m for r in records for m in r["metrics"]})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([_cell(k) for k in (*_KEYS, *names)])
    specs = [s["spec"] for s in summary["strategies"]]
    ordered = order_records(records, specs, summary["budgets"])
    values = [[r["metrics"].get(m) for m in names] for r in ordered]
    # Every float rounded as canonical() does, in one pass over the table.
    floats = [v for row in values for v in row if isinstance(v, float)]
    rounded = iter(canonical_array(floats))
    for r, row in zip(ordered, values, strict=True):
        metrics = ["" if v is None else next(rounded) if isinstance(v, float) else v for v in row]
        writer.writerow([*(_cell(r.get(k, "")) for k in _KEYS), *metrics])
    return out.getvalue()


def render_json(ctx: ReportContext) -> str:
    return dumps(ctx.summary, indent=2, prepared=True) + "\n"  # floats already significant()
