"""``packproof compare RUN_A RUN_B``: two runs paired cell by cell over the
scenarios both have (docs/compare.md). The harness is imported only when the
command runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from packproof.cli.common import EXIT_OK, bounded
from packproof.packer.files import check_targets

__all__ = ["add_parsers"]


def cmd_compare(args: argparse.Namespace) -> int:
    from packproof.evals.compare.files import comparison_files, default_folder, write_comparison
    from packproof.evals.compare.model import compare_runs
    from packproof.evals.compare.text import terminal
    from packproof.evals.project import run_files

    run_a, run_b = Path(args.run_a), Path(args.run_b)
    reads = [*run_files(run_a, "run A"), *run_files(run_b, "run B")]
    if args.out:  # before any work; the default folder is named from the runs' ids
        check_targets(comparison_files(Path(args.out)), reads)
    cmp = compare_runs(
        run_a, run_b, metrics=args.metric or (), budgets=args.budget or (), alpha=args.alpha
    )
    text = terminal(cmp, verbose=args.verbose)
    out = Path(args.out) if args.out else default_folder(cmp)
    written = write_comparison(cmp, out, reads)
    print(text, end="")
    print(f"\nwritten: {out}/ ({', '.join(p.name for p in written)})")
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "compare",
        help="pair two runs cell by cell over what both have: what changed, what flipped",
        description="Pair two runs cell by cell: the paired differences with intervals over "
        "scenarios, the scenarios that flipped, and a plot. What each figure means: "
        "`packproof docs compare`.",
    )
    p.add_argument("run_a", metavar="RUN_A", help="the reference run (before): a run folder")
    p.add_argument("run_b", metavar="RUN_B", help="the candidate run (after): a run folder")
    p.add_argument(
        "--metric",
        action="append",
        metavar="M",
        help="a metric to compare (repeatable; the first is the main one; default: "
        "evidence_recall and the other headline metrics both runs have)",
    )
    p.add_argument("--budget", action="append", metavar="B", help="only this budget (repeatable)")
    p.add_argument(
        "--out",
        help="output folder (default reports/compare/<A run id>-vs-<B run id>/; "
        "<run id>-vs-itself/ for one run folder on both sides)",
    )
    p.add_argument(
        "--alpha",
        type=bounded(float, 1e-9, 0.5),
        default=0.05,
        help="significance level of the sign-flip test (default 0.05)",
    )
    p.add_argument("--verbose", action="store_true", help="every row of every metric, every flip")
    p.set_defaults(func=cmd_compare)
