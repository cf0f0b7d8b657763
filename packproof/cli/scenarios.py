"""``packproof scenarios`` (validate, compile or check golden scenario files) and
``packproof import`` (a dataset as compiled scenarios). Each imports the harness only
when it runs, so ``packproof pack`` starts without loading the harness's dependencies."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from packproof.cli.common import EXIT_FAIL, EXIT_OK, add_session_prefix, bounded, session_prefix
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
    scenarios, report = IMPORTERS["locomo"](
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


def _stem(path: Path) -> str:
    """A file's name without its ``.gz`` and ``.jsonl`` suffixes."""
    name = path.name
    for suffix in (".gz", ".jsonl"):
        name = name.removesuffix(suffix)
    return name or "openclaw-mem"


def cmd_import_openclaw_mem(args: argparse.Namespace) -> int:
    from packproof.evals.scenarios.importers import IMPORTERS  # the harness, imported only here
    from packproof.evals.scenarios.importers.openclaw_mem.suite import scenarios_yaml

    source = Path(args.path)
    out = Path(args.output or Path("reports") / "imports" / f"{_stem(source)}.jsonl")
    check_target(out, [source])  # before any work
    scenarios, report = IMPORTERS["openclaw-mem"](source)
    if out.suffix in (".yaml", ".yml"):
        text = scenarios_yaml(scenarios)
    else:
        text = "".join(dumps(sc.to_json()) + "\n" for sc in scenarios)
    write_atomic(out, text, inputs=[source])
    notes = report.pop("notes")
    print(
        f"wrote {len(scenarios)} scenarios ({report.get('judged', 0)} with expectations) to {out}"
    )
    print(" ".join(f"{k}={v}" for k, v in report.items()))
    for ident, pairs in notes.items():  # what is not judged is said, never dropped
        by_why: dict[str, list[str]] = {}
        for what, why in pairs:
            by_why.setdefault(why, []).append(what)
        said = "; ".join(f"{why}: {', '.join(whats)}" for why, whats in by_why.items())
        print(f"{ident}: not judged: {said}", file=sys.stderr)
    return EXIT_OK


def cmd_import_claude_code(args: argparse.Namespace) -> int:
    from packproof.evals.scenarios.importers import IMPORTERS  # the harness, imported only here

    sources = [Path(p) for p in args.paths]
    out = Path(args.output)
    check_target(out, sources)  # before any work
    scenarios, report = IMPORTERS["claude-code"](sources, **session_prefix(args))
    write_atomic(out, "".join(dumps(sc.to_json()) + "\n" for sc in scenarios), inputs=sources)
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

    p = sub.add_parser(
        "import",
        help="turn a dataset (LoCoMo) or openclaw-mem's cases and goldens into scenarios",
        description="Turn a dataset into compiled scenarios: LoCoMo conversations, or "
        "openclaw-mem's native pack cases and golden fixtures.",
    )
    formats = p.add_subparsers(dest="format", required=True, metavar="FORMAT", help="the format")
    p = formats.add_parser("locomo", help="LoCoMo conversations (its original JSON format)")
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

    p = formats.add_parser(
        "openclaw-mem",
        help="openclaw-mem's native pack cases or its golden fixture lane",
        description="One scenario per openclaw-mem case or golden row, expecting the "
        "selection openclaw-mem made (strategy openclaw-mem with the case's parameters). "
        "What a golden row asserts that packproof does not judge (graph-lane receipts, "
        "the policy receipt) is listed on stderr and in the scenario's tags. The scenario "
        "format: `packproof docs scenarios`.",
    )
    p.add_argument(
        "path",
        help="a case file (JSON lines, .gz allowed; e.g. ../shared/data/openclaw-mem/"
        "pack-cases.jsonl.gz) or a golden file (CONTEXT_PACK_GOLDEN_SCENARIOS.v0.jsonl)",
    )
    p.add_argument(
        "-o",
        "--output",
        "--out",
        help="file to write: a scenario file when it ends in .yaml or .yml (at most 4 MiB), "
        "else the compiled mirror, JSON lines (default reports/imports/<name>.jsonl)",
    )
    p.set_defaults(func=cmd_import_openclaw_mem)
    p = formats.add_parser(
        "claude-code",
        help="Claude Code transcripts as replays with their billed usage",
        description="One replay scenario per Claude Code session and sub-agent, one step per "
        "API call at its time, items sized from the bill (`packproof docs claude-code`).",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a session file (<id>.jsonl), a folder of them or a ~/.claude/projects tree",
    )
    p.add_argument("-o", "--output", required=True, help="the compiled scenarios (JSONL) to write")
    add_session_prefix(p)
    p.set_defaults(func=cmd_import_claude_code)
