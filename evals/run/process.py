"""A packer's process: the leader of its own session, ended with its whole group.

An external packer is often more than one process: a shell or a launcher
(``npx``, ``uv run``) in front of the real program, or a helper the program
forks. Each inherits the packer's stdout, so killing the packer alone leaves
them running, holding its pipe, after the eval has exited. So a packer starts
in a new session (its process group is its own, with its pid as the group id)
and is ended with ``killpg``: on a timeout, a crash, a desync and when its
owner closes it.

A parent-death signal (``PR_SET_PDEATHSIG``) covers what ``killpg`` cannot: a
``kill -9`` of the process that started the packer. The kernel sends it to the
packer only, not to a process the packer forked, so the owners (the eval's
process, its pool workers) also end their packers' groups when they exit
(:func:`packproof.evals.run.external.close_packers`).

A Python function given a timeout runs the same way, in a forked child that
can be killed (:meth:`PackerProcess.fork`): a thread cannot be.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from typing import IO, Final

from packproof.packer.errors import InputError

__all__ = ["PackerProcess", "die_with_parent"]

_PR_SET_PDEATHSIG: Final = 1  # linux/prctl.h


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """In a child, before it runs: receive ``sig`` when the thread that started
    it dies (a ``kill -9`` of the eval), even if it never reads its stdin."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, sig)


class PackerProcess:
    """A started packer: its pid (also its process group's id), the pipe to its
    stdin and the pipe from its stdout."""

    def __init__(
        self,
        pid: int,
        stdin: IO[bytes],
        stdout: IO[bytes],
        popen: subprocess.Popen[bytes] | None = None,
    ) -> None:
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.returncode: int | None = None
        self._popen = popen  # None: forked here, reaped with os.waitpid
        os.set_blocking(stdin.fileno(), False)  # writes are bounded by the caller's deadline
        # Readable once the process exits, so that a reader waiting on its stdout
        # learns it at once, though a process it forked keeps the pipe open.
        self.exit_fd: int | None = None
        with contextlib.suppress(OSError, AttributeError):  # no pidfd: the caller polls
            self.exit_fd = os.pidfd_open(pid)

    @classmethod
    def run(cls, argv: list[str], where: str, source: str | None = None) -> PackerProcess:
        """Start ``argv`` (no shell); one line of bad input, naming ``where``, if
        it cannot start."""
        try:
            popen = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                bufsize=0,
                start_new_session=True,
                preexec_fn=die_with_parent if sys.platform.startswith("linux") else None,
            )
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise InputError(where, f"cannot start {argv[0]!r}: {reason}", source=source) from None
        assert popen.stdin is not None and popen.stdout is not None
        return cls(popen.pid, popen.stdin, popen.stdout, popen)

    @classmethod
    def fork(cls, serve: Callable[[IO[bytes], IO[bytes]], None]) -> PackerProcess:
        """Fork a child that runs ``serve(requests, answers)`` and exits: a
        function packer that can be killed when it overruns its timeout."""
        from_parent, to_child = os.pipe()  # (read end, write end)
        from_child, to_parent = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: never returns into the parent's code
            code = 1
            try:
                os.setsid()
                die_with_parent()
                if os.getppid() != parent:  # the parent died before prctl took effect
                    os._exit(1)
                # the eval's handlers (a worker's SIGTERM clean-up) are not the child's
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                os.close(to_child)
                os.close(from_child)
                with open(from_parent, "rb") as requests, open(to_parent, "wb") as answers:
                    serve(requests, answers)
                code = 0
            except BaseException:  # serve's own failure, not the function's: say it
                traceback.print_exc()
            finally:
                os._exit(code)
        os.close(from_parent)
        os.close(to_parent)
        return cls(pid, open(to_child, "wb", buffering=0), open(from_child, "rb", buffering=0))

    def poll(self) -> int | None:
        """The exit code, or None while it runs."""
        if self.returncode is None:
            if self._popen is not None:
                self.returncode = self._popen.poll()
            else:
                try:
                    pid, status = os.waitpid(self.pid, os.WNOHANG)
                except ChildProcessError:
                    pid, status = self.pid, 0
                if pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float) -> int | None:
        """The exit code once it exits, or None if it still runs after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.01)
        return self.returncode

    def kill(self) -> None:
        """Kill its whole process group (whatever it forked, too). One system
        call, no lock and no wait: safe in a signal handler."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)

    def end(self) -> None:
        """Kill its whole process group, reap it and close the pipes."""
        self.kill()
        if self._popen is not None:
            self._popen.wait()
            self.returncode = self._popen.returncode
        elif self.returncode is None:
            with contextlib.suppress(ChildProcessError):
                _, status = os.waitpid(self.pid, 0)
                self.returncode = os.waitstatus_to_exitcode(status)
        self.forget()

    def forget(self) -> None:
        """Close this side's pipes and leave the process be: in a forked child,
        the process is the parent's, which ends it."""
        for stream in (self.stdin, self.stdout):
            with contextlib.suppress(OSError):  # a broken pipe has nothing left to flush
                stream.close()
        if self.exit_fd is not None:
            os.close(self.exit_fd)
            self.exit_fd = None
        if self._popen is not None and self.returncode is None:
            # not this process's child: a later Popen.__del__ must not wait for it
            self._popen.returncode = self.returncode = -1
