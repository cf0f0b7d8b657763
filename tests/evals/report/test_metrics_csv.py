"""metrics.csv: each distinct value written once (the fast path) gives the very
bytes of the csv writer fed row by row, on random tables of text, numbers and
gaps, with the text a spreadsheet would run and the text the writer must quote."""

from __future__ import annotations

import csv
import io
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packproof.evals.report import csv_json
from packproof.evals.report.csv_json import render_csv
from packproof.evals.report.model import ReportContext
from packproof.packer.jsonio import round_float

SPECS = ("bm25", "bm25+cache(low_water=0.4,recall_share=0.3)")
BUDGETS = (512, 1024)
KEYS = ("key", "status", "suite", "scenario", "turn", "strategy", "spec", "budget")
KEYS += ("budget_tokens", "mode")

texts = st.text(alphabet=st.sampled_from('ab,"\r\n=+-@\t |x'), max_size=6)
floats = st.floats(-1e200, 1e200) | st.sampled_from(
    [0.0, -0.0, 1e-05, 0.1, 1 / 3, 2.5e-10, 1e16, 123456789.123456789]
)
# a column's values: one kind each, or mixed kinds (written by the writer then)
columns = st.sampled_from(["int", "float", "text", "mixed"])


def value(kind: str) -> st.SearchStrategy[Any]:
    kinds = {
        "int": st.integers(-(10**20), 10**20),
        "float": floats,
        "text": texts,
        "mixed": st.integers(-2, 2) | st.sampled_from([0.0, 1.0, -0.0, 2.0]) | st.booleans(),
    }
    return st.none() | kinds[kind]


@st.composite
def tables(draw: st.DrawFn) -> list[dict[str, Any]]:
    kinds = draw(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), columns, max_size=4))
    scenarios = draw(st.lists(texts, min_size=1, max_size=3, unique=True))
    records = []
    for scenario in scenarios:
        for turn in range(draw(st.integers(0, 3))):
            for spec in SPECS:
                for budget in BUDGETS:
                    metrics = {m: draw(value(k)) for m, k in kinds.items() if draw(st.booleans())}
                    records.append(
                        {
                            "key": f"s|{scenario}|{turn}|{spec}|{budget}",
                            "status": draw(st.sampled_from(["ok", "=1+1"])),
                            "suite": "s",
                            "scenario": scenario,
                            "turn": turn,
                            "strategy": spec,
                            "spec": spec,
                            "budget": budget,
                            "budget_tokens": budget,
                            "mode": draw(texts),
                            "metrics": metrics,
                        }
                    )
    return records


def context(records: list[dict[str, Any]]) -> ReportContext:
    summary = {"strategies": [{"spec": s} for s in SPECS], "budgets": list(BUDGETS)}
    return ReportContext(summary, records, {})


def row_by_row(records: list[dict[str, Any]]) -> str:
    """The table as the csv writer writes it fed a row at a time: the reference."""
    names = sorted({m for r in records for m in r["metrics"]})

    def cell(v: Any) -> Any:
        if isinstance(v, str) and v.startswith(("=", "+", "-", "@", "\t", "\r")):
            return "'" + v
        return v

    def metric(v: Any) -> Any:
        return "" if v is None else round_float(v) if isinstance(v, float) else cell(v)

    order = {(s, b): i for i, (s, b) in enumerate((s, b) for s in SPECS for b in BUDGETS)}
    ordered = sorted(
        records, key=lambda r: (r["scenario"], r["turn"], order[r["spec"], r["budget"]])
    )
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*KEYS, *names])
    for r in ordered:
        writer.writerow(
            [*(cell(r.get(k, "")) for k in KEYS), *(metric(r["metrics"].get(m)) for m in names)]
        )
    return out.getvalue()


@settings(max_examples=150, deadline=None)
@given(tables())
def test_metrics_csv_is_the_writers_row_by_row(records: list[dict[str, Any]]) -> None:
    assert render_csv(context(records)) == row_by_row(records)


@settings(max_examples=50, deadline=None)
@given(tables())
def test_the_writers_path_writes_the_same(records: list[dict[str, Any]]) -> None:
    with mock.patch.object(csv_json, "_fast_cells", lambda columns, keys: None):
        assert render_csv(context(records)) == row_by_row(records)


def test_each_column_kind_takes_its_path() -> None:
    plain = [["a", "b,c", None], [1, None, 2], [0.5, None, -0.0]]
    assert csv_json._fast_cells(plain, 1) == [
        ["a", '"b,c"', ""],
        ["1", "", "2"],
        ["0.5", "", "0.0"],
    ]
    assert csv_json._fast_cells([[1, 1.0]], 0) is None  # one key of a dict, two texts
    assert csv_json._fast_cells([[True, 1]], 0) is None
    assert csv_json._fast_cells([[0.5]], 1) is None  # a key's float is not rounded
    assert csv_json._fast_cells([[float("nan")]], 0) is None  # the writer's path raises


def test_a_float_that_cannot_be_written_is_refused() -> None:
    records = [
        {
            "key": "k",
            "suite": "s",
            "scenario": "x",
            "turn": 0,
            "spec": "bm25",
            "budget": 512,
            "metrics": {"m": float("inf")},
        }
    ]
    with pytest.raises(ValueError, match="non-finite float inf cannot"):
        render_csv(context(records))
