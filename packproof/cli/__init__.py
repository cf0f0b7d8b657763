"""``packproof``: the command line, above the library and the harness.

Bad input gets one line on stderr naming the file and JSON pointer, what was
expected and what was found, and exit code 2; never a traceback unless ``--debug``.
One module per subcommand family: library (pack, serve, strategies, schema),
explain, scenarios (scenarios, import), project (init, baseline), gate, tune, cache,
run (eval), compare, conformance and docs (the guides shipped in the package).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from packproof.cli import (
    cache,
    compare,
    conformance,
    docs,
    explain,
    gate,
    library,
    project,
    run,
    scenarios,
    tune,
)
from packproof.cli.common import EXIT_FAIL, EXIT_INPUT, EXIT_OK, Parser
from packproof.packer import __version__
from packproof.packer.errors import InputError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="packproof",
        description="Prove and gate LLM context-packing policies.",
        epilog="Start a project: packproof init. The guides: packproof docs. "
        "The file formats: packproof schema.",
    )
    parser.add_argument("--version", action="version", version=f"packproof {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(
        dest="command",
        required=True,
        parser_class=Parser,
        metavar="COMMAND",
        help="one of the commands below; packproof COMMAND --help for its options",
    )
    library.add_parsers(sub)
    explain.add_parsers(sub)
    scenarios.add_parsers(sub)
    project.add_parsers(sub)
    gate.add_parsers(sub)
    tune.add_parsers(sub)
    cache.add_parsers(sub)
    run.add_parsers(sub)
    compare.add_parsers(sub)
    conformance.add_parsers(sub)
    docs.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        args = build_parser().parse_args(argv)
        func: Callable[[argparse.Namespace], int] = args.func
        return func(args)
    except InputError as exc:
        if debug:
            raise
        line = f"packproof: error: {exc}".encode("utf-8", "backslashreplace").decode("utf-8")
        print(line, file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        print(
            "packproof: interrupted (an eval keeps its finished cells: rerun it with --resume)",
            file=sys.stderr,
        )
        return 130
    except Exception as exc:  # a bug, not bad input: still one line unless --debug
        if debug:
            raise
        print(
            f"packproof: internal error: {type(exc).__name__}: {exc} (rerun with --debug)",
            file=sys.stderr,
        )
        return EXIT_FAIL
