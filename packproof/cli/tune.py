"""``packproof tune``: search a strategy's parameters with held-out conversations."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from packproof.cli.common import EXIT_OK, add_workers, config_path

__all__ = ["add_parsers"]


def cmd_tune(args: argparse.Namespace) -> int:
    from packproof.evals.project import space_file
    from packproof.evals.tune.search import tune  # the harness, imported only here

    out, _ = tune(
        config_path(args),
        args.strategy,
        space_file(args.space, args.strategy),
        out_root=Path(args.out),
        jobs=args.jobs,
        executor=args.executor,
    )
    print((out / "tune.md").read_text("utf-8"))
    print(f"written: {out}/tune.json, tune.md")
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("tune", help="search a strategy's parameters with held-out conversations")
    p.add_argument("--config", help="eval config: suites, budgets (default ./packproof.yaml)")
    p.add_argument(
        "--strategy",
        default="hybrid",
        help="the strategy whose parameters to search (default hybrid, whose search space "
        "is shipped; any other needs --space)",
    )
    p.add_argument(
        "--space",
        metavar="SPACE",
        help="search space: a YAML file (`packproof schema space`) or a shipped space by "
        "name: hybrid, bm25-cache (bm25's cache-aware options on replays); default: the "
        "shipped space of the strategy",
    )
    add_workers(p)
    p.add_argument("--out", default="reports/tune", help="output root (default reports/tune)")
    p.set_defaults(func=cmd_tune)
