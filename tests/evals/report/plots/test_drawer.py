"""The plots a second process draws are the bytes this one draws; a second process
that cannot help (never started, dead, failing) leaves them to this one, which
draws them (and raises) as before; Ctrl-C or an error ends it; and a large run's
reports are the bytes of a small run's path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import packproof.evals.run.evaluate as evaluate_module
from packproof.evals.report.model import ReportContext
from packproof.evals.report.plots.drawer import NEEDS, PLOTS, Drawer
from packproof.evals.run.evaluate import evaluate, validate_summary
from tests.evals.report.plots.test_plots import crowded
from tests.evals.run.test_runner import reports, write_config
from tests.paths import ROOT


def fresh() -> ReportContext:
    ctx = crowded()
    return ReportContext(ctx.summary, ctx.records, {})


def test_a_second_process_draws_the_bytes_drawn_here() -> None:
    here = fresh()
    expected = {name: plot(here) for name, plot in PLOTS.items()}
    there = fresh()
    with Drawer() as drawer:
        drawer.draw(there)
        waited: list[bool] = []
        drawer.into(there, lambda: waited.append(True))
    assert there.made == expected  # in before any renderer asks
    assert all(expected.values())
    assert {name: plot(there) for name, plot in PLOTS.items()} == expected


def test_each_plot_reads_of_the_summary_only_what_it_needs() -> None:
    here = fresh()
    summary = {**here.summary, "confidence": 0.9}  # not the plots' default
    for name, plot in PLOTS.items():
        part = {k: summary[k] for k in NEEDS[name]}
        whole = plot(ReportContext(summary, here.records, {}))
        assert plot(ReportContext(part, here.records, {})) == whole, name


@pytest.mark.parametrize("parts", ["whole", "broken", "cells later"])
def test_the_plots_drawn_from_parts_of_a_summary_are_the_same(parts: str) -> None:
    here = fresh()
    expected = {name: plot(here) for name, plot in PLOTS.items()}
    there = fresh()
    summary = there.summary
    first = {"strategies": summary["strategies"], "replay": summary["replay"]}
    second = {k: summary[k] for k in ("strategies", "confidence", "groups")}
    with Drawer() as drawer:
        if parts == "broken":  # parts the plots fail on: drawn again from the whole summary
            drawer.early({**first, "strategies": None}, there.records)
            drawer.early({**second, "groups": None})
        elif parts == "cells later":  # latency.png waits for the cells
            drawer.early(first)
            drawer.early(second, there.records)
        else:
            drawer.early(first, there.records)
            drawer.early(second)
        drawer.draw(there)
        drawer.into(there)
    assert there.made == expected


def test_the_second_process_checks_the_summary_it_holds() -> None:
    ctx = fresh()
    with Drawer() as drawer:
        drawer.draw(ctx, validate_summary)
        errors = drawer.into(ctx)
    assert errors == validate_summary(ctx.summary)
    assert errors  # the plots' synthetic summary is no eval summary
    with Drawer() as drawer:
        drawer.draw(ctx)  # nothing to check: checked here
        assert drawer.into(ctx) is None


def test_without_a_second_process_the_plots_are_drawn_here() -> None:
    ctx = fresh()
    with Drawer(enabled=False) as drawer:
        drawer.draw(ctx)
        drawer.into(ctx)
    assert ctx.made == {}


def test_a_dead_second_process_leaves_the_plots_to_this_one() -> None:
    ctx = fresh()
    with Drawer() as drawer:
        drawer._process.kill()
        drawer._process.wait()
        drawer.draw(ctx)
        drawer.into(ctx)
    assert ctx.made == {}
    assert PLOTS["latency.png"](ctx)  # drawn here


def test_a_plot_that_fails_there_is_drawn_and_fails_here() -> None:
    ctx = fresh()
    broken = ReportContext({**ctx.summary, "groups": None}, ctx.records, {})
    with Drawer() as drawer:
        drawer.draw(broken)
        drawer.into(broken)
    assert broken.made == {}
    with pytest.raises(TypeError):
        PLOTS["recall_vs_budget.png"](broken)


def test_an_interrupt_ends_the_second_process() -> None:
    with pytest.raises(KeyboardInterrupt), Drawer() as drawer:
        process = drawer._process
        raise KeyboardInterrupt
    assert process.poll() is not None  # ended, and waited for


def test_the_second_process_runs_none_of_the_callers_main_module(tmp_path: Path) -> None:
    """A script with no ``if __name__ == "__main__"`` guard is not run again there."""
    marker = tmp_path / "ran"
    script = tmp_path / "script.py"
    script.write_text(
        "import pathlib\n"
        f"pathlib.Path({str(marker)!r}).open('a').write('x')\n"
        "from packproof.evals.report.plots.drawer import Drawer\n"
        "from tests.evals.report.plots.test_drawer import fresh\n"
        "ctx = fresh()\n"
        "with Drawer() as drawer:\n"
        "    drawer.draw(ctx)\n"
        "    drawer.into(ctx)\n"
        "assert ctx.made, 'not drawn there'\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "x"


def test_a_large_run_writes_the_reports_of_a_small_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = write_config(tmp_path)
    small = evaluate(cfg, out_root=tmp_path / "small", jobs=1, executor="serial", progress=False)
    monkeypatch.setattr(evaluate_module, "MIN_CELLS", 0)  # every run is large
    large = evaluate(cfg, out_root=tmp_path / "large", jobs=1, executor="serial", progress=False)
    assert reports(large) == reports(small)
    for name in ("recall_vs_budget.png", "recall_vs_stability.png"):  # no latency in them
        assert (large / name).read_bytes() == (small / name).read_bytes()
    assert (large / "latency.png").exists()
