"""The eval benchmark's extra-strategy figures add up, and its targets are
judged from what was measured."""

from __future__ import annotations

from pathlib import Path

import pytest

from packproof.evals.bench.eval.extra import measure_extra
from packproof.evals.bench.eval.report import evaluate_targets, format_extra
from packproof.evals.run.config import load_config
from tests.evals.run.test_runner import TURNS, write_config


def test_extra_strategy_figures_add_up_and_are_judged(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, budgets=["scenario", 32]))
    extra = measure_extra(config, "bm25", ["clarity", "chronological"], 1)
    assert extra["turns"] == TURNS
    assert extra["cells_per_strategy"] == extra["turns"] * 2
    ms = 1000 / extra["cells_per_strategy"]
    assert extra["first_ms_per_cell"] == pytest.approx(extra["first_seconds"] * ms)
    for name in ("clarity", "chronological"):
        figures = extra["extras"][name]
        added = figures["seconds_with_first"] - extra["first_seconds"]
        assert figures["extra_seconds"] == pytest.approx(added)
        assert figures["extra_over_first"] == pytest.approx(added / extra["first_seconds"])

    report = {"config": {"name": "t"}, "extra_strategy": extra, "locomo": None}
    targets = evaluate_targets(report)
    assert [t["measured"] for t in targets] == [
        extra["extras"][n]["extra_over_first"] for n in ("clarity", "chronological")
    ]
    assert [t["met"] for t in targets] == [t["measured"] < 0.10 for t in targets]
    text = "\n".join(format_extra(extra, "t", 1))
    assert "+ clarity" in text and "+ chronological" in text and "bm25 (first)" in text
