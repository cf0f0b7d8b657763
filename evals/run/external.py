"""External packers: any program that speaks packproof's JSON-lines protocol.

Protocol (docs/external-packers.md): the program reads pack requests
(``packproof.request.v1``, strategy included, plus a ``request_id``), one JSON object
per line on stdin, and answers each with one ContextPack v1
(``openclaw-mem.context-pack.v1``) per line on stdout that echoes the
``request_id``. ``packproof serve`` is the built-in packer speaking it.

A cell that goes wrong is recorded with a failure class and the run goes on:
``TIMEOUT`` (no answer, or the request not read, within the timeout: the process
is killed and restarted), ``CRASH`` (the process exited or closed its pipes),
``PARSE_ERROR`` (the answer is not a JSON object), ``SCHEMA_ERROR`` (the answer
breaks the pack contract or packs an id the request does not have), ``DESYNC``
(the answer is not to this request: the process is restarted, so a packer that
answers twice never gets the next cell scored with a stale pack).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import dataclasses
import os
import selectors
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np

from packproof.evals.run.replay import PACK
from packproof.packer.errors import InputError
from packproof.packer.jsonio import dumps, loads
from packproof.packer.pipeline import PackResult
from packproof.packer.reasons import O_ANCHORED, O_BUDGET, O_INCLUDED, O_TAIL, OUTCOMES
from packproof.packer.render import TRACE_SCHEMA_ID
from packproof.packer.schema import validate

__all__ = [
    "FAILURES",
    "ExternalPacker",
    "Failure",
    "check_answer",
    "close_packers",
    "external_packer",
    "failed_cell",
    "judged",
    "parse_packer",
    "traced",
]

Failure = Literal["TIMEOUT", "CRASH", "PARSE_ERROR", "SCHEMA_ERROR", "DESYNC"]
FAILURES: Final = ("TIMEOUT", "CRASH", "PARSE_ERROR", "SCHEMA_ERROR", "DESYNC")
REQUEST_ID: Final = "request_id"  # added to each request, echoed in its answer


def _die_with_parent() -> None:
    """In the packer's process, before it runs: die when the worker that started
    it dies (a ``kill -9`` of the eval), even if it never reads its stdin."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def parse_packer(spec: str) -> list[str]:
    """``cmd:COMMAND`` -> the argument vector (shell-style quoting, no shell)."""
    if not spec.startswith("cmd:") or not spec[4:].strip():
        raise InputError("--packer", "malformed packer", expected="cmd:COMMAND", found=spec)
    try:
        return shlex.split(spec[4:])
    except ValueError as exc:
        raise InputError("--packer", f"cannot parse the command: {exc}") from None


# How long a packer that closed its stdout is given to exit, for its exit code.
EXIT_GRACE_S: Final = 1.0


@dataclass
class ExternalPacker:
    """One long-running packer process; restarted after a crash or a timeout."""

    argv: list[str]
    timeout: float = 10.0
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _buffer: bytes = field(default=b"", repr=False)
    _sent: int = field(default=0, repr=False)

    def start(self) -> None:
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            )
        except OSError as exc:
            raise InputError("--packer", f"cannot start {self.argv[0]!r}: {exc.strerror}") from None
        assert self._proc.stdin is not None
        os.set_blocking(self._proc.stdin.fileno(), False)  # writes are bounded by the timeout
        self._buffer = b""

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:  # a broken pipe has nothing left to flush
                pass

    def call(self, request: dict[str, Any]) -> tuple[Failure | None, Any]:
        """Send one request; (None, pack) or (failure class, message)."""
        if self._proc is None or self._proc.poll() is not None:
            self.start()
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
        if not written:
            self.close()
            return "CRASH", "the packer closed its stdin"
        line = self._readline(deadline)
        if line is None:
            self.close()
            return "TIMEOUT", f"no answer within {self.timeout:g} s"
        if line == b"":
            # stdout closed: a crash, whatever the process does next. Its exit code,
            # when it exits within a short grace, says more; it is not waited for
            # until the deadline, which would cost every later cell the timeout.
            grace = min(EXIT_GRACE_S, max(0.0, deadline - time.monotonic()))
            try:
                code = proc.wait(grace)
                message = f"the packer exited (code {code})"
            except subprocess.TimeoutExpired:
                message = "the packer closed its stdout and kept running"
            self.close()
            return "CRASH", message
        try:
            pack = loads(line)
        except InputError as exc:
            return "PARSE_ERROR", exc.message
        if not isinstance(pack, dict):
            return "PARSE_ERROR", "the answer is not a JSON object"
        echoed = pack.pop(REQUEST_ID, None)
        if echoed != request_id:
            self.close()  # the stream is out of step: start afresh for the next cell
            return "DESYNC", f"the answer is for request_id {echoed!r}, not {request_id!r}"
        return check_answer(request, pack)

    def _write(self, data: bytes, deadline: float) -> bool | None:
        """Write all of ``data``: True, False if the pipe is closed, None past the
        deadline (a packer that never reads its stdin fills the pipe)."""
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        fd = proc.stdin.fileno()
        view = memoryview(data)
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_WRITE)
            while view:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return None
                try:
                    view = view[os.write(fd, view) :]
                except BlockingIOError:
                    continue
                except OSError:  # EPIPE: the reading end is closed
                    return False
        return True

    def _readline(self, deadline: float) -> bytes | None:
        """The next line (b"" at end of stream), or None past the deadline."""
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    return b""
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line


def check_answer(request: Mapping[str, Any], pack: dict[str, Any]) -> tuple[Failure | None, Any]:
    """An answer held to the pack contract: (None, pack), or ``SCHEMA_ERROR`` and
    why (it breaks the pack schema, or packs an id the request does not have)."""
    errors = validate("pack", pack)
    if errors:
        return "SCHEMA_ERROR", errors[0]
    known = {it["id"] for it in request["items"]}
    unknown = [it["recordRef"] for it in pack["items"] if it["recordRef"] not in known]
    if unknown:
        return "SCHEMA_ERROR", f"packs ids the request does not have: {unknown[:3]}"
    return None, pack


_PROCESSES: dict[tuple[str, ...], ExternalPacker] = {}


def external_packer(argv: list[str], timeout: float) -> ExternalPacker:
    """This process's packer for ``argv`` (one per worker process, reused)."""
    key = (*argv, str(timeout))
    if key not in _PROCESSES:
        packer = ExternalPacker(argv, timeout)
        packer.start()
        _PROCESSES[key] = packer
    return _PROCESSES[key]


@atexit.register
def close_packers() -> None:
    """Stop this process's packers: the next call starts each afresh (an eval
    runs the packer's files as they are when it starts, not as an earlier
    eval in this process found them)."""
    for packer in _PROCESSES.values():
        packer.close()
    _PROCESSES.clear()


def failed_cell(
    record: Mapping[str, Any], failure: str, error: object, latency_s: float
) -> dict[str, Any]:
    """The record of a cell the external packer failed (``TIMEOUT``, ``CRASH``,
    ...): no pack and no metrics, the failure and its message kept."""
    return {
        **record,
        "status": failure,
        "error": str(error),
        "mode": None,
        "selected": [],
        "failures": [],
        "metrics": {},
        "latency_ms": round(latency_s * 1000, 3),
        PACK: [],
    }


def traced(pack: Mapping[str, Any]) -> bool:
    """Whether an external pack carries packproof's own trace (then :func:`judged`
    reads every candidate's decision from it exactly)."""
    trace = pack.get("trace")
    return isinstance(trace, Mapping) and trace.get("schema") == TRACE_SCHEMA_ID


def judged(reference: PackResult, pack: Mapping[str, Any]) -> PackResult:
    """The reference result with an external pack's selection: the fresh tail,
    anchors and budget stay packproof's definitions (so the metrics judge the
    external packer by the same rules). With packproof's own trace in the pack,
    outcome, rank and mode are read from it exactly; otherwise packed items
    rank first in pack order and the rest newest first."""
    items = reference.items
    position = items.position
    packed = [position[it["recordRef"]] for it in pack["items"]]
    trace = pack.get("trace")
    outcome = np.full(len(items), O_BUDGET, dtype=np.int8)
    rank = np.zeros(len(items), dtype=np.int64)
    if isinstance(trace, Mapping) and traced(pack):
        for cand in trace["candidates"]:
            i = position[cand["id"]]
            outcome[i] = OUTCOMES.index(cand["decision"]["reason"][0])
            rank[i] = cand["rank"] or 0
        mode = trace["mode"]
    else:
        kept = np.zeros(len(items), dtype=bool)
        kept[packed] = True
        outcome[kept] = O_INCLUDED
        outcome[kept & reference.anchored] = O_ANCHORED
        outcome[kept & reference.in_tail] = O_TAIL
        order = [i for i in packed if i in set(reference.evictable.tolist())]
        rest = [i for i in reference.evictable.tolist()[::-1] if i not in set(order)]
        rank[order + rest] = np.arange(1, len(order) + len(rest) + 1)
        mode = "external"
    return dataclasses.replace(
        reference,
        outcome=outcome,
        rank=rank,
        mode=mode,
        pack_order=np.array(packed, dtype=np.int64),
        placement=None,
        cache=None,
    )
