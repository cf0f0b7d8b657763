"""``packproof eval``: run a config's grid and write its reports.

Reports go to ``reports/<config name>/<run-id>/``, and ``reports/<config
name>/latest`` points at the newest complete run of that config, so two configs
never overwrite each other. The run id is the config name and a short hash of
what the results are a function of (:mod:`~packproof.evals.run.identity`: the
config, suites, specs, filters, packproof's own code, an external packer's
command and the files it names, a function packer's source), never a clock:
two evals that can differ in a result get two folders, and the same inputs
find their earlier run (``--resume``). Every report is rendered in memory
before any is written, and each file is written atomically, so a failure
leaves no half-written report. ``keep`` prunes the config's older complete
runs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import numbers
import platform
import subprocess
import sys
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, Final

from packproof.evals.report.model import ReportContext, build_report, order_records
from packproof.evals.report.plots.drawer import MIN_CELLS, Drawer
from packproof.evals.report.renderers import RENDERERS
from packproof.evals.run import identity
from packproof.evals.run.config import EvalConfig, load_config
from packproof.evals.run.executors import WorkerDied, check_executor, ships
from packproof.evals.run.external import close_packers, parse_packer
from packproof.evals.run.folder import check_out, owned, prune, safe_component, switch_latest
from packproof.evals.run.identity import command_files, packproof_sha256
from packproof.evals.run.packers import start_packers
from packproof.evals.run.progress import EvalProgress
from packproof.evals.run.runner import run_cells, tasks
from packproof.evals.run.select import Selection, narrow
from packproof.evals.schemafiles import validator
from packproof.packer import __version__
from packproof.packer.errors import InputError, MissingExtraError
from packproof.packer.files import write_atomic
from packproof.packer.result import cyclic_gc_paused

__all__ = [
    "MAX_JOBS",
    "MAX_KEEP",
    "REPORT_MODULES",
    "SUMMARY_PART",
    "check_count",
    "evaluate",
    "manifest",
    "validate_summary",
    "write_reports",
]

MAX_JOBS: Final = 256  # worker processes, as --jobs allows
MAX_KEEP: Final = 10**6  # complete runs kept, as --keep allows
# The report bar's steps: read results.jsonl, compute the summary statistics,
# render each file, write them.
REPORT_STEPS: Final = 1 + 1 + len(RENDERERS) + 1
SUMMARY_STEP: Final = "computing the summary statistics"
SUMMARY_PART: Final = "summary: {}"  # then each part of it, as it starts (model.PARTS)


def check_count(value: Any, where: str, low: int, high: int) -> int:
    """A whole number in [low, high] (not a bool, not a float such as 1.5),
    named ``where`` when it is not: checked before anything is written."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(
            where, "not a whole number", expected=f"an integer in [{low}, {high}]", found=value
        )
    number = int(value)
    if not low <= number <= high:
        raise InputError(
            where, "out of range", expected=f"an integer in [{low}, {high}]", found=number
        )
    return number


def validate_summary(summary: Any) -> list[str]:
    """Every violation of the summary schema, as "/pointer: message" lines."""
    errors = sorted(
        validator("eval-summary.v1.json").iter_errors(summary), key=lambda e: list(e.absolute_path)
    )
    return ["/" + "/".join(map(str, e.absolute_path)) + ": " + e.message for e in errors]


def _require_extra() -> None:
    """Checked before any work: a missing plotting library must not surface only
    after the whole grid has run. Found, not imported: a large run's plots are
    drawn in a second process, and the report's modules are imported while the
    cells run (:func:`_prefetching`)."""
    for module in ("scipy", "tqdm", "matplotlib", "pandas"):
        if importlib.util.find_spec(module) is None:
            raise MissingExtraError("packproof eval", "eval", module)


# What the reports import that the cells do not (about half a second): imported
# while the workers run the cells, in a thread of this otherwise idle process.
REPORT_MODULES: Final = ("pandas", "scipy.stats")


def _prefetching(progress: Callable[[int, int], None], idle: bool) -> Callable[[int, int], None]:
    """``progress``, which, once a task has finished (the workers are started:
    no fork copies the thread), imports :data:`REPORT_MODULES` in a thread
    when this process is ``idle`` meanwhile. Its first call gives the cells a
    resume kept, before any task."""
    started, before = not idle, -1

    def counted(done: int, total: int) -> None:
        nonlocal started, before
        progress(done, total)
        if before < 0:
            before = done
        elif done > before and not started:
            started = True
            threading.Thread(target=_import_all, name="packproof-imports", daemon=True).start()

    return counted


def _import_all() -> None:
    for module in REPORT_MODULES:
        importlib.import_module(module)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _git_commit(root: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def manifest(config: EvalConfig) -> dict[str, Any]:
    """What a reader needs to reproduce the figures: every input the run id
    hashes (:mod:`~packproof.evals.run.identity`), and where it ran."""
    root = config.source.resolve().parent.parent
    every = tasks(config)
    counters = (
        [config.token_counter]
        if config.token_counter
        else sorted({turn.request["token_counter"] for t in every for turn in t.scenario.turns})
    )
    folders = [config.source.resolve().parent]  # with the working folder: a packer's files
    return {
        "name": config.name,
        "packproof_version": __version__,
        "packproof_sha256": packproof_sha256(),
        "git_commit": _git_commit(root),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "config": {"file": config.source.name, "sha256": config.sha256},
        "suites": [{"file": p.name, "sha256": _sha256(p)} for p in config.suites],
        # per scenario, so that `packproof compare` can tell which ones changed
        "scenarios": {
            key: scenario.sha256
            for key, scenario in {f"{t.suite}/{t.scenario.id}": t.scenario for t in every}.items()
        },
        "strategies": list(config.specs),
        **(
            {"packers": {name: p.fingerprint(folders) for name, p in config.packers.items()}}
            if config.packers
            else {}
        ),
        "budgets": list(config.budgets),
        "token_counters": counters,
        "seed": config.seed,
        "bootstrap_resamples": config.resamples,
        "confidence": config.confidence,
        **(
            {
                "cache": {
                    "profiles": {
                        name: dataclasses.asdict(p) for name, p in config.cache_profiles.items()
                    },
                    "static_prefix_tokens": list(config.static_prefix_tokens),
                }
            }
            if any(t.scenario.replay for t in every)
            else {}
        ),
    }


def evaluate(
    config: Path | EvalConfig,
    *,
    out_root: Path,
    jobs: int = 2,
    executor: str = "process",
    resume: bool = False,
    scheduler: str | None = None,
    packer: str | None = None,
    packer_timeout: float = 10.0,
    selection: Selection | None = None,
    keep: int | None = None,
    progress: bool = True,
) -> Path:
    """Run the grid and write every report; returns the run directory. A
    worker process that dies stops the run (:class:`WorkerDied`, naming the
    run folder it leaves ``INCOMPLETE``)."""
    jobs = check_count(jobs, "jobs", 1, MAX_JOBS)
    if keep is not None:
        keep = check_count(keep, "keep", 1, MAX_KEEP)
    _require_extra()
    selection = selection or Selection()
    config = narrow(config if isinstance(config, EvalConfig) else load_config(config), selection)
    argv = parse_packer(packer) if packer else None
    info = {**manifest(config), "packer": packer or "builtin"}
    if argv is not None:
        folders = [config.source.resolve().parent]
        info["packer_files"] = command_files(argv, folders, "--packer")
    if selection:
        info["filters"] = selection.to_json()
    name = safe_component(config.name)
    run_id = identity.run_id(name, info)
    run_dir = out_root / name / run_id
    check_executor(executor)
    check_out(out_root, run_dir.parent)  # never a user's file where a run goes
    close_packers()  # packers this process started for an earlier eval ran older files
    # Every packer can run (bad input, one line naming it) before anything is written.
    start_packers(config.packers, argv, packer_timeout, executor, jobs)
    # On a terminal only (never a CI log): the cells, then each step of the reports.
    bars = EvalProgress(REPORT_STEPS, sys.stderr, enabled=progress and sys.stderr.isatty())
    # One run per folder, INCOMPLETE until every report is written. The records
    # are millions of acyclic objects: the cyclic collector, resumed while they
    # live, would scan each of them for nothing, so it waits until they are gone.
    with owned(run_dir), bars, cyclic_gc_paused():
        try:
            records = run_cells(
                config,
                run_dir,
                jobs=jobs,
                executor=executor,
                resume=resume,
                scheduler=scheduler,
                progress=_prefetching(bars, ships(executor, jobs)),
                packer=argv,
                timeout=packer_timeout,
                whole=False,  # the report sums a replay's cache figures from its columns
            )
        except WorkerDied as exc:
            raise exc.left(run_dir) from None
        info = {**info, "run_id": run_id}
        write_reports(config, records, info, run_dir, executor, jobs, bars)
        del records
    switch_latest(run_dir.parent, run_dir)  # only a complete run becomes latest
    if keep is not None:
        prune(run_dir.parent, keep)
    return run_dir


def write_reports(
    config: EvalConfig,
    records: list[dict[str, Any]],
    info: dict[str, Any],
    run_dir: Path,
    executor: str,
    jobs: int,
    bars: EvalProgress | None = None,
) -> None:
    """Build the report model once, render every format, then write them all;
    ``bars`` shows each of the :data:`REPORT_STEPS` steps as it starts."""
    bars = bars or EvalProgress(REPORT_STEPS, sys.stderr, enabled=False)
    # a large run's plots are drawn in a second process, started now to import matplotlib
    with Drawer(enabled=len(records) >= MIN_CELLS) as drawer:
        outputs = _render(config, records, info, executor, jobs, bars, drawer)
    bars.step("writing")
    for name, content in outputs.items():
        bars.show(f"writing {name}")
        write_atomic(run_dir / name, content)
    bars.close(f"{len(outputs)} files written")


def _render(
    config: EvalConfig,
    records: list[dict[str, Any]],
    info: dict[str, Any],
    executor: str,
    jobs: int,
    bars: EvalProgress,
    drawer: Drawer,
) -> dict[str, str | bytes]:
    """Every report's content, by file name (the plots from ``drawer`` when it
    drew them)."""
    labels = config.labels
    bars.step(SUMMARY_STEP)
    records = order_records(records, config.specs, config.budgets)  # once, for every report
    summary = build_report(
        records,
        specs=config.specs,
        labels=labels,
        budgets=config.budgets,
        baseline=config.baseline,
        resamples=config.resamples,
        confidence=config.confidence,
        seed=config.seed,
        manifest=info,
        run={"executor": executor, "jobs": jobs},
        breakdown_tags=config.breakdown_tags,
        cache_profiles=config.cache_profiles,
        static_prefix_tokens=config.static_prefix_tokens,
        compare=config.compare,
        packers={name: p.describe() for name, p in config.packers.items()},
        ready=partial(drawer.early, records=records),  # plots drawn as their parts are ready
        doing=lambda part: bars.show(SUMMARY_PART.format(part)),
    )
    scenarios = {t.scenario.id: t.scenario for t in tasks(config)}
    ctx = ReportContext(summary, records, scenarios)
    # drawn, and the summary checked, while the text reports render
    drawer.draw(ctx, validate_summary)
    outputs: dict[str, str | bytes] = {}
    errors = None
    for name, render in RENDERERS.items():
        bars.step(f"rendering {name}")
        if name == "report.html":  # it embeds the plots
            errors = drawer.into(ctx, lambda: bars.show("report.html: waiting for the plots"))
        if (out := render(ctx)) is not None:  # None: no file (a plot without data)
            outputs[name] = out
    if errors is None:  # not checked in the second process
        errors = validate_summary(summary)
    if errors:  # a bug, not bad input: never write a summary that breaks its contract
        raise RuntimeError("summary.json violates its schema: " + "; ".join(errors[:3]))
    return outputs
