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
    from packproof.evals.metrics.cache.files import profile, read_trace, simulate

    chosen = profile(args.profile, Path(args.profiles) if args.profiles else None)
    with cyclic_gc_paused():  # steps and their JSON hold no reference cycles
        trace = read_trace(args.trace)  # every line checked before anything is written
        write = sys.stdout.write
        for line in simulate(trace, args.profile, chosen):
            write(line + "\n")
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "cache", help="price a trace of prompts under a provider's prompt cache (docs/metrics.md)"
    )
    p.add_argument("action", choices=["simulate"])
    p.add_argument("trace", help="JSON lines, one step a line (- for stdin)")
    p.add_argument("--profile", required=True, help="a cache profile name, e.g. anthropic, openai")
    p.add_argument(
        "--profiles", help="a profiles YAML adding to (or replacing) the shipped profiles"
    )
    p.set_defaults(func=cmd_cache)
