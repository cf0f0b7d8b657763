"""``packproof compare RUN_A RUN_B``: two runs paired cell by cell over the
scenarios both have (docs/compare.md). The harness is imported only when the
command runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from packproof.cli.common import EXIT_OK, bounded

__all__ = ["add_parsers"]


def cmd_compare(args: argparse.Namespace) -> int:
    from packproof.evals.compare.files import default_folder, write_comparison
    from packproof.evals.compare.model import compare_runs
    from packproof.evals.compare.pairs import CELLS_FILES
    from packproof.evals.compare.text import terminal

    run_a, run_b = Path(args.run_a), Path(args.run_b)
    cmp = compare_runs(
        run_a, run_b, metrics=args.metric or (), budgets=args.budget or (), alpha=args.alpha
    )
    text = terminal(cmp, verbose=args.verbose)
    out = Path(args.out) if args.out else default_folder(cmp)
    inputs = [
        folder / name
        for path in (run_a, run_b)
        for folder in [path if path.is_dir() else path.parent]
        for name in ("summary.json", *CELLS_FILES)
    ]
    written = write_comparison(cmp, out, inputs)
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
