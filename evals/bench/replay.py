"""Benchmark of conversation replays: ``python -m packproof.evals.bench.replay``
(``make bench``). Written to ``reports/bench/replay.json`` and printed.

**The LoCoMo replay grid** (``evals/locomo-replay.yaml``): the 5 development
conversations replayed turn by turn, their questions as probes, under every
spec, budget, shipped cache profile and static prefix size of the config, with
2 workers. ``make eval-locomo`` is timed as it runs: its four commands (the
question grid's import and eval, then this grid's), each a process (reports
included); the best of two runs. The cells alone (``run_cells``: packing,
pricing, writing and re-reading ``results.jsonl.gz``) and the reports are timed
apart, the reports of the eval's run written in a fresh process as the eval
writes them (:mod:`packproof.evals.bench.reports`), the best of two runs. The
eval's run also gives the cache-aware target
(:mod:`packproof.evals.bench.cacheaware`). Skipped when the data is not beside
the project.

**A replay of real chat text at scale**: ``--steps`` (default 10,000) messages of
the Chit Chat Challenge corpus (``chitchat-dataset``) as one conversation, each
message a step 30 s after the one before and a one-hour pause every 200 steps
(the cache goes cold), then 10 seeded probes; packed by every strategy of the
grid at 4,096 tokens and priced under every shipped profile with no static
prefix. One replay is one task (its steps are one chain), so it runs on one
core: the figure is steps per second of one conversation, pricing and the
journal's encoding included (what a worker does with the task, timed in a
fresh process as a pool's worker runs it); the best of three runs per spec, the
specs run in turn.

A figure kept as the least of its runs is the machine's speed without what a
shared machine adds; every run is written beside it.

Targets are reported, never asserted; no date is written.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, Final

import yaml

from packproof.evals.bench.cacheaware import format_report as format_cache_aware
from packproof.evals.bench.cacheaware import measure as measure_cache_aware
from packproof.evals.bench.common import (
    EXIT_OK,
    log_eval,
    machine,
    positive,
    seconds_in_fresh_process,
    timed,
)
from packproof.evals.bench.eval.locomo import LOCOMO, LOCOMO_CONFIG, imported_locomo
from packproof.evals.bench.pack.corpus import CorpusError, load_corpus, pick_prompts
from packproof.evals.bench.reports import reports_alone
from packproof.evals.metrics.cache.files import load_profiles
from packproof.evals.metrics.cache.model import Profile
from packproof.evals.run.journal import RESULTS, read_results
from packproof.evals.run.runner import Task, TaskRunner, run_cells
from packproof.evals.scenarios.format import Scenario, Turn, load_compiled
from packproof.packer.files import write_atomic
from packproof.packer.jsonio import dumpb, dumps
from packproof.packer.request import parse_request, request_to_json
from packproof.packer.result import cyclic_gc_paused
from packproof.packer.text import Analyzer

__all__ = ["chitchat_replay", "main", "replay_once"]

_PROJECT: Final = Path(__file__).resolve().parents[2]
REPLAY_CONFIG: Final = _PROJECT / "evals" / "locomo-replay.yaml"
WORKERS: Final = 2
SIZE_FACTOR: Final = 10.0  # the journal at most 1/10 of the whole records
REPORT_S: Final = 15.0  # the replay run's reports written
EVAL_LOCOMO_S: Final = 60.0  # make eval-locomo, on a quiet 2-core machine
STEPS_PER_S: Final = 1000.0  # a long replay, per spec
BARE_FACTOR: Final = 3.0  # ... or within 3x of a bare pass, whichever is slower
STEP_GAP_S: Final = 30.0
SESSION_STEPS: Final = 200
SESSION_PAUSE_S: Final = 3600.0
PROBES: Final = 10
CHITCHAT_BUDGET: Final = 4096
# Runs per figure, the least time kept (a shared machine only ever adds time)
MAKE_REPEATS: Final = 2
CHITCHAT_REPEATS: Final = 3
DEFAULT_OUT: Final = Path("reports/bench/replay.json")


def log(message: str) -> None:
    log_eval(f"replay: {message}")


def target(name: str, figure: float, floor: float, unit: str, at_most: bool) -> dict[str, Any]:
    """One target as every bench writes it: the figure, its floor (or ceiling,
    ``at_most``), their ratio and whether it is met."""
    return {
        "target": name,
        "measured": figure,
        "floor": floor,
        "ratio": figure / floor if floor else None,
        "unit": unit,
        "at_most": at_most,
        "met": figure <= floor if at_most else figure >= floor,
    }


def _whole_bytes(records: Sequence[dict[str, Any]]) -> int:
    """What the records take as whole JSON lines (the journal before it was compact)."""
    return sum(len(dumpb(r)) + 1 for r in records)


def _make_eval_locomo(qa: Path, replay: Path, out: Path) -> list[float]:
    """``make eval-locomo``'s four commands, each a process as the Makefile runs
    them, into the layouts :func:`imported_locomo` made (``qa``, ``replay``): the
    seconds of each (interpreter start to exit)."""
    cli = [sys.executable, "-m", "packproof"]
    imports = qa / "reports" / "imports" / "locomo_dev.jsonl"
    replays = replay / "reports" / "imports" / "locomo_dev_replay.jsonl"
    evals = ["--out", str(out), "--jobs", str(WORKERS), "-q"]
    commands = [
        [*cli, "import", "locomo", str(LOCOMO), "-o", str(imports)],
        [*cli, "eval", "--config", str(qa / "evals" / LOCOMO_CONFIG.name), *evals],
        [*cli, "import", "locomo", str(LOCOMO), "--replay", "-o", str(replays)],
        [*cli, "eval", "--config", str(replay / "evals" / REPLAY_CONFIG.name), *evals],
    ]
    run = partial(subprocess.run, check=True, stdout=subprocess.DEVNULL)
    return [timed(partial(run, command))[0] for command in commands]


def measure_locomo_grid() -> dict[str, Any] | None:
    """``make eval-locomo`` as it runs (its four commands, each a process; the
    evals with 2 workers), the best of :data:`MAKE_REPEATS` runs; and of the
    replay grid: the cells alone, the journal's size against the whole
    records', the time to read the journal, and the time to write the reports
    (:func:`~packproof.evals.bench.reports.reports_alone`, best of
    :data:`MAKE_REPEATS`; a replay's cache figures summed from their columns, as
    the eval does)."""
    if not LOCOMO.exists():
        log(f"LoCoMo is not at {LOCOMO}: no replay grid figure")
        return None
    with tempfile.TemporaryDirectory(prefix="packproof-replay-") as tmp:
        root = Path(tmp)
        (root / "qa").mkdir()
        (root / "replay").mkdir()
        imported_locomo(root / "qa", LOCOMO_CONFIG, "locomo_dev.jsonl")
        scenarios, imported, config = imported_locomo(
            root / "replay", REPLAY_CONFIG, "locomo_dev_replay.jsonl", replay=True
        )
        steps = sum(len(sc.turns) for sc in scenarios)
        log(f"LoCoMo replay grid: {len(scenarios)} conversations, {steps} steps, {WORKERS} workers")
        runs = []
        for k in range(MAKE_REPEATS):
            log(f"make eval-locomo's commands as it runs them, run {k + 1} of {MAKE_REPEATS}")
            runs.append(_make_eval_locomo(root / "qa", root / "replay", root / f"eval{k}"))
        qa_import, qa_s, replay_import, eval_s = min(runs, key=sum)
        run_dir = (root / "eval0" / config.name / "latest").resolve()
        # as the eval runs them: its reports read a replay's figures from the columns,
        # the cyclic collector paused while the records live
        log("the cells (their journal read as written), then the journal read")
        cells_s, cells = timed(
            lambda: len(
                run_cells(config, root / "cells", jobs=WORKERS, executor="process", whole=False)
            )
        )
        journal = run_dir / RESULTS
        with cyclic_gc_paused():
            read_s, records = timed(lambda: read_results(journal, whole=False))
            del records
        report_runs = []
        for k in range(MAKE_REPEATS):
            log(f"the reports of the eval's run, written as the eval writes them, run {k + 1}")
            report_runs.append(reports_alone(config.source, run_dir, root / f"again{k}", WORKERS))
        report_s = min(report_runs)
        compact, whole = journal.stat().st_size, _whole_bytes(read_results(journal))
        log("the cache-aware target, from the eval's run")
        cache_aware = measure_cache_aware(run_dir, config.suites)
    pricings = cells * len(config.cache_profiles) * len(config.static_prefix_tokens)
    make_runs = [sum(run) for run in runs]
    make_s = min(make_runs)
    return {
        "conversations": len(scenarios),
        "steps": steps,
        "cells": cells,
        "step_pricings": pricings,
        "profiles": len(config.cache_profiles),
        "static_prefix_tokens": list(config.static_prefix_tokens),
        "specs": len(config.specs),
        "workers": WORKERS,
        "import_seconds": imported,
        "import_commands_seconds": [qa_import, replay_import],
        "cells_seconds": cells_s,
        "eval_seconds": eval_s,
        "questions_eval_seconds": qa_s,
        "make_eval_locomo_seconds": make_s,
        "make_eval_locomo_runs": make_runs,
        "cli_evals_seconds": qa_s + eval_s,
        "statistic": f"make eval-locomo: best of {MAKE_REPEATS} runs (its commands from that run)",
        "results_bytes": compact,
        "whole_records_bytes": whole,
        "read_seconds": read_s,
        "report_seconds": report_s,
        "report_runs_seconds": report_runs,
        "targets": [
            target(
                "LoCoMo replay journal: whole records / stored bytes",
                whole / compact,
                SIZE_FACTOR,
                "x",
                at_most=False,
            ),
            target("LoCoMo replay reports written", report_s, REPORT_S, "s", at_most=True),
            target("make eval-locomo", make_s, EVAL_LOCOMO_S, "s", at_most=True),
        ],
        "cache_aware": cache_aware,
    }


def chitchat_replay(steps: int, seed: int = 0) -> Scenario:
    """``steps`` chitchat messages as one replay, then seeded probes."""
    corpus = load_corpus(steps)
    items = [
        {"id": f"m{i}", "text": text, "role": role, "turn": turn, "ordinal": i}
        for i, (text, role, turn) in enumerate(
            zip(corpus.texts, corpus.roles, corpus.turns, strict=True)
        )
    ]
    base = request_to_json(
        parse_request(
            {"items": items, "budget_tokens": CHITCHAT_BUDGET, "fresh_tail": {"count": 4}}
        ),
        with_strategy=False,
    )
    normal = base["items"]
    turns = []
    t = 0.0
    for k in range(steps):
        if k:
            t += SESSION_PAUSE_S if k % SESSION_STEPS == 0 else STEP_GAP_S
        request = {
            **base,
            "items": normal[: k + 1],
            "prompt": normal[k]["text"],
            "current_turn": normal[k]["turn"],
        }
        turns.append(Turn(request, (), {}, t=t))
    for prompt in pick_prompts(corpus.texts, PROBES, seed):
        turns.append(Turn({**base, "prompt": prompt}, (), {}, t=t + STEP_GAP_S, probe=True))
    why = f"{steps} chitchat messages replayed, then {PROBES} probes."
    return Scenario("chitchat-replay", why, ("bench",), tuple(turns), "chitchat", 1)


def _bare_pass(path: Path) -> float:
    """Seconds to read the compiled conversation once and tokenize each message
    once (bm25's analyzer): the least any replay of it could cost."""
    analyzer = Analyzer()

    def run() -> int:
        (scenario,) = load_compiled(path)
        items = scenario.turns[-1].request["items"]
        return sum(len(analyzer.terms(it["text"])) for it in items)

    return timed(run)[0]


def _replay(task: Task, spec: str, profiles: tuple[tuple[str, Profile], ...]) -> int:
    """What a worker does with the replay's task (the pool's own call): its
    records made (their cache figures in columns, as an eval keeps them) and
    encoded as the journal stores them."""
    return sum(TaskRunner((spec,), (CHITCHAT_BUDGET,), profiles=profiles)(task).cells)


def _replay_profiles() -> dict[str, Profile]:
    """The LoCoMo replay config's profiles: one per provider variant."""
    names = yaml.safe_load(REPLAY_CONFIG.read_text("utf-8"))["cache"]["profiles"]
    return {name: p for name, p in load_profiles().items() if name in names}


def _replay_alone(path: Path, spec: str) -> float:
    """Seconds of :func:`_replay` of the compiled replay ``path`` under ``spec``,
    in a fresh interpreter, as a pool's worker runs a task (this one's heap holds
    what the runs before it left); its reading of the file is not timed."""
    return seconds_in_fresh_process("packproof.evals.bench.replay", "replay_once", str(path), spec)


def replay_once(path: str, spec: str) -> float:
    """:func:`_replay_alone`'s side: the seconds of one replay."""
    (loaded,) = load_compiled(Path(path))
    task = Task("chitchat", loaded, tuple(range(len(loaded.turns))))
    return timed(partial(_replay, task, spec, tuple(_replay_profiles().items())))[0]


def measure_chitchat(steps: int) -> dict[str, Any] | None:
    """The chitchat replay, one task (one core, a fresh process) per spec and
    run, against a bare pass."""
    try:
        scenario = chitchat_replay(steps)
    except CorpusError as exc:
        log(f"{exc}: no chitchat replay figure")
        return None
    specs = ["chronological", "bm25lite", "bm25", "hybrid"]
    runs: dict[str, list[float]] = {spec: [] for spec in specs}
    with tempfile.TemporaryDirectory(prefix="packproof-replay-") as tmp:
        path = Path(tmp) / "chitchat.jsonl"
        path.write_text(dumps(scenario.to_json()) + "\n", "utf-8")
        bare = _bare_pass(path)
        for k in range(CHITCHAT_REPEATS):  # the specs in turn, each round (alternated)
            for spec in specs:
                log(f"chitchat replay: {steps} steps, {spec}, one core, run {k + 1}")
                runs[spec].append(_replay_alone(path, spec))
    per_spec = {spec: min(seconds) for spec, seconds in runs.items()}
    requests = steps + PROBES
    needed = min(STEPS_PER_S, requests / (BARE_FACTOR * bare))  # whichever is slower
    return {
        "steps": steps,
        "probes": PROBES,
        "specs": specs,
        "budget": CHITCHAT_BUDGET,
        "profiles": len(_replay_profiles()),
        "bare_seconds": bare,
        "seconds": per_spec,
        "runs_seconds": runs,
        "statistic": f"best of {CHITCHAT_REPEATS} runs per spec (each a fresh process), "
        "the specs alternated",
        "steps_per_second": {s: requests / v for s, v in per_spec.items()},
        "targets": [
            target(f"{steps}-message replay, {spec}", requests / v, needed, "steps/s", False)
            for spec, v in per_spec.items()
        ],
    }


def format_target(t: dict[str, Any]) -> str:
    """One target's line: the figure, its floor (or ceiling), the ratio, met or not."""
    bound = "<=" if t["at_most"] else ">="
    ratio = "" if t["ratio"] is None else f", ratio {t['ratio']:.2f}"
    return (
        f"  {t['target']}: {t['measured']:,.1f} {t['unit']} ({bound} {t['floor']:,.1f}"
        f"{ratio}): {'met' if t['met'] else 'NOT MET'}"
    )


def format_report(report: dict[str, Any]) -> str:
    lines = ["replay benchmark", ""]
    grid = report["locomo_grid"]
    if grid is None:
        lines.append("LoCoMo replay grid: skipped (no data)")
    else:
        lines += [
            f"LoCoMo replay grid: {grid['steps']} steps, {grid['cells']} cells, "
            f"{grid['step_pricings']} step pricings, {grid['workers']} workers",
            f"  cells {grid['cells_seconds']:.1f} s; as `packproof eval` processes: this grid "
            f"{grid['eval_seconds']:.1f} s, the questions {grid['questions_eval_seconds']:.1f} s; "
            f"imports {', '.join(f'{v:.2f}' for v in grid['import_commands_seconds'])} s; "
            "make eval-locomo runs: "
            + ", ".join(f"{v:.1f} s" for v in grid["make_eval_locomo_runs"]),
            f"  {RESULTS} {grid['results_bytes'] / 1e6:.1f} MB (whole records "
            f"{grid['whole_records_bytes'] / 1e6:.0f} MB); read {grid['read_seconds']:.1f} s, "
            "reports " + ", ".join(f"{v:.1f} s" for v in grid["report_runs_seconds"]),
            *map(format_target, grid["targets"]),
            format_cache_aware(grid["cache_aware"]),
        ]
    chat = report["chitchat"]
    if chat is None:
        lines.append("chitchat replay: skipped (pip install 'packproof[bench]')")
    else:
        lines.append(
            f"chitchat replay: {chat['steps']} steps + {chat['probes']} probes at "
            f"{chat['budget']} tokens, {chat['profiles']} profiles, one core per spec; "
            f"bare pass (read once, tokenize each message once) {chat['bare_seconds']:.2f} s"
        )
        lines += map(format_target, chat["targets"])
        lines += [
            f"  runs, {spec}: " + ", ".join(f"{v:.2f} s" for v in seconds)
            for spec, seconds in chat["runs_seconds"].items()
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m packproof.evals.bench.replay",
        description="Benchmark conversation replays: the LoCoMo replay grid and a long chat.",
    )
    parser.add_argument("--steps", type=positive, default=10_000, help="chitchat replay steps")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="report JSON path")
    args = parser.parse_args(argv)
    report = {
        "schema": "packproof.bench.replay.v1",
        "machine": machine(),
        "locomo_grid": measure_locomo_grid(),
        "chitchat": measure_chitchat(args.steps),
    }
    print(format_report(report))
    write_atomic(args.out, dumps(report, indent=2) + "\n")
    log(f"wrote {args.out}")
    return EXIT_OK


if __name__ == "__main__":  # the guard matters: process pools re-import this module
    sys.exit(main())
