"""``packproof conformance PEER [FILE]``: packproof against a peer system's recorded
outputs. Prints "N of M cases match", then the first differences with the inputs
behind them; exit 0 when every case matches, 1 on any difference, 2 for bad input."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from packproof.cli.common import EXIT_FAIL, EXIT_OK, bounded
from packproof.packer.errors import InputError

__all__ = ["add_parsers"]


def _show(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cmd_conformance(args: argparse.Namespace) -> int:
    from packproof.evals.conformance import PEERS, check_file  # the harness, imported only here

    peer = PEERS[args.peer]
    path = Path(args.file) if args.file else peer.default_file
    if not args.file and not path.exists():
        raise InputError(
            "",
            f"no case file given, and the shared recording {path} is absent "
            f"(packproof conformance {peer.name} FILE)",
            source="usage",
        )
    paths = [path] if args.file else [path, *(p for p in peer.also_files if p.exists())]
    failed = False
    for path in paths:
        outcome = check_file(peer, path)
        failed = failed or bool(outcome.mismatches)
        verdict = "every case matches" if not outcome.mismatches else "FAILED"
        print(
            f"{peer.name}: {outcome.matched} of {outcome.cases} cases match {peer.system} "
            f"({path}): {verdict}"
        )
        for m in outcome.mismatches[: args.show]:
            print(f"- {m.case} (line {m.line}):")
            for d in m.differences:
                print(f"    {d.what}: expected {_show(d.expected)}, found {_show(d.found)}")
            print(f"    inputs: {m.inputs}")
        hidden = len(outcome.mismatches) - args.show
        if hidden > 0:
            print(f"... and {hidden} more (--show N)")
    return EXIT_FAIL if failed else EXIT_OK


def add_parsers(sub: Any) -> None:
    # the registry names the choices; it loads the library, not the harness's heavy parts
    from packproof.evals.conformance import PEERS

    p = sub.add_parser(
        "conformance",
        help="check packproof against a peer system's recorded outputs; exit 1 on any difference",
        description="Check packproof against a peer system's recorded outputs: 'N of M cases "
        "match', then the first differences; exit 1 on any. What is checked and why it "
        "holds: `packproof docs lossless-claw`.",
    )
    p.add_argument("peer", choices=sorted(PEERS), help="the peer system")
    p.add_argument(
        "file",
        nargs="?",
        help="its case file (JSON lines, .gz allowed; default: the peer's shared recording, "
        "../shared/data/lossless-claw/assembler-cases.jsonl.gz, "
        "../shared/data/openclaw-mem/pack-cases.jsonl.gz, or for clarity "
        "../shared/data/clarity/scorer-cases.jsonl.gz and, when present, v2-cases.jsonl.gz)",
    )
    p.add_argument(
        "--show",
        type=bounded(int, 0, 10**6),
        default=5,
        help="how many differing cases to print (default 5)",
    )
    p.set_defaults(func=cmd_conformance)
