"""What summary.md and report.html say first: PASSED or FAILED, the failing
cells by class, and where they failed, capped, by hand."""

from __future__ import annotations

from typing import Any

from packproof.evals.report.failures import by_scenario, tally
from packproof.evals.report.status import budget_name, headline, place, turns_text, where, word


def code(text: str) -> str:
    return f"`{text}`"


def cell(scenario: str, turn: int, spec: str, budget: Any, **metrics: Any) -> dict[str, Any]:
    """A record in the runner's format, judged and passing unless ``metrics`` say not."""
    return {
        "key": f"s/{scenario}#{turn}|{spec}|{budget}",
        "suite": "s",
        "scenario": scenario,
        "turn": turn,
        "spec": spec,
        "budget": budget,
        "status": "ok",
        "failures": ["expected x"] if metrics.get("expectation_pass") == 0.0 else [],
        "metrics": {"expectation_pass": 1.0, **metrics},
    }


def summary(records: list[dict[str, Any]], judged: int = 4) -> dict[str, Any]:
    return {
        "failures": tally(records, {"bm25(k1=1.2)": "bm25"}),
        "groups": [{"expectations": {"total": judged, "passed": judged}}],
        "expectation_failures": [],
    }


MISSED = {"expectation_pass": 0.0}
RECORDS = [
    cell("trust-x", 0, "bm25(k1=1.2)", "scenario", **MISSED),
    cell("trust-x", 2, "bm25(k1=1.2)", "scenario", **MISSED),
    cell("trust-x", 1, "bm25(k1=1.2)", "scenario"),
    cell("anchors", 3, "newest", 32, anchors_lost=1),
    cell("a1", 0, "newest", 32, **MISSED),
    cell("a2", 0, "newest", 32, **MISSED),
    cell("a3", 0, "newest", 32, **MISSED),
]


def test_a_failing_run_says_failed_with_its_cells_by_class() -> None:
    s = summary(RECORDS)
    assert word(s) == "FAILED"
    assert headline(s) == (
        "6 failing cells: 5 missed expectations; 1 broke hard invariants (anchors_lost 1)"
    )


def test_where_names_the_first_scenarios_of_each_class_and_counts_the_rest() -> None:
    # the tally sorts its places: s/a1, s/a2, s/a3, s/trust-x (expectations)
    assert where(summary(RECORDS), code) == [
        "missed expectations in 4 scenarios: `s/a1` under `newest` (turn #0), at budget 32; "
        "`s/a2` under `newest` (turn #0), at budget 32; "
        "`s/a3` under `newest` (turn #0), at budget 32; and 1 more",
        "broke hard invariants in 1 scenario: `s/anchors` under `newest` (turn #3), at budget 32",
    ]
    assert where(summary(RECORDS), code, shown=4)[0].endswith(
        "; `s/trust-x` under `bm25` (turns #0, #2), at own budget"
    )


def test_a_passing_run_says_passed_and_why() -> None:
    passing = summary([cell("a1", 0, "newest", 32)])
    assert (word(passing), where(passing, code)) == ("PASSED", [])
    assert headline(passing) == (
        "all 4 judged cells met their expectations, and no cell failed or broke a hard invariant"
    )
    assert headline(summary([], judged=0)) == (
        "no cell failed or broke a hard invariant (none was judged against expectations)"
    )


def test_a_summary_from_before_failures_were_counted_still_says_failed() -> None:
    old = {"groups": [], "expectation_failures": [{"key": "k", "failures": ["x"]}]}
    assert (word(old), headline(old), where(old, code)) == ("FAILED", "1 failed expectations", [])


def test_places_turns_and_budgets_read_as_written() -> None:
    assert turns_text([3]) == "turn #3"
    assert turns_text(list(range(9)), shown=3) == "turns #0, #1, #2 and 6 more"
    assert budget_name("scenario", code) == "own budget"
    assert budget_name("32", code) == "budget 32"
    assert budget_name("x<y", code) == "budget `x<y`"  # data goes through code
    one = {"scenario": "s/a", "class": "expectations"}
    places = [
        {**one, "label": "bm25", "budget": "64", "turns": [0, 2]},
        {**one, "label": "hybrid", "budget": "scenario", "turns": [1]},
    ]
    # budgets differ: each strategy says its own; the scenario goes through its formatter
    assert place(places, code, str.upper) == (
        "S/A under `bm25` (turns #0, #2 at budget 64), `hybrid` (turn #1 at own budget)"
    )
    many = [{**one, "label": f"x{i}", "budget": "8", "turns": [i]} for i in range(5)]
    assert place(many, code) == (
        "`s/a` under `x0` (turn #0), `x1` (turn #1), `x2` (turn #2) and 2 more, at budget 8"
    )


def test_by_scenario_groups_the_places_of_each_scenario_in_order() -> None:
    grouped = by_scenario(summary(RECORDS)["failures"])
    assert list(grouped) == ["s/a1", "s/a2", "s/a3", "s/anchors", "s/trust-x"]
    assert [(e["label"], e["turns"]) for e in grouped["s/trust-x"]] == [("bm25", [0, 2])]
    assert by_scenario({"cells": 0}) == {}
