"""``metrics.csv`` (one row per cell, every metric a column; then, when the run
has replays, one row per replay group) and ``summary.json`` (the report model
itself)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any, Final

from packproof.evals.report.model import ReportContext, order_records
from packproof.evals.report.replay import CHAIN_STATS, PROBE_STATS
from packproof.packer.jsonio import canonical_array, dumps

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


# Replay runs add these: the key columns of a replay group row (empty in cell
# rows), and its counts and means beside the cell metrics.
_REPLAY_KEYS: Final = ("profile", "static_prefix_tokens")
_REPLAY_VALUES: Final = ("chains", "steps", "probes", *CHAIN_STATS, *PROBE_STATS)

_BLANKS: Final = ("",) * len(_KEYS)  # a key column a record lacks is left empty

# A spreadsheet runs a cell that starts with one of these as a formula.
_FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: object) -> object:
    """OWASP's CSV-injection defence for text cells: a leading quote makes a
    spreadsheet show the text instead of running it. Numbers are left as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _replay_rows(
    groups: Sequence[Mapping[str, Any]], names: Sequence[str]
) -> tuple[list[str], list[list[Any]]]:
    """The extra columns, and one row per replay group: its key (``replay|
    profile|static prefix|spec|budget``), the strategy columns, then its counts
    and means (a cell-metric column it shares, such as prefix_stability, holds
    the group's mean)."""
    extra = [v for v in _REPLAY_VALUES if v not in names]
    rows = []
    for g in groups:
        key = f"replay|{g['profile']}|{g['static_prefix_tokens']}|{g['spec']}|{g['budget']}"
        head = {"key": key, "strategy": g["label"], "spec": g["spec"], "budget": g["budget"]}

        def value(name: str, g: Mapping[str, Any] = g) -> Any:
            v = g.get(name)
            return v["mean"] if isinstance(v, dict) else v

        rows.append(
            [
                *(head.get(k, "") for k in _KEYS),
                g["profile"],
                g["static_prefix_tokens"],
                *(value(m) for m in names),
                *(value(m) for m in extra),
            ]
        )
    return extra, rows


def render_csv(ctx: ReportContext) -> str:
    """metrics.csv: one row per cell, every metric a column (latency excluded:
    it is the one figure that differs between identical runs), then one row per
    replay group (:func:`_replay_rows`; those columns only when the run has
    replays); text cells that a spreadsheet would run as formulas are
    neutralised (:func:`_cell`)."""
    summary, records = ctx.summary, ctx.records
    names = sorted({m for r in records for m in r["metrics"]})
    groups = (summary.get("replay") or {}).get("groups", [])
    extra, replay_rows = _replay_rows(groups, names) if groups else ([], [])
    replay_keys = _REPLAY_KEYS if groups else ()
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([_cell(k) for k in (*_KEYS, *replay_keys, *names, *extra)])
    specs = [s["spec"] for s in summary["strategies"]]
    ordered = order_records(records, specs, summary["budgets"])
    values = [list(map(r["metrics"].get, names)) for r in ordered]
    # Every float rounded as canonical() does, in one pass over the table.
    floats = [v for row in values for v in row if isinstance(v, float)]
    floats += [v for row in replay_rows for v in row if isinstance(v, float)]
    rounded = iter(canonical_array(floats))
    for r, row in zip(ordered, values, strict=True):
        metrics = ["" if v is None else next(rounded) if isinstance(v, float) else v for v in row]
        keys = map(_cell, map(r.get, _KEYS, _BLANKS))
        writer.writerow([*keys, *([""] * len(replay_keys)), *metrics, *([""] * len(extra))])
    for row in replay_rows:
        writer.writerow(
            ["" if v is None else next(rounded) if isinstance(v, float) else _cell(v) for v in row]
        )
    return out.getvalue()


def render_json(ctx: ReportContext) -> str:
    return dumps(ctx.summary, indent=2, prepared=True) + "\n"  # floats already significant()
