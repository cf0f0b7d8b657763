"""A packer's process: run by a keeper in a session of its own, and ended with
everything it started.

An external packer is often more than one process: a shell or a launcher
(``npx``, ``uv run``) in front of the real program, or a helper the program
forks, maybe a daemon that calls ``setsid`` and so leaves the packer's process
group. Each inherits the packer's stdout, so killing the packer alone leaves
them running, holding its pipe, after the eval has exited. So on Linux a
packer is started by a keeper (:mod:`~packproof.evals.run.keeper`), a child
subreaper in a new session: every process below it stays below it, and when
the packer exits or the keeper is told to stop (``SIGTERM``: on a timeout, a
crash, a desync, when its owner closes it), the keeper kills them all, in any
process group, then exits as the packer did. The process packproof holds (its
pid, its exit code) is the keeper's.

The keeper's parent-death signal (``PR_SET_PDEATHSIG``, ``SIGTERM``) covers a
``kill -9`` of the process that started it: the keeper ends everything below
it then too. Where there is no keeper (not Linux), the packer itself leads
the session and is ended with ``killpg``, which misses a helper that left its
group; the owners (the eval's process, its pool workers) end their packers'
groups when they exit (:func:`packproof.evals.run.external.close_packers`).

A Python function given a timeout runs the same way, in a forked child, the
keeper, that forks the one running it (:meth:`PackerProcess.fork`): a thread
cannot be killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import selectors
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from typing import IO, Final

from packproof.evals.run import keeper
from packproof.packer.errors import InputError

__all__ = ["PackerProcess", "die_with_parent"]

_PR_SET_PDEATHSIG: Final = 1  # linux/prctl.h
# How long a keeper may take to start its packer, and to end it and all below it.
KEEPER_START_S: Final = 60.0
KEEPER_END_S: Final = keeper.GIVE_UP_S + 10.0


def _keeper_argv() -> list[str] | None:
    """How a keeper is started (this Python, isolated, running keeper.py by its
    path), or None where there is none: not Linux, or no file or interpreter."""
    path = keeper.__file__
    usable = sys.platform.startswith("linux") and sys.executable and os.path.isfile(path)
    return [sys.executable, "-I", "-S", path] if usable else None


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """In a child, before it runs: receive ``sig`` when the thread that started
    it dies (a ``kill -9`` of the eval), even if it never reads its stdin."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, sig)


def _read_all(fd: int, timeout: float) -> bytes:
    """What comes on ``fd`` until its writers close it (or ``timeout`` s pass);
    ``fd`` is closed."""
    data = b""
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0 and sel.select(left):
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    os.close(fd)
    return data


def _serve_child(
    keeper_pid: int, serve: Callable[[IO[bytes], IO[bytes]], None], requests: int, answers: int
) -> None:
    """The keeper's child that runs a function packer's ``serve`` on the pipes
    ``requests`` and ``answers``, then exits: never returns."""
    code = 1
    try:
        # the eval's handlers (a worker's SIGTERM clean-up) and the keeper's are not its own
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        keeper.packer_setup()
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # no terminal's Ctrl-C reaches it
        if os.getppid() != keeper_pid:  # the keeper died before prctl took effect
            os._exit(1)
        with open(requests, "rb") as incoming, open(answers, "wb") as outgoing:
            serve(incoming, outgoing)
        code = 0
    except BaseException:  # serve's own failure, not the function's: say it
        traceback.print_exc()
    finally:
        os._exit(code)


class PackerProcess:
    """A started packer: its pid (also its process group's id), the pipe to its
    stdin and the pipe from its stdout."""

    def __init__(
        self,
        pid: int,
        stdin: IO[bytes],
        stdout: IO[bytes],
        popen: subprocess.Popen[bytes] | None = None,
        *,
        kept: bool = False,
    ) -> None:
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.returncode: int | None = None
        self._popen = popen  # None: forked here, reaped with os.waitpid
        # the process is a keeper (ended by SIGTERM, which ends all below it), or
        # the packer itself, leading its process group (ended by killpg)
        self.kept = kept
        os.set_blocking(stdin.fileno(), False)  # writes are bounded by the caller's deadline
        # Readable once the process exits, so that a reader waiting on its stdout
        # learns it at once, though a process it forked keeps the pipe open.
        self.exit_fd: int | None = None
        with contextlib.suppress(OSError, AttributeError):  # no pidfd: the caller polls
            self.exit_fd = os.pidfd_open(pid)

    @classmethod
    def run(cls, argv: list[str], where: str, source: str | None = None) -> PackerProcess:
        """Start ``argv`` (no shell), under a keeper where there is one; one
        line of bad input, naming ``where``, if it cannot start."""
        start = _keeper_argv()
        if start is not None:
            return cls._kept(start, argv, where, source)
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
    def _kept(
        cls, start: list[str], argv: list[str], where: str, source: str | None
    ) -> PackerProcess:
        """Start ``argv`` under a keeper, which says on a pipe whether it
        started (why not: one line of bad input, as :meth:`run`)."""
        status_read, status_write = os.pipe()
        try:
            popen = subprocess.Popen(
                [*start, str(status_write), str(os.getpid()), "--", *argv],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                bufsize=0,
                start_new_session=True,
                pass_fds=(status_write,),
            )
        except OSError as exc:
            os.close(status_read)
            reason = exc.strerror or type(exc).__name__
            raise InputError(
                where,
                f"cannot start {argv[0]!r}: Python {sys.executable!r}: {reason}",
                source=source,
            ) from None
        finally:
            os.close(status_write)
        status = _read_all(status_read, KEEPER_START_S)
        assert popen.stdin is not None and popen.stdout is not None
        proc = cls(popen.pid, popen.stdin, popen.stdout, popen, kept=True)
        if status != b"ok\n":
            proc.end()
            _, _, reason = status.decode("utf-8", "replace").strip().partition(" ")
            reason = reason or "the keeper that starts it failed"
            raise InputError(where, f"cannot start {argv[0]!r}: {reason}", source=source)
        return proc

    @classmethod
    def fork(cls, serve: Callable[[IO[bytes], IO[bytes]], None]) -> PackerProcess:
        """Fork a child that runs ``serve(requests, answers)`` and exits: a
        function packer that can be killed when it overruns its timeout."""
        from_parent, to_child = os.pipe()  # (read end, write end)
        from_child, to_parent = os.pipe()
        parent = os.getpid()
        kept = sys.platform.startswith("linux")
        pid = os.fork()
        if pid == 0:  # the child, the keeper: never returns into the parent's code
            try:
                os.setsid()
                if not keeper.become_keeper(parent):  # the parent died before prctl
                    os._exit(1)
                os.close(to_child)
                os.close(from_child)
                server = os.fork()
                if server == 0:
                    _serve_child(os.getppid(), serve, from_parent, to_parent)
                os.close(from_parent)
                os.close(to_parent)
                keeper.keep(server)
            except BaseException:  # told to stop before keeping, or the keeper failed
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                keeper.end_descendants()
            finally:
                os._exit(1)
        os.close(from_parent)
        os.close(to_parent)
        return cls(
            pid, open(to_child, "wb", buffering=0), open(from_child, "rb", buffering=0), kept=kept
        )

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
        """End the packer and whatever it started: tell its keeper to (which
        ends every process below it, and exits), or, without one, kill its
        process group. One system call, no lock and no wait: safe in a signal
        handler."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if not self.kept:  # what the group still holds, the packer gone or not
                os.killpg(self.pid, signal.SIGKILL)
            elif self.returncode is None:  # once reaped, the pid may be another's
                os.kill(self.pid, signal.SIGTERM)

    def end(self) -> None:
        """End it as :meth:`kill` does, reap it and close the pipes. A keeper
        that does not exit in :data:`KEEPER_END_S` is killed with its group."""
        self.kill()
        if self.kept and self.wait(KEEPER_END_S) is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
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
