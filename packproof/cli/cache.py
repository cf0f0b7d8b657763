"""``packproof cache simulate``: price a trace of prompts under a provider's prompt cache;
``packproof cache check``: the model against Claude Code sessions' bills, call by call."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from packproof.cli.common import EXIT_OK, add_session_prefix, session_prefix
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


def cmd_cache_check(args: argparse.Namespace) -> int:
    from packproof.evals.metrics.cache.check import check_sessions, load_prices
    from packproof.evals.metrics.cache.check_report import (
        new_run_folder,
        summary_line,
        totals,
        write_check,
    )

    prices = load_prices()
    rows = check_sessions([Path(p) for p in args.paths], prices=prices, **session_prefix(args))
    total = totals(rows, prices)
    run = new_run_folder(Path(args.output))
    for path in write_check(rows, total, run):
        print(f"wrote {path}")
    for miss in total["misses"]:
        print(f"miss: {miss['session']} line {miss['line']}: {miss['rule']}")
    print(summary_line(total))
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "cache",
        help="price a trace of prompts under a provider's prompt cache, or check the model "
        "against Claude Code sessions' bills",
        description="Price a trace of prompts under a provider's prompt cache: one JSON line "
        "out per step (hit, written and uncached tokens, cost), then one per chain. The model "
        'and every field: `packproof docs metrics` ("Prompt-cache model").',
    )
    actions = p.add_subparsers(
        dest="action", required=True, metavar="ACTION", help="check or simulate"
    )
    c = actions.add_parser(
        "check",
        help="hold the cache model against Claude Code sessions' billed usage, call by call",
        description="Price every API call of Claude Code sessions as sent and compare the "
        "predicted cached, written and uncached tokens with the recorded usage: a table, a plot "
        "and the totals in a new folder under -o; the last line says how many calls are within "
        "tolerance and how far the input cost is from the bill (`packproof docs claude-code`).",
    )
    c.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a session file, a folder of them or a ~/.claude/projects tree",
    )
    c.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="DIR",
        help="where the run folder (check-N, never an existing one) is made",
    )
    add_session_prefix(c)
    c.set_defaults(func=cmd_cache_check)
    p = actions.add_parser(
        "simulate",
        help="price a trace of prompts",
        description="Price a trace of prompts under a provider's prompt cache.",
    )
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
