"""What every subcommand shares: one-line usage errors, exit codes, reading JSON."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, NoReturn

from packproof.packer.errors import InputError
from packproof.packer.jsonio import loads

__all__ = [
    "EXIT_FAIL",
    "EXIT_INPUT",
    "EXIT_OK",
    "Parser",
    "bounded",
    "config_path",
    "read_json",
]

EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2


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
