"""Reports read records in cell-key order, put in it once: records already in
the order asked for are returned as they are, in any other order sorted again."""

from __future__ import annotations

import random
from typing import Any

from packproof.evals.report.frame import order_records


def _records() -> list[dict[str, Any]]:
    cells = [
        {"suite": "s", "scenario": scenario, "turn": turn, "spec": spec, "budget": budget}
        for scenario in ("a", "b")
        for turn in (0, 1, 10)
        for spec in ("bm25", "chronological")
        for budget in (512, "scenario", 64)
    ]
    random.Random(0).shuffle(cells)
    return cells


def _key(r: dict[str, Any], specs: list[str], budgets: list[Any]) -> tuple[Any, ...]:
    where = [str(b) for b in budgets]
    return (r["scenario"], r["turn"], specs.index(r["spec"]), where.index(str(r["budget"])))


def test_records_are_ordered_once_per_order() -> None:
    records = _records()
    specs, budgets = ["chronological", "bm25"], [64, 512, "scenario"]
    ordered = order_records(records, specs, budgets)
    assert [_key(r, specs, budgets) for r in ordered] == sorted(
        _key(r, specs, budgets) for r in records
    )
    assert order_records(ordered, specs, budgets) is ordered
    assert order_records(ordered, list(specs), ["64", "512", "scenario"]) is ordered
    # another order: sorted again, the first list untouched
    other = order_records(ordered, ["bm25", "chronological"], budgets)
    assert other is not ordered and [r["spec"] for r in other[:3]] == ["bm25"] * 3
    assert [r["spec"] for r in ordered[:3]] == ["chronological"] * 3
    # a plain list in that order is still sorted (and the same records come back)
    plain = list(ordered)
    again = order_records(plain, specs, budgets)
    assert again is not plain and again == plain
