"""``packproof cache simulate``: price a trace of prompts under a provider's prompt cache."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from packproof.cli.common import EXIT_OK
from packproof.packer.result import cyclic_gc_paused

__all__ = ["add_parsers"]


def cmd_cache(args: argparse.Namespace) -> int:
    # the harness, imported only here
    from packproof.evals.metrics.cache.files import profile, simulate

    chosen = profile(args.profile, Path(args.profiles) if args.profiles else None)
    # Streamed: each line is written once its batch is priced, so a bad line
    # mid-trace stops the output after whole lines, with no totals (docs/metrics.md).
    with cyclic_gc_paused():  # steps and their JSON hold no reference cycles
        write = sys.stdout.write
        for line in simulate(args.trace, args.profile, chosen):
            write(line + "\n")
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "cache",
        help="price a trace of prompts under a provider's prompt cache",
        description="Price a trace of prompts under a provider's prompt cache: one JSON line "
        "out per step (hit, written and uncached tokens, cost), then one per chain. The model "
        'and every field: `packproof docs metrics` ("Prompt-cache model").',
    )
    p.add_argument("action", choices=["simulate"], help="simulate: price the trace")
    p.add_argument(
        "trace",
        metavar="TRACE",
        help="JSON lines (- for stdin), one step a line: "
        '{"chain": "c1", "t": 12.5, "segments": [["id", tokens], ...], '
        '"static_segments": 1, "probe": false}; a segment is its id (a changed text gets '
        "a new id), the first static_segments are the static prefix (default 0), chains "
        "may interleave and each has its own cache; a segment id has one token count in its "
        "chain. Read and priced as a stream: a bad line stops the output (exit 2) after the "
        "whole lines of the steps before it, without the chains' totals",
    )
    p.add_argument("--profile", required=True, help="a cache profile name, e.g. anthropic, openai")
    p.add_argument(
        "--profiles",
        metavar="FILE",
        help="a profiles YAML adding to (or replacing) the shipped profiles "
        "(`packproof schema cache-profiles`)",
    )
    p.set_defaults(func=cmd_cache)
