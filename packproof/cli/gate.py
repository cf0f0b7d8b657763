"""``packproof gate``: an eval summary against the baseline; exit 1 on a regression."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from packproof.cli.common import EXIT_FAIL, EXIT_OK, bounded
from packproof.packer.errors import InputError
from packproof.packer.files import check_target, write_atomic

__all__ = ["add_parsers"]


def cmd_gate(args: argparse.Namespace) -> int:
    import os

    # the harness, imported only here
    from packproof.evals.gate import append_step_summary, render_markdown, render_text, run_gate
    from packproof.evals.project import BASELINE, default_gates

    if args.baseline is None:  # the default: where `packproof baseline` writes
        args.baseline = str(BASELINE / "summary.json")
        if not Path(args.baseline).exists():
            raise InputError(
                "",
                "no baseline here: record one with `packproof baseline`, or pass --baseline FILE",
                source=args.baseline,
            )
    gates = Path(args.gates) if args.gates else default_gates()
    baseline, current = Path(args.baseline), Path(args.current) if args.current else None
    markdown = Path(args.markdown) if args.markdown else None
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")  # set by GitHub Actions
    step_summary = Path(summary_file) if summary_file else None
    inputs = [p for p in (baseline, current, gates) if p is not None]
    if markdown is not None:  # refused before any work
        check_target(markdown, inputs)
    result = run_gate(baseline, current, gates, significance=args.significance)
    if markdown is not None or step_summary is not None:
        text = render_markdown(result)
        if markdown is not None:
            write_atomic(markdown, text, inputs=inputs)
        if step_summary is not None:
            append_step_summary(step_summary, text)
    sys.stdout.write(render_text(result, verbose=args.verbose))
    return EXIT_OK if result.passed else EXIT_FAIL


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "gate",
        help="compare an eval summary with the baseline; exit 1 on a regression",
        description="Compare an eval run's summary with the committed baseline (recorded by "
        "`packproof baseline`); exit 1 on a failed rule, a regression or a missing group, 2 "
        "on bad input. Every key of the gates file and the output: `packproof docs gate`.",
    )
    p.add_argument(
        "--baseline",
        default=None,
        metavar="FILE",
        help="the committed baseline summary (default reports/baseline/summary.json, "
        "what `packproof baseline` writes)",
    )
    p.add_argument(
        "--current",
        default=None,
        metavar="FILE",
        help="the summary to check (default: the latest run of the baseline's config, "
        "reports/<its manifest name>/latest/summary.json, else reports/latest/summary.json)",
    )
    p.add_argument(
        "--gates",
        default=None,
        metavar="FILE",
        help="thresholds (default ./gates.yaml if present, else the shipped gates; "
        "`packproof schema gates`)",
    )
    p.add_argument(
        "--verbose", action="store_true", help="print every check, not only the problems"
    )
    p.add_argument(
        "--markdown",
        metavar="FILE",
        help="also write the result as Markdown (a pull-request comment); with "
        "GITHUB_STEP_SUMMARY set, it is appended there too",
    )
    p.add_argument(
        "--significance",
        type=bounded(float, 1e-9, 0.5),
        metavar="ALPHA",
        help="a regression fails only if a paired test over scenarios gives p < ALPHA "
        "(default: the gates file's significance.alpha, else no test); needs each run's "
        "metrics.csv(.gz) beside its summary.json",
    )
    p.set_defaults(func=cmd_gate)
