"""What every subcommand shares: one-line usage errors, exit codes, reading JSON."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, NoReturn

from ctxpack.packer.errors import InputError
from ctxpack.packer.jsonio import loads

__all__ = ["EXIT_FAIL", "EXIT_INPUT", "EXIT_OK", "Parser", "read_json"]

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
