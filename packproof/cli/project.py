"""``packproof init`` (a starter project: eval config, gates file, example scenarios)
and ``packproof baseline`` (record a run as the baseline the gate compares with)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from packproof.cli.common import EXIT_OK, add_workers, config_path
from packproof.packer.errors import InputError
from packproof.packer.files import Input, check_targets

__all__ = ["add_parsers"]


def cmd_init(args: argparse.Namespace) -> int:
    from packproof.evals.project import init_project  # the harness, imported only here

    folder = Path(args.dir)
    for path in init_project(folder):
        print(f"wrote {path}")
    where = "" if folder == Path(".") else f"cd {folder} && "
    print(f"next: {where}packproof scenarios compile && packproof baseline")
    print("then, after each change: packproof eval && packproof gate")
    return EXIT_OK


def cmd_baseline(args: argparse.Namespace) -> int:
    # the harness, imported only here
    from packproof.evals.project import BASELINE, baseline_files, write_baseline

    out = Path(args.out)
    if args.run is not None:
        run_flags = {"--config": args.config, "--jobs": args.jobs, "--executor": args.executor}
        given = [flag for flag, value in run_flags.items() if value is not None]
        if given:
            raise InputError(
                "",
                f"{given[0]} applies when baseline runs the eval, not with --from (a finished run)",
                source="usage",
            )
        run_dir = Path(args.run)
    else:
        from packproof.cli.run import verdict
        from packproof.evals.run.evaluate import evaluate

        config = config_path(args)
        # before the eval runs: the run it records is known after, and checked then
        check_targets(baseline_files(out), [Input(config, "the eval config")])
        run_dir = evaluate(
            config,
            out_root=Path("reports"),
            jobs=args.jobs or 2,
            executor=args.executor or "process",
            progress=not args.quiet,
        )
        line, failed = verdict(run_dir)
        print(line)
        if failed:  # as `packproof eval --no-fail`: the run is what it is, and is recorded
            print("note: the baseline records this run's failing cells as they are")
    recorded = write_baseline(run_dir, out)
    for path in recorded.files:
        print(f"wrote {path}")
    print(
        f"the baseline is now run {recorded.run_id} ({recorded.run}/); "
        f"review the change and commit {out}/"
    )
    gate = "packproof gate" if out == BASELINE else f"packproof gate --baseline {out}/summary.json"
    print(f"next, after each change: packproof eval && {gate}")
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    from packproof.evals.project import BASELINE  # a path: loads nothing heavy

    p = sub.add_parser(
        "init", help="write a starter eval config, gates file and example scenario file"
    )
    p.add_argument("dir", nargs="?", default=".", help="folder to write into (default .)")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser(
        "baseline",
        help="run the eval (or take a finished run) and record it as the baseline the gate "
        "compares with",
        description="Record the baseline `packproof gate` compares each run with: the run's "
        "summary.json, and its metrics.csv gzipped as metrics.csv.gz (the cells "
        "`packproof gate --significance` pairs), written to --out (default reports/baseline/). "
        "By default it runs the eval of the config, as `packproof eval --no-fail` does (a run "
        "with failing cells is recorded all the same); with --from it takes a finished run. "
        "Review the change and commit it: it is what later runs are judged against.",
    )
    p.add_argument(
        "--config",
        help="eval config YAML to run (default ./packproof.yaml); its run goes to "
        "reports/<config name>/ as `packproof eval` writes it",
    )
    p.add_argument(
        "--from",
        dest="run",
        metavar="RUN_DIR",
        help="record this finished run instead of running the eval: a complete run folder, "
        "e.g. reports/<config name>/latest",
    )
    p.add_argument(
        "--out",
        default=str(BASELINE),
        metavar="DIR",
        help=f"where to write summary.json and metrics.csv.gz (default {BASELINE}; "
        "`packproof gate` reads it by default)",
    )
    add_workers(p, defaults=False)  # None when not given: refused with --from
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar while the eval runs")
    p.set_defaults(func=cmd_baseline)
