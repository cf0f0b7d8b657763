"""External packers: any program that speaks packproof's JSON-lines protocol.

Protocol (docs/external-packers.md): the program reads pack requests
(``packproof.request.v1``, strategy included, plus a ``request_id``), one JSON object
per line on stdin, and answers each with one ContextPack v1
(``openclaw-mem.context-pack.v1``) per line on stdout that echoes the
``request_id``. ``packproof serve`` is the built-in packer speaking it. A
Python function given a timeout speaks it too, from a forked child that can
be killed (:func:`function_packer`).

A cell that goes wrong is recorded with a failure class and the run goes on:
``TIMEOUT`` (no answer, or the request not read, within the timeout: the process
is killed and restarted), ``CRASH`` (the process exited or closed its pipes),
``PARSE_ERROR`` (the answer line is not a JSON object, an empty line
included, or is longer than :func:`max_answer_bytes`: the process is restarted,
as the line that was not its answer may leave its answer to come),
``SCHEMA_ERROR`` (the answer breaks the pack contract:
:mod:`~packproof.evals.run.judge`), ``DESYNC`` (the answer is not to this
request: the process is restarted, so a packer that answers twice never gets
the next cell scored with a stale pack). Killed means with everything it
started (:mod:`~packproof.evals.run.process`).

An answer is read in time linear in its length, and at most
:func:`max_answer_bytes` of it is held: memory stays bounded whatever a packer
writes.
"""

from __future__ import annotations

import atexit
import contextlib
import enum
import multiprocessing.util
import os
import selectors
import shlex
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import IO, Any, Final, cast

from packproof.evals.run.judge import FAILURES, Failure, check_answer
from packproof.evals.run.process import PackerProcess
from packproof.packer.errors import InputError
from packproof.packer.jsonio import dumps, loads

__all__ = [
    "FAILURES",
    "MAX_TIMEOUT_S",
    "REQUEST_ID",
    "ExternalPacker",
    "Failure",
    "PackFunction",
    "call_function",
    "check_timeout",
    "close_packers",
    "external_packer",
    "function_packer",
    "kill_packers",
    "max_answer_bytes",
    "parse_packer",
]

REQUEST_ID: Final = "request_id"  # added to each request, echoed in its answer
# A function's child says why it has no pack in this field (never read from a program).
FAILED: Final = "packproof_failure"
MAX_TIMEOUT_S: Final = 86_400.0  # a day per cell, as --packer-timeout allows

PackFunction = Callable[[dict[str, Any]], Any]


def parse_packer(spec: str) -> list[str]:
    """``cmd:COMMAND`` -> the argument vector (shell-style quoting, no shell)."""
    if not spec.startswith("cmd:") or not spec[4:].strip():
        raise InputError("--packer", "malformed packer", expected="cmd:COMMAND", found=spec)
    try:
        return shlex.split(spec[4:])
    except ValueError as exc:
        raise InputError("--packer", f"cannot parse the command: {exc}") from None


def check_timeout(value: Any, where: str) -> float:
    """A packer's seconds per cell: a number in (0, :data:`MAX_TIMEOUT_S`].
    NaN fails the comparison, so it is refused with infinity, zero and the rest."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not 0 < value <= MAX_TIMEOUT_S:
        raise InputError(
            where, "not a timeout", expected=f"seconds in (0, {MAX_TIMEOUT_S:g}]", found=value
        )
    return float(value)


def call_function(
    function: PackFunction, request: Mapping[str, Any], *, interrupt: bool = True
) -> tuple[Failure | None, Any]:
    """Call a function packer: (None, its answer dict) or (failure class, why).
    Whatever it raises fails the cell (``CRASH``), ``SystemExit`` too: a
    packer's ``sys.exit`` must end neither the eval nor the program that called
    ``packproof.evaluate``. A ``KeyboardInterrupt`` is Ctrl-C, which stops the
    run as it stops ``packproof eval``; with ``interrupt=False`` (in a forked
    child, which no terminal's Ctrl-C reaches) it is a crash like the rest."""
    try:
        answer = function(_copy(request))
    except BaseException as exc:
        if interrupt and isinstance(exc, KeyboardInterrupt):
            raise
        text = str(exc)
        return "CRASH", f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    if not isinstance(answer, dict):
        return "PARSE_ERROR", f"the packer returned {type(answer).__name__}, not a dict"
    return None, answer


def _copy(value: Any) -> Any:
    """A deep copy of a JSON value (a packer may mutate what it is given)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _serve(function: PackFunction, requests: IO[bytes], answers: IO[bytes]) -> None:
    """A function's forked child: the packer's side of the protocol, with a
    failure (what it raised, a non-dict, an answer that is not JSON) sent back
    in :data:`FAILED` for the parent to record as the in-process call would."""
    for line in requests:
        request = loads(line)
        request_id = request.pop(REQUEST_ID)
        failure, answer = call_function(function, request, interrupt=False)
        if failure is None:
            try:
                text = dumps({**answer, REQUEST_ID: request_id})
            except (TypeError, ValueError, OverflowError) as exc:
                failure, answer = "PARSE_ERROR", f"the answer is not JSON: {exc}"
        if failure is not None:
            text = dumps({REQUEST_ID: request_id, FAILED: [failure, str(answer)]})
        for stream in (sys.stdout, sys.stderr):  # what it printed: os._exit flushes nothing
            with contextlib.suppress(Exception):
                stream.flush()
        answers.write(text.encode("utf-8") + b"\n")
        answers.flush()


# How long a packer that closed its stdout is given to exit, for its exit code.
EXIT_GRACE_S: Final = 1.0
EXIT_POLL_S: Final = 0.2  # how often a packer is looked at, where no pidfd says it exited
# The longest answer line read: 64 MiB, or 16 times the request's line if that is
# more (packproof's own answer, with its full trace, is about twice its request).
ANSWER_FLOOR_BYTES: Final = 64 << 20
ANSWER_PER_REQUEST_BYTE: Final = 16
READ_CHUNK: Final = 1 << 20


class _NoLine(enum.Enum):
    """What :meth:`ExternalPacker._readline` returns instead of a line."""

    EOF = "the stream ended or the packer exited"
    LATE = "the deadline passed"
    LONG = "the line is longer than allowed"


def max_answer_bytes(request_bytes: int) -> int:
    """The longest answer line (newline excluded) read for a request line of
    ``request_bytes``: a longer one fails its cell as ``PARSE_ERROR`` unread,
    so a packer cannot make packproof hold more than this."""
    return max(ANSWER_FLOOR_BYTES, ANSWER_PER_REQUEST_BYTE * request_bytes)


@dataclass
class ExternalPacker:
    """One long-running packer process, a command or a function's forked
    child; restarted after a crash or a timeout."""

    argv: list[str]
    timeout: float = 10.0
    function: PackFunction | None = field(default=None, repr=False)
    where: str = "--packer"  # what a command that cannot start is named by
    source: str | None = None  # ... and where that is (the config file)
    _proc: PackerProcess | None = field(default=None, repr=False)
    _buffer: bytearray = field(default_factory=bytearray, repr=False)
    _sent: int = field(default=0, repr=False)

    def start(self) -> None:
        if self.function is not None:
            self._proc = PackerProcess.fork(partial(_serve, self.function))
        else:
            self._proc = PackerProcess.run(self.argv, self.where, self.source)
        self._buffer = bytearray()

    def close(self) -> None:
        """End the process and everything it started (:mod:`~packproof.evals.run.process`)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.end()

    def kill(self) -> None:
        """Kill the process group now and nothing more (:func:`kill_packers`)."""
        if self._proc is not None:
            self._proc.kill()

    def forget(self) -> None:
        """In a forked child: drop the parent's process without ending it."""
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.forget()

    def call(self, request: dict[str, Any]) -> tuple[Failure | None, Any]:
        """Send one request; (None, pack) or (failure class, message)."""
        if self._proc is None or self._proc.poll() is not None:
            self.close()  # what a dead packer left running goes with it
            try:
                self.start()
            except InputError as exc:  # it started when the run began: gone since
                return "CRASH", f"cannot restart: {exc.message}"
        proc = self._proc
        assert proc is not None
        self._sent += 1
        request_id = str(self._sent)
        deadline = time.monotonic() + self.timeout
        data = dumps({**request, REQUEST_ID: request_id}).encode("utf-8") + b"\n"
        written = self._write(data, deadline)
        if written is None:
            self.close()
            return "TIMEOUT", f"the request was not read within {self.timeout:g} s"
        limit = max_answer_bytes(len(data))
        line = self._readline(deadline, limit) if written else _NoLine.EOF
        if line is _NoLine.LATE:
            self.close()
            return "TIMEOUT", f"no answer within {self.timeout:g} s"
        if line is _NoLine.LONG:
            self.close()  # the rest of the line is still coming: start afresh
            return "PARSE_ERROR", (
                f"the answer line is longer than {_size(limit)}, the most read for this "
                f"request ({_size(ANSWER_FLOOR_BYTES)}, or {ANSWER_PER_REQUEST_BYTE} times "
                "the request if that is more): not read"
            )
        if line is _NoLine.EOF:
            # Its stdin or stdout closed, or it exited: a crash, whatever it does
            # next. Its exit code, when it exits within a short grace, says more;
            # it is not waited for until the deadline, which would cost every
            # later cell the timeout.
            code = proc.wait(min(EXIT_GRACE_S, max(0.0, deadline - time.monotonic())))
            self.close()
            if code is not None:
                return "CRASH", f"the packer exited (code {code})"
            closed = "stdout" if written else "stdin"
            return "CRASH", f"the packer closed its {closed} and kept running"
        # A line that is not an answer leaves the stream out of step (its answer
        # may follow): the packer is restarted, so each such cell says so.
        if not line or line.isspace():  # (no stripped copy of a long line)
            self.close()
            return "PARSE_ERROR", "the answer line is empty (expected one JSON object)"
        try:
            pack = loads(line)
        except InputError as exc:
            self.close()
            return "PARSE_ERROR", exc.message
        if not isinstance(pack, dict):
            self.close()
            return "PARSE_ERROR", "the answer is not a JSON object"
        echoed = pack.pop(REQUEST_ID, None)
        if echoed != request_id:
            self.close()  # the stream is out of step: start afresh for the next cell
            return "DESYNC", f"the answer is for request_id {echoed!r}, not {request_id!r}"
        if self.function is not None and FAILED in pack:
            failure, message = pack[FAILED]
            return cast(Failure, failure), message
        return check_answer(request, pack)

    def _write(self, data: bytes, deadline: float) -> bool | None:
        """Write all of ``data``: True; False if the pipe is closed or the packer
        exited; None past the deadline (a packer that never reads its stdin
        fills the pipe)."""
        assert self._proc is not None
        fd = self._proc.stdin.fileno()
        view = memoryview(data)
        with self._selector(fd, selectors.EVENT_WRITE) as sel:
            while view:
                ready = self._wait(sel, deadline)
                if not ready:
                    return ready
                try:
                    view = view[os.write(fd, view) :]
                except BlockingIOError:
                    continue
                except OSError:  # EPIPE: the reading end is closed
                    return False
        return True

    def _readline(self, deadline: float, limit: int) -> bytes | _NoLine:
        """The next line, without its newline (it may be empty); ``EOF`` at the
        end of the stream or once the packer has exited (a process it forked may
        hold its stdout open), ``LATE`` past the deadline, ``LONG`` once more
        than ``limit`` bytes came without a newline. Each byte is looked at once
        for the newline, so a long line costs linear time."""
        assert self._proc is not None
        fd = self._proc.stdout.fileno()
        buffer = self._buffer
        seen = 0  # the buffer's bytes before this have no newline
        with self._selector(fd, selectors.EVENT_READ) as sel:
            while (end := buffer.find(b"\n", seen)) < 0:
                if len(buffer) > limit:
                    return _NoLine.LONG
                seen = len(buffer)
                ready = self._wait(sel, deadline)
                if not ready:
                    return _NoLine.LATE if ready is None else _NoLine.EOF
                chunk = os.read(fd, READ_CHUNK)
                if not chunk:
                    return _NoLine.EOF
                buffer += chunk
        if end > limit:
            return _NoLine.LONG
        with memoryview(buffer) as view:  # one copy of the line, not two
            line = bytes(view[:end])
        del buffer[: end + 1]
        return line

    def _selector(self, fd: int, event: int) -> selectors.BaseSelector:
        """A selector on the pipe (data True) and on the packer's exit (False)."""
        assert self._proc is not None
        sel = selectors.DefaultSelector()
        sel.register(fd, event, True)
        if self._proc.exit_fd is not None:
            sel.register(self._proc.exit_fd, selectors.EVENT_READ, False)
        return sel

    def _wait(self, sel: selectors.BaseSelector, deadline: float) -> bool | None:
        """True once the pipe is ready (what the packer wrote before it exited
        is still read); False once the packer has exited; None past the deadline."""
        assert self._proc is not None
        # without a pidfd to say it exited, the process is looked at a few times a second
        poll = self._proc.exit_fd is None
        while (left := deadline - time.monotonic()) > 0:
            events = sel.select(min(left, EXIT_POLL_S) if poll else left)
            if any(key.data for key, _ in events):
                return True
            if events or (poll and self._proc.poll() is not None):
                return False
        return None


def _size(n: int) -> str:
    """A byte count as people read it: 64 MiB."""
    return f"{n / (1 << 20):.4g} MiB" if n >= 1 << 20 else f"{n} bytes"


_PROCESSES: dict[tuple[str, ...], ExternalPacker] = {}
_EXIT_HOOKED: list[int] = [0]  # the pid whose exit hook is registered (forks inherit it)


def _running(key: tuple[str, ...], make: Callable[[], ExternalPacker]) -> ExternalPacker:
    """This process's packer under ``key``, started on first use and reused."""
    if key not in _PROCESSES:
        if _EXIT_HOOKED[0] != os.getpid():
            # A pool worker exits by os._exit after multiprocessing's finalizers,
            # never through atexit: its packers are ended there.
            multiprocessing.util.Finalize(None, close_packers, exitpriority=100)
            _EXIT_HOOKED[0] = os.getpid()
        packer = make()
        packer.start()
        _PROCESSES[key] = packer
    return _PROCESSES[key]


def external_packer(
    argv: list[str], timeout: float, where: str = "--packer", source: str | None = None
) -> ExternalPacker:
    """This process's packer for ``argv`` (one per worker process, reused);
    ``where`` and ``source`` name it when it cannot start."""
    key = ("cmd", *argv, repr(timeout))
    return _running(key, lambda: ExternalPacker(argv, timeout, where=where, source=source))


def function_packer(
    name: str, digest: str, function: PackFunction, timeout: float
) -> ExternalPacker:
    """This process's forked child running ``function`` (``digest``: its
    source's sha256), so that a call past ``timeout`` can be killed."""
    key = ("function", name, digest, repr(timeout))
    return _running(key, lambda: ExternalPacker([], timeout, function=function, where=name))


@atexit.register
def close_packers() -> None:
    """Stop this process's packers, each with its process group: the next
    call starts each afresh (an eval runs the packer's files as they are when
    it starts, not as an earlier eval in this process found them)."""
    while _PROCESSES:  # popped first: a signal handler may close them meanwhile
        _, packer = _PROCESSES.popitem()
        packer.close()


def kill_packers() -> None:
    """Kill every packer's process group, and do nothing else: what a signal
    handler may do before the process exits. Ending them as
    :func:`close_packers` does waits for each, under a lock of
    :class:`subprocess.Popen` that the interrupted code may hold; the killed
    processes are reaped by init once this process is gone."""
    for packer in list(_PROCESSES.values()):
        packer.kill()


def _forget_packers() -> None:
    """In a forked child (a pool worker, a function's child): the packers are
    the parent's, which ends them. Their pipes are closed here, so that each
    sees its stdin close when the parent closes its end, and the child starts
    its own."""
    for packer in _PROCESSES.values():
        packer.forget()
    _PROCESSES.clear()


os.register_at_fork(after_in_child=_forget_packers)
