"""``metrics.csv`` (one row per cell, every metric a column; then, when the run
has replays, one row per replay group) and ``summary.json`` (the report model
itself)."""

from __future__ import annotations

import csv
import io
import re
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
    return _safe(value) if isinstance(value, str) else value


def _safe(text: str) -> str:
    """:func:`_cell` of a text."""
    return "'" + text if text.startswith(_FORMULA_START) else text


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
    # read a record at a time (records lie apart in memory), then turned into columns
    rows = [(*map(r.get, _KEYS, _BLANKS), *map(r["metrics"].get, names)) for r in ordered]
    columns: list[Sequence[Any]] = list(zip(*rows, strict=True)) or [() for _ in (*_KEYS, *names)]
    blank = [("",) * len(rows)]
    columns[len(_KEYS) : len(_KEYS)] = blank * len(replay_keys)
    columns += blank * len(extra)
    cells = _fast_cells(columns, len(_KEYS))
    if cells is not None:
        out.writelines(f"{line}\n" for line in map(",".join, zip(*cells, strict=True)))
    else:
        _write_rows(writer, list(zip(*columns, strict=True)), len(_KEYS))
    _write_rows(writer, replay_rows, 0)
    return out.getvalue()


# What a column may hold to be written without the csv writer: numbers of one
# kind (1 and 1.0 are one key of a dict), text, nothing.
_PLAIN: Final = (frozenset({type(None), int, str}), frozenset({type(None), float, str}))
# A text cell that the csv writer would quote (QUOTE_MINIMAL, "\n" ending the rows).
_QUOTED: Final = re.compile(r'[,"\r\n]')


def _fast_cells(columns: Sequence[Sequence[Any]], keys: int) -> list[list[str]] | None:
    """Each column as the csv writer writes its cells, each distinct value
    written once: text through :func:`_cell`, floats rounded as ``canonical``
    rounds them. None when a column holds anything but one kind of number,
    text and None, when one of the first ``keys`` columns holds a float, or
    when a float cannot be written (:func:`_write_rows` then says so)."""
    out = []
    for at, column in enumerate(columns):
        kinds = set(map(type, column))
        if not any(kinds <= plain for plain in _PLAIN) or (at < keys and float in kinds):
            return None  # a key's float is written unrounded, and -0.0 is 0.0 to a dict
        distinct = list(dict.fromkeys(column))
        floats = [v for v in distinct if type(v) is float]
        try:
            texts: dict[Any, str] = dict(
                zip(floats, map(repr, canonical_array(floats)), strict=True)
            )
        except ValueError:  # not finite
            return None
        for v in distinct:
            if v is None:
                texts[v] = ""
            elif type(v) is int:
                texts[v] = str(v)
            elif type(v) is str:
                texts[v] = _text(_safe(v))
        out.append(list(map(texts.__getitem__, column)))
    return out


def _text(value: str) -> str:
    """A text cell as the csv writer writes it: quoted, quotes doubled, when it
    holds a comma, a quote or a line break."""
    if not _QUOTED.search(value):
        return value
    if "\r" in value:  # whether "\r" alone makes the writer quote depends on the Python
        one = io.StringIO()
        csv.writer(one, lineterminator="\n").writerow([value, ""])
        return one.getvalue()[: -len(",\n")]
    return '"' + value.replace('"', '""') + '"'


def _write_rows(writer: Any, rows: Sequence[Sequence[Any]], keys: int) -> None:
    """Rows through the csv writer: text through :func:`_cell`, floats after
    the first ``keys`` columns rounded as ``canonical`` rounds them."""
    floats = [v for row in rows for v in row[keys:] if isinstance(v, float)]
    rounded = iter(canonical_array(floats))
    for row in rows:
        values = (
            "" if v is None else next(rounded) if isinstance(v, float) else v for v in row[keys:]
        )
        writer.writerow([*map(_cell, row[:keys]), *map(_cell, values)])


def render_json(ctx: ReportContext) -> str:
    return dumps(ctx.summary, indent=2, prepared=True) + "\n"  # floats already significant()
