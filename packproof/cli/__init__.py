"""``packproof``: the command line, above the library and the harness.

Bad input gets one line on stderr naming the file and JSON pointer, what was
expected and what was found, and exit code 2; never a traceback unless ``--debug``.
One module per subcommand family: library (pack, serve, strategies, schema),
explain, scenarios (scenarios, import), project (init, baseline), gate, tune, cache,
run (eval), compare, conformance and docs (the guides shipped in the package).
"""

from __future__ import annotations

import argparse
import errno
import io
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

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
from packproof.packer.errors import InputError, RunError
from packproof.packer.explain import visible

__all__ = ["build_parser", "main"]

STDIN: str = "<stdin>"
STDOUT: str = "<stdout>"


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


class _ClosedStdin(io.RawIOBase):
    """Standard input when the process was started with it closed (``<&-``):
    reading it is bad set-up, said in one line, not an AttributeError on None."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: object) -> int:
        raise InputError(
            "", "standard input is closed: give a file, or pipe the input in", source=STDIN
        )


class _Stdout(io.RawIOBase):
    """Standard output, whose failed writes (a full disk, ``> /dev/full``) name
    it: an ``OSError`` whose file name is ``<stdout>``, which :func:`main`
    reports in one line. A broken pipe stays a :class:`BrokenPipeError`. With
    ``fd`` None (started with stdout closed, ``>&-``) every write fails so: a
    file opened later may hold descriptor 1, and nothing is written to it."""

    def __init__(self, fd: int | None) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        if self._fd is None:
            raise OSError(errno.EBADF, "standard output is closed", STDOUT)
        return self._fd

    def isatty(self) -> bool:
        return self._fd is not None and os.isatty(self._fd)

    def write(self, data: Any) -> int:
        if self._fd is None:
            raise OSError(errno.EBADF, "standard output is closed", STDOUT)
        try:
            return os.write(self._fd, data)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, STDOUT) from None

    def close(self) -> None:  # the descriptor stays open: a child process may share it
        super().close()

    def discard(self) -> None:
        """After a failed write: what is still buffered goes nowhere (the exit's
        flush would fail again, with a traceback), and descriptor 1 is left alone."""
        self._fd = os.open(os.devnull, os.O_WRONLY)


def _std_streams() -> None:
    """The process's own standard streams, made safe before a command runs: a
    closed stdin reads as one line of error (:class:`_ClosedStdin`); stdout
    names itself when a write fails (:class:`_Stdout`); and text that the
    streams' encoding cannot write (``PYTHONIOENCODING=ascii``) is written as
    backslash escapes rather than failing after the work is done."""
    if sys.stdin is None:
        sys.stdin = io.TextIOWrapper(io.BufferedReader(_ClosedStdin()), encoding="utf-8")
    out = sys.stdout
    fd: int | None = None
    if out is not None:
        try:
            fd = out.fileno()
        except (OSError, ValueError, AttributeError):
            fd = -1
    if fd in (1, None) and (out is None or out is sys.__stdout__):
        if out is not None:
            out.flush()
        sys.stdout = io.TextIOWrapper(
            io.BufferedWriter(_Stdout(fd)),
            encoding=out.encoding if out is not None else "utf-8",
            errors="backslashreplace",
            line_buffering=out.line_buffering if out is not None else False,
            write_through=out.write_through if isinstance(out, io.TextIOWrapper) else False,
        )
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors != "backslashreplace":
            stream.reconfigure(errors="backslashreplace")


def _discard_stdout() -> None:
    """Nothing more is written to a stdout that failed (see :meth:`_Stdout.discard`)."""
    raw = getattr(getattr(sys.stdout, "buffer", None), "raw", None)
    if isinstance(raw, _Stdout):
        raw.discard()


def _say(line: str) -> None:
    """One line on stderr, control characters shown as escapes
    (:func:`~packproof.packer.explain.visible`): a value read from an input (an
    id, a file name) cannot clear or retitle the terminal."""
    if sys.stderr is not None:
        print(visible(line), file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # the process's own entry point: its own streams
        _std_streams()
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        args = build_parser().parse_args(argv)
        func: Callable[[argparse.Namespace], int] = args.func
        code = func(args)
        if sys.stdout is not None:
            sys.stdout.flush()  # a failed write is this command's, not the exit's
        return code
    except InputError as exc:
        if debug:
            raise
        _say(f"packproof: error: {exc}".encode("utf-8", "backslashreplace").decode("utf-8"))
        return EXIT_INPUT
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_OK
    except KeyboardInterrupt:
        _say("packproof: interrupted (an eval keeps its finished cells: rerun it with --resume)")
        return 130
    except RunError as exc:  # the run stopped short (a worker died): said, and a failed run
        if debug:
            raise
        _say(f"packproof: error: {exc}")
        return EXIT_FAIL
    except OSError as exc:
        if debug:
            raise
        if exc.filename != STDOUT:
            return _internal(exc)
        # the output could not be written (a full disk, /dev/full): the environment's
        # failure, not a bug; one line and exit 2, as for a file that cannot be written
        _discard_stdout()
        _say(f"packproof: error: {STDOUT}: cannot write: {exc.strerror}")
        return EXIT_INPUT
    except Exception as exc:  # a bug, not bad input: still one line unless --debug
        if debug:
            raise
        return _internal(exc)


def _internal(exc: BaseException) -> int:
    _say(f"packproof: internal error: {type(exc).__name__}: {exc} (rerun with --debug)")
    return EXIT_FAIL
