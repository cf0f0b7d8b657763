"""``packproof eval``: run a config (or scenario files) and exit 1 when anything
failed, as a CI step expects.

Exit codes: 0 when every cell passed; 1 when a cell missed an expectation,
broke a hard invariant or its packer failed (the failure classes are printed,
and are the ones summary.md and junit.xml count), unless ``--no-fail``, and
when the run stopped short because a worker process died (one line says how,
and that the run folder is left INCOMPLETE with its finished cells: ``--resume``
continues it); 2 for bad input. ``--quiet`` prints one line per run instead of
summary.md; a progress bar is drawn only on a terminal.
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from packproof.cli.common import EXIT_FAIL, EXIT_OK, add_workers, bounded, config_path
from packproof.packer.errors import InputError

__all__ = ["add_parsers", "verdict"]


def _config(args: argparse.Namespace) -> Any:
    """The config to run: ``--config`` or ./packproof.yaml, with the suites given
    on the command line (YAML sources or compiled mirrors) in place of its own;
    with suites and no config at all, the starter config's strategies and budgets
    on those suites only (its own suites, a project's mirrors, are not looked for)."""
    from packproof.evals.project import CONFIG
    from packproof.evals.run.config import load_config

    if not args.suites:
        return load_config(config_path(args))
    suites = []
    for text in args.suites:
        path = Path(text)
        if not path.is_file():
            raise InputError("", "no such scenario file", source=text)
        suites.append(path)
    stems = [p.stem for p in suites]
    twice = sorted({s for s in stems if stems.count(s) > 1})
    if twice:
        raise InputError(
            "", f"two suites named {twice[0]!r}: their cells would collide", source=text
        )
    chosen = Path(args.config) if args.config else Path(CONFIG)
    config = load_config(chosen) if chosen.exists() or args.config else _starter(suites)
    return dataclasses.replace(config, suites=tuple(suites))


def _starter(suites: Sequence[Path]) -> Any:
    """The starter config (what ``packproof init`` writes) with ``suites`` as its
    suites, for ``packproof eval mine.yaml`` outside a project. It is the shipped
    file that ran: the manifest names it, with the sha256 of its bytes, as it
    names a config read from disk."""
    from packproof.evals.project import CONFIG, DATA, STARTER
    from packproof.evals.run.config import config_from
    from packproof.evals.scenarios.yamlsafe import load_yaml

    starter = DATA / STARTER[CONFIG]
    data, _ = load_yaml(starter)
    # the given files, matched literally (a name may hold glob characters)
    data = {**data, "suites": [glob.escape(str(p.resolve())) for p in suites]}
    digest = hashlib.sha256(starter.read_bytes()).hexdigest()
    return dataclasses.replace(config_from(data, Path.cwd()), source=starter, sha256=digest)


def _selection(args: argparse.Namespace) -> Any:
    from packproof.evals.run.select import Selection

    return Selection(tuple(args.suite), tuple(args.strategy), tuple(args.tag))


def verdict(run_dir: Path) -> tuple[str, bool]:
    """A finished run's one line (run id, passed or FAILED, cells, failure classes,
    where its reports are) and whether any cell failed."""
    from packproof.evals.report.failures import describe  # the harness, imported only here

    summary = json.loads((run_dir / "summary.json").read_text("utf-8"))
    failures = summary["failures"]
    failed = bool(failures["cells"] > 0)
    line = (
        f"eval {summary['manifest']['run_id']}: {'FAILED' if failed else 'passed'}: "
        f"{summary['cells']} cells, {describe(failures)}; reports in {run_dir}/"
    )
    return line, failed


def cmd_eval(args: argparse.Namespace) -> int:
    from packproof.evals.run.evaluate import evaluate  # the harness, imported only here
    from packproof.evals.run.select import describe_run, narrow

    if args.scheduler is not None and args.executor != "dask":  # else silently unused
        raise InputError(
            "--scheduler",
            "only the dask executor uses a scheduler: give --executor dask too, or leave out "
            "--scheduler",
            source="usage",
        )
    config = _config(args)
    if args.list:
        selection = _selection(args)
        print("\n".join(describe_run(narrow(config, selection), selection)))
        return EXIT_OK
    run_dir = evaluate(
        config,
        out_root=Path(args.out),
        jobs=args.jobs,
        executor=args.executor,
        resume=args.resume,
        scheduler=args.scheduler,
        packer=args.packer,
        packer_timeout=args.packer_timeout,
        selection=_selection(args),
        keep=args.keep,
        progress=not args.quiet,
    )
    line, failed = verdict(run_dir)
    if not args.quiet:
        print((run_dir / "summary.md").read_text("utf-8"))
        print(f"latest: {run_dir.parent / 'latest'}/")
    print(line)
    return EXIT_FAIL if failed and not args.no_fail else EXIT_OK


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "eval",
        help="run an eval config: strategies x scenarios x budgets; exit 1 on failures",
        description="Run an eval config. Exit 1 when a cell missed an expectation, broke a "
        "hard invariant or its packer failed (--no-fail: 0), 2 on bad input. The metrics: "
        "`packproof docs metrics`; your own packer beside the built-ins: `packproof docs "
        "external-packers`.",
    )
    p.add_argument(
        "suites",
        nargs="*",
        metavar="SUITE",
        help="scenario files to run instead of the config's suites: YAML sources (compiled "
        "in memory) or compiled .jsonl mirrors",
    )
    p.add_argument(
        "--config",
        help="eval config YAML (default ./packproof.yaml; `packproof schema config`)",
    )
    add_workers(p)
    p.add_argument("--scheduler", help="Dask scheduler address (default: a LocalCluster)")
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep finished cells of the run's journal (results.jsonl.gz)",
    )
    p.add_argument(
        "--out",
        default="reports",
        help="reports root (default reports/): runs go to <out>/<config name>/<run id>/, "
        "the newest complete one linked as <out>/<config name>/latest/",
    )
    p.add_argument(
        "--keep",
        type=bounded(int, 1, 10**6),
        metavar="N",
        help="after the run, keep only the config's N newest complete runs",
    )
    p.add_argument(
        "--packer",
        help="pack every spec with an external program, cmd:'COMMAND' (`packproof docs "
        "external-packers`; to run one beside the built-ins, name it in the config)",
    )
    p.add_argument(
        "--packer-timeout",
        type=bounded(float, 0.001, 86_400),
        default=10.0,
        help="seconds an external packer has per cell (default 10)",
    )
    p.add_argument("--suite", action="append", default=[], help="only this suite (name or pattern)")
    p.add_argument(
        "--strategy",
        action="append",
        default=[],
        help="only this strategy (label, spec or packer name; repeatable)",
    )
    p.add_argument(
        "--tag",
        action="append",
        default=[],
        help="only scenarios with this tag or pattern, e.g. 'category:*' (repeatable)",
    )
    p.add_argument("--list", action="store_true", help="print what would run, and run nothing")
    p.add_argument("--no-fail", action="store_true", help="exit 0 even when cells failed")
    p.add_argument(
        "-q", "--quiet", action="store_true", help="one line per run, no summary, no progress"
    )
    p.set_defaults(func=cmd_eval)
