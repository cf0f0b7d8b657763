"""What every subcommand shares: one-line usage errors, exit codes, reading JSON."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Final, NoReturn

from packproof.packer.errors import InputError
from packproof.packer.jsonio import loads

__all__ = [
    "EXECUTORS",
    "EXIT_FAIL",
    "EXIT_INPUT",
    "EXIT_OK",
    "Parser",
    "add_session_prefix",
    "add_workers",
    "bounded",
    "config_path",
    "read_json",
    "session_prefix",
]

EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2
# how the cells run: worker processes, this process, or a Dask cluster
EXECUTORS: Final = ("process", "serial", "dask")


class Parser(argparse.ArgumentParser):
    """argparse that reports usage errors in one line, exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise InputError("", message.replace("\n", " "), source="usage")


def read_json(path: str | None) -> tuple[Any, str]:
    if path in (None, "-"):
        return loads(sys.stdin.buffer.read(), source="<stdin>"), "<stdin>"
    assert path is not None
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError("", f"cannot read file: {exc.strerror}", source=path) from None
    return loads(data, source=path), path


def bounded(kind: type[int] | type[float], low: float, high: float) -> Any:
    """An argparse type: a finite ``kind`` within [low, high]. Numbers that size
    memory or time (an indent, workers, a timeout) are checked before any work."""

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind.__name__}, found {text!r}") from None
        if not (low <= value <= high):  # NaN fails this too
            raise argparse.ArgumentTypeError(
                f"expected a number in [{low:g}, {high:g}], found {text!r}"
            )
        return value

    parse.__name__ = kind.__name__
    return parse


def config_path(args: argparse.Namespace) -> Path:
    """``--config``, or ``./packproof.yaml`` (what ``packproof init`` writes)."""
    from packproof.evals.project import CONFIG

    if args.config:
        return Path(args.config)
    if not Path(CONFIG).exists():
        raise InputError(
            "", "no eval config here: run `packproof init`, or pass --config FILE", source=CONFIG
        )
    return Path(CONFIG)


def add_session_prefix(parser: argparse.ArgumentParser) -> None:
    """``--session-prefix``, for the commands that read Claude Code sessions; None
    when not given (the importer's inferred constant applies)."""
    parser.add_argument(
        "--session-prefix",
        type=bounded(int, 0, 10**9),
        default=None,
        metavar="TOKENS",
        help="where a main session's prompt breaks back to after a compaction (default: "
        "the constant inferred from the records: `packproof docs claude-code`)",
    )


def session_prefix(args: argparse.Namespace) -> dict[str, int]:
    """The ``session_prefix`` keyword for the importer and the check, when given."""
    return {} if args.session_prefix is None else {"session_prefix": args.session_prefix}


def add_workers(parser: argparse.ArgumentParser, *, defaults: bool = True) -> None:
    """``--jobs`` and ``--executor``, for every command that runs an eval's cells;
    without ``defaults`` they are None when not given (the command then knows
    whether they were)."""
    parser.add_argument(
        "--jobs",
        type=bounded(int, 1, 256),
        default=2 if defaults else None,
        help="worker processes (default 2)",
    )
    parser.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="process" if defaults else None,
        help="how the cells run: process (worker processes, the default), serial (this "
        "process, one cell after another) or dask (a Dask cluster; the [dask] extra)",
    )
