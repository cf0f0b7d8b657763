"""``packproof tune``: search a strategy's parameters with held-out conversations."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from packproof.cli.common import EXIT_OK, bounded, config_path

__all__ = ["add_parsers"]


def cmd_tune(args: argparse.Namespace) -> int:
    from packproof.evals.project import shipped_space
    from packproof.evals.tune.search import tune  # the harness, imported only here

    out, _ = tune(
        config_path(args),
        args.strategy,
        Path(args.space) if args.space else shipped_space(args.strategy),
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
    p.add_argument("--strategy", default="hybrid")
    p.add_argument("--space", help="search space YAML (default: the shipped space of the strategy)")
    p.add_argument("--jobs", type=bounded(int, 1, 256), default=2)
    p.add_argument("--executor", choices=["process", "serial", "dask"], default="process")
    p.add_argument("--out", default="reports/tune", help="output root (default reports/tune)")
    p.set_defaults(func=cmd_tune)
