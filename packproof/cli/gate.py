"""``packproof gate``: an eval summary against the baseline; exit 1 on a regression."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from packproof.cli.common import EXIT_FAIL, EXIT_OK, bounded
from packproof.packer.errors import InputError
from packproof.packer.files import Target, check_targets, write_atomic

__all__ = ["add_parsers"]


def _step_summary() -> Target | None:
    """The job summary GitHub Actions names in ``GITHUB_STEP_SUMMARY``, appended to."""
    named = os.environ.get("GITHUB_STEP_SUMMARY")
    return Target(Path(named), "append", f"GITHUB_STEP_SUMMARY={named}") if named else None


def cmd_gate(args: argparse.Namespace) -> int:
    # the harness, imported only here
    from packproof.evals.gate import append_step_summary, render_markdown, render_text
    from packproof.evals.gate.run import gate_inputs, judge_gate
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
    current = Path(args.current) if args.current else None
    inputs = gate_inputs(Path(args.baseline), current, gates)  # the default current found
    markdown = Path(args.markdown) if args.markdown else None
    job = _step_summary()
    reads = inputs.reads()
    # every output, before the gate runs and before a byte is written; the job
    # summary first, so that --markdown naming it is the one refused
    check_targets([*([job] if job else []), *([Target(markdown)] if markdown else [])], reads)
    result = judge_gate(inputs, significance=args.significance)
    if markdown is not None or job is not None:
        text = render_markdown(result)
        if markdown is not None:
            write_atomic(markdown, text, inputs=reads)
        if job is not None:
            append_step_summary(job.path, text, inputs=reads)
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
