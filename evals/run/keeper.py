"""A packer's keeper: the process that runs a packer and, when it ends, ends
everything the packer started, also what left its process group.

A process group does not hold a packer's helpers: one that calls ``setsid``
(a daemon, a server a launcher starts) leaves it, and ``killpg`` misses it;
once its parent exits it is re-parented to init and outlives the eval. So a
packer is not started by packproof's process itself but by a keeper, which
Linux makes a *child subreaper* (``PR_SET_CHILD_SUBREAPER``): every process
the packer starts, at any depth and in any session, stays among the keeper's
descendants, re-parented to the keeper rather than to init when its own parent
exits. The keeper waits for the packer; when the packer exits, or the keeper
is told to stop (``SIGTERM``: packproof ends the packer, or the process that
started the keeper died, its parent-death signal), it kills every descendant
it has and reaps each until none is left, then exits as the packer did (its
exit code, or the same signal).

A command's keeper is this file run by the same Python (``python -I -S
keeper.py STATUS_FD PARENT -- COMMAND...``: the standard library only, no
site-packages), which starts the command and writes on ``STATUS_FD`` either
``ok`` or why it could not (``errno strerror``). A Python function's forked
child keeps the grandchild that runs the function the same way
(:func:`keep`). What remains out of reach: a process that a descendant
handed to another process's care (``ptrace``, a service manager's start
request, a ``systemd-run``), and one in uninterruptible sleep past
:data:`GIVE_UP_S`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from typing import Final

__all__ = [
    "GIVE_UP_S",
    "become_keeper",
    "descendants",
    "end_descendants",
    "keep",
    "main",
    "packer_setup",
    "prctl",
]

PR_SET_PDEATHSIG: Final = 1  # linux/prctl.h
PR_SET_CHILD_SUBREAPER: Final = 36
GIVE_UP_S: Final = 30.0  # a descendant that will not die (uninterruptible sleep)
# Ctrl-C's disposition where the keeper was started, which the packer gets: ignored
# in a pool worker, as a packer started there directly would have it.
_SIGINT: list[signal.Handlers] = [signal.SIG_DFL]


def prctl(option: int, value: int) -> bool:
    """``prctl(option, value)`` where Linux has it; whether it took effect."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return int(ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """Every process below ``root`` (its children, theirs, ...), read from
    /proc; zombies included (they are reaped by whoever is their parent)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
            # "pid (comm) state ppid ...": comm may hold spaces and parentheses
            ppid = int(stat[stat.rindex(b")") + 1 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        children.setdefault(ppid, []).append(int(name))
    found: list[int] = []
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found


def end_descendants() -> None:
    """Kill every descendant of this process and reap its children until none
    is left. Being a subreaper, this process inherits every orphan below it, so
    a process forked while others were killed is found on the next round."""
    me = os.getpid()
    give_up = time.monotonic() + GIVE_UP_S
    while time.monotonic() < give_up:
        found = descendants(me)
        if not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        reaped = False
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return  # no child left: no descendant either
            if not pid:
                break
            reaped = True
        if not reaped:
            time.sleep(0.005)  # killed, not yet dead


class _Stop(BaseException):
    """SIGTERM: the keeper is told to end its packer."""


def _stop(signum: int, frame: object) -> None:
    raise _Stop


def _exit_as(code: int) -> None:
    """Exit as a child that ended with ``code`` did: its exit code, or killed
    by the same signal (no core file)."""
    if code < 0:
        import resource

        with contextlib.suppress(Exception):
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        with contextlib.suppress(Exception):  # SIGKILL and SIGSTOP have no disposition
            signal.signal(-code, signal.SIG_DFL)
        with contextlib.suppress(Exception):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {-code})
        with contextlib.suppress(Exception):
            os.kill(os.getpid(), -code)
        code = 128 - code  # a signal that does not end a process: as a shell says it
    os._exit(code & 0xFF)


def keep(child: int) -> None:
    """In a keeper (a subreaper whose SIGTERM raises :class:`_Stop`): wait for
    ``child``, reaping the orphans that come meanwhile, then end every
    descendant and exit as the child did; told to stop first, end them all and
    exit by SIGTERM. Never returns."""
    code = -signal.SIGTERM
    try:
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == child:
                code = os.waitstatus_to_exitcode(status)
                break
    except _Stop:
        pass
    except ChildProcessError:  # the child is gone (it cannot be: it is ours)
        code = 1
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut this short
    end_descendants()
    _exit_as(code)


def become_keeper(parent: int) -> bool:
    """Make this process a keeper: a subreaper, told to stop (SIGTERM) when
    the thread that started it dies, SIGTERM raising :class:`_Stop`. False if
    ``parent`` is not its parent any more (it died before the death signal was
    set: the keeper must end at once)."""
    signal.signal(signal.SIGTERM, _stop)
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        _SIGINT[0] = signal.SIG_IGN
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the eval's to handle
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    return os.getppid() == parent


def packer_setup() -> None:
    """In the packer, before it runs: killed if its keeper dies (SIGKILL
    cannot be caught), with Ctrl-C as where the keeper was started."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGINT, _SIGINT[0])


def main(argv: list[str]) -> None:
    """``STATUS_FD PARENT -- COMMAND...``: start COMMAND, say on STATUS_FD
    whether it started, and keep it."""
    status_fd, parent = int(argv[0]), int(argv[1])
    command = argv[3:]
    try:
        if not become_keeper(parent):  # the eval is gone: nothing is started
            os._exit(1)
        import subprocess

        try:
            popen = subprocess.Popen(  # stdin, stdout and stderr are the keeper's own
                command, close_fds=True, preexec_fn=packer_setup
            )
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            os.write(status_fd, f"{exc.errno or 0} {reason}\n".encode("utf-8", "replace"))
            os._exit(127)
        os.write(status_fd, b"ok\n")
        os.close(status_fd)
        # The pipes are the packer's: the keeper holding them would hide its exit.
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.close(devnull)
        keep(popen.pid)
    except _Stop:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        end_descendants()
        _exit_as(-signal.SIGTERM)


if __name__ == "__main__":
    main(sys.argv[1:])
