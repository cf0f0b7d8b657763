"""``packproof scenarios`` (validate, compile or check golden scenario files) and
``packproof import`` (a dataset as compiled scenarios). Each imports the harness only
when it runs, so ``packproof pack`` starts without loading the harness's dependencies."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from packproof.cli.common import EXIT_FAIL, EXIT_OK, bounded
from packproof.packer.errors import InputError
from packproof.packer.files import check_target, check_targets, write_atomic
from packproof.packer.jsonio import dumps

__all__ = ["add_parsers"]


def _scenario_sources(args: argparse.Namespace) -> list[Path]:
    paths = [Path(p) for p in args.paths] or sorted(Path("scenarios").glob("*.yaml"))
    if not paths:
        raise InputError("", "no scenario files given and none in scenarios/*.yaml", source="usage")
    return paths


def cmd_scenarios(args: argparse.Namespace) -> int:
    # The harness is imported here: the library must not depend on it.
    from packproof.evals.scenarios.compile import (
        check_compiled,
        compile_sources,
        compiled_path,
        load_sources,
        write_compiled,
    )

    sources = _scenario_sources(args)
    out = Path(args.out) if args.out else None
    if args.action == "compile":  # every mirror, before any source is read
        check_targets([compiled_path(p, out) for p in sources], sources)
    loaded = load_sources(sources)
    count = sum(len(v) for v in loaded.values())
    if args.action == "validate":
        print(f"{count} scenarios in {len(loaded)} files: valid")
        return EXIT_OK
    texts = compile_sources(loaded)
    if args.action == "compile":
        for path in write_compiled(texts, out):
            print(f"wrote {path}")
        return EXIT_OK
    problems = check_compiled(texts, out)
    for line in problems:
        print(line, file=sys.stderr)
    if not problems:
        print(f"{count} scenarios in {len(loaded)} files: compiled mirrors are up to date")
    return EXIT_FAIL if problems else EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    from packproof.evals.scenarios.importers import IMPORTERS  # the harness, imported only here

    source = Path(args.path)
    name = f"{source.stem}_replay" if args.replay else source.stem
    out = Path(args.output or Path("reports") / "imports" / f"{name}.jsonl")
    check_target(out, [source])  # before any work
    scenarios, report = IMPORTERS[args.format](
        source,
        budget=args.budget,
        fresh_tail=args.fresh_tail,
        with_summaries=args.with_summaries,
        token_counter=args.token_counter,
        replay=args.replay,
        gap_s=args.gap,
    )
    write_atomic(out, "".join(dumps(sc.to_json()) + "\n" for sc in scenarios), inputs=[source])
    print(
        f"wrote {len(scenarios)} scenarios ({sum(len(s.turns) for s in scenarios)} turns) to {out}"
    )
    print(" ".join(f"{k}={v}" for k, v in report.items()))
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "scenarios",
        help="validate, compile or check golden scenario files",
        description="Validate, compile or check golden scenario files. What a scenario "
        "holds: `packproof docs scenarios`; the format: `packproof schema scenarios`.",
    )
    p.add_argument(
        "action",
        choices=["validate", "compile", "check"],
        help="validate: check the files against their schema and rules (`packproof schema "
        "scenarios`); compile: write each file's byte-stable mirror, compiled/<name>.jsonl; "
        "check: exit 1 when a mirror is missing or differs from its source (a CI step)",
    )
    p.add_argument("paths", nargs="*", help="scenario YAML files (default: scenarios/*.yaml)")
    p.add_argument("--out", help="compiled mirror directory (default: compiled/ beside each file)")
    p.set_defaults(func=cmd_scenarios)

    p = sub.add_parser("import", help="turn a dataset (LoCoMo) into compiled scenarios")
    p.add_argument("format", choices=["locomo"], help="the dataset's format: locomo (LoCoMo)")
    p.add_argument("path", help="the dataset file (LoCoMo: its original JSON format)")
    p.add_argument("-o", "--output", help="JSONL to write (default reports/imports/<name>.jsonl)")
    p.add_argument(
        "--budget", type=bounded(int, 1, 2**40), default=1024, help="each scenario's own budget"
    )
    p.add_argument(
        "--fresh-tail", type=bounded(int, 0, 10**6), default=4, help="fresh tail count (default 4)"
    )
    p.add_argument("--with-summaries", action="store_true", help="session summaries as items")
    p.add_argument(
        "--token-counter",
        default="lcm",
        choices=["lcm", "chars4", "cl100k"],
        help="how each scenario counts tokens: lcm (lossless-claw's count, the default), "
        "chars4 (characters / 4) or cl100k (exact; the [exact] extra)",
    )
    p.add_argument(
        "--replay",
        action="store_true",
        help="each conversation as a replay: every dialogue turn a timed step, then the "
        "questions as probes (default output reports/imports/<name>_replay.jsonl)",
    )
    p.add_argument(
        "--gap",
        type=bounded(float, 0, 86_400),
        metavar="SECONDS",
        help="with --replay: seconds between two turns of one session (default 30; at most "
        "what keeps each session's turns before the next session's date)",
    )
    p.set_defaults(func=cmd_import)
