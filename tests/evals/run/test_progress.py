"""What a terminal shows while an eval runs: a bar of cells (a replay's steps and
probes under each spec and budget, not its tasks) that stays on screen, and a
report bar naming each part of the summary it computes and each file it renders
and writes; nothing off a terminal, and the same report bytes either way. Read
from the bars' final lines, which tqdm always draws, so no check depends on
timing."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from packproof.evals.report.model import PARTS
from packproof.evals.report.renderers import RENDERERS
from packproof.evals.run.config import load_config
from packproof.evals.run.evaluate import REPORT_STEPS, SUMMARY_PART, evaluate
from packproof.evals.run.journal import RESULTS, gzip_member
from packproof.evals.run.progress import EvalProgress
from packproof.evals.run.runner import run_cells, tasks
from tests.evals.run.test_replay import REPLAY
from tests.evals.run.test_runner import TURNS, reports, write_config
from tests.evals.scenarios.test_scenario_errors import packproof
from tests.journal import records as journal_records
from tests.journal import stored_lines


class Terminal(io.StringIO):
    """A stderr that says it is a terminal, and keeps what was drawn on it."""

    def isatty(self) -> bool:
        return True


def drawn(text: str, desc: str) -> list[str]:
    """Every state of one bar, in order: tqdm redraws a line after a carriage return."""
    return [s for s in text.replace("\r", "\n").split("\n") if s.startswith(f"{desc}:")]


def test_the_bar_counts_every_cell_of_a_run_and_stays_on_screen(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path))
    screen = Terminal()
    records = run_cells(
        config,
        tmp_path / "run",
        executor="serial",
        progress=EvalProgress(REPORT_STEPS, screen, enabled=True),
    )
    cells = TURNS * 9  # 3 specs x 3 budgets
    assert len(records) == cells and len(tasks(config)) < cells  # cells, not tasks
    states = drawn(screen.getvalue(), "cells")
    assert f" 0/{cells} " in states[0]  # drawn before the first task ends
    assert f" {cells}/{cells} " in states[-1] and " cells/s" in states[-1]
    # left on screen: its final line is ended, not wiped; the report bar begins
    assert f" {cells}/{cells} " in screen.getvalue().split("\n")[0].split("\r")[-1]
    assert drawn(screen.getvalue(), "reports")[-1].endswith("reading results.jsonl.gz]")


def test_a_resumed_run_starts_the_bar_at_the_cells_it_kept(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path))
    full = run_cells(config, tmp_path / "run", executor="serial")
    kept = stored_lines(tmp_path / "run")[:10]
    (tmp_path / "run" / RESULTS).write_bytes(gzip_member(kept))
    screen = Terminal()
    bars = EvalProgress(REPORT_STEPS, screen, enabled=True)
    run_cells(config, tmp_path / "run", executor="serial", resume=True, progress=bars)
    states = drawn(screen.getvalue(), "cells")
    assert f" 10/{len(full)} " in states[0] and f" {len(full)}/{len(full)} " in states[-1]


def test_a_replay_counts_its_steps_and_probes_per_spec_and_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "r.yaml").write_text(REPLAY)  # 3 steps and a probe
    assert packproof("scenarios", "compile", "r.yaml", cwd=tmp_path).returncode == 0
    (tmp_path / "cfg.yaml").write_text(
        "name: replay-demo\nsuites: [compiled/r.jsonl]\nstrategies: [chronological, bm25]\n"
        "budgets: [4000, 1500]\nbootstrap: {resamples: 200}\n"
        "cache: {profiles: [anthropic], static_prefix_tokens: [0]}\n"
    )
    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    run = evaluate(tmp_path / "cfg.yaml", out_root=tmp_path / "out", jobs=1, executor="serial")
    cells = len(journal_records(run))
    assert cells == 4 * 2 * 2  # 2 tasks (one per spec) of 4 turns x 2 budgets
    assert f" {cells}/{cells} " in drawn(screen.getvalue(), "cells")[-1]
    assert summary_parts(screen.getvalue()) == list(PARTS)  # the replays' figures first


def summary_parts(screen: str) -> list[str]:
    """The parts of the summary the report bar named, in order, each once."""
    prefix = SUMMARY_PART.format("")
    doing = [s.rsplit(", ", 1)[-1].strip().removesuffix("]") for s in drawn(screen, "reports")]
    return list(dict.fromkeys(d.removeprefix(prefix) for d in doing if d.startswith(prefix)))


def test_report_writing_names_each_file_it_renders_and_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = write_config(tmp_path)
    quiet = evaluate(cfg, out_root=tmp_path / "quiet", jobs=1, executor="serial", progress=False)
    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    shown = evaluate(cfg, out_root=tmp_path / "shown", jobs=1, executor="serial")
    states = drawn(screen.getvalue(), "reports")
    doing = [s.rsplit(", ", 1)[-1].strip().removesuffix("]") for s in states]
    written = [name for name in RENDERERS if (shown / name).exists()]
    assert "frontier.png" not in written  # no replay: a renderer with no file
    for name in RENDERERS:
        assert f"rendering {name}" in doing
    for name in written:
        assert f"writing {name}" in doing
    assert f" {REPORT_STEPS}/{REPORT_STEPS} " in states[-1]
    assert doing[-1] == f"{len(written)} files written"
    assert summary_parts(screen.getvalue()) == list(PARTS[1:])  # no replay: no cache figures
    # the bars are stderr's alone: the reports are a quiet run's bytes (but latencies)
    assert reports(shown) == reports(quiet)
    summary = json.loads((shown / "summary.json").read_text())
    assert summary["cells"] == TURNS * 9


@pytest.mark.parametrize(
    ("screen", "enabled"),
    [(Terminal(), False), (io.StringIO(), None)],
    ids=["quiet-on-a-terminal", "not-a-terminal"],
)
def test_off_a_terminal_or_when_quiet_nothing_is_drawn(
    screen: io.StringIO, enabled: bool | None
) -> None:
    with EvalProgress(REPORT_STEPS, screen, enabled=enabled) as bars:
        bars(0, 3)
        bars(3, 3)
        bars.step("rendering summary.md")
        bars.show("writing summary.md")
        bars.close("a file written")
    assert screen.getvalue() == ""
