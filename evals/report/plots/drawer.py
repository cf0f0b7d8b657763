"""The PNG plots of a large run drawn in a second process, while this one renders
the text reports: :class:`Drawer`.

Drawing the plots is most of a large run's report time, and it needs only the
summary and each cell's strategy and latency, never the records themselves. A
:class:`Drawer` starts its process (a fresh interpreter that imports packproof
by name, as an installed wheel does: no copy of this process's threads or
memory, and not the caller's main module) before the summary is computed, so
that matplotlib is imported while it is. :meth:`Drawer.early` sends it each
part of the summary as soon as it is computed (the replays' figures first, then
the groups), and it draws every plot whose part is all there (:data:`NEEDS`)
while the rest is computed; :meth:`Drawer.draw` sends the whole summary;
:meth:`Drawer.into` waits for the PNG bytes and puts them where the
renderers look first (``ReportContext.once``), so each renderer returns the
very bytes it would have drawn itself (the same code on the same figures).

Nothing here changes how a report fails: when the process cannot start, dies or
raises, the plots are drawn in this process as before, and any error is raised
there, as it always was. The second process ignores Ctrl-C (the eval stops it),
ends with the eval however that ends, and writes no file. Once the plots are
drawn it also checks the summary against its schema (``check``), which it holds
already, and the eval checks it itself when it did not.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from multiprocessing.connection import Connection
from typing import Any, Final

from packproof.evals.report.model import ReportContext
from packproof.evals.report.plots.configdir import ready
from packproof.evals.report.plots.frontier import frontier
from packproof.evals.report.plots.latency import latency
from packproof.evals.report.plots.recall import recall_vs_budget, recall_vs_stability

__all__ = ["MIN_CELLS", "NEEDS", "PLOTS", "Check", "Drawer", "serve"]

Check = Callable[[Any], list[str]]  # a summary's errors (evaluate.validate_summary)

# Each plot by file name, in the order they are drawn.
PLOTS: Final[dict[str, Callable[[ReportContext], bytes | None]]] = {
    "recall_vs_budget.png": recall_vs_budget,
    "recall_vs_stability.png": recall_vs_stability,
    "latency.png": latency,
    "frontier.png": frontier,
}
# The second process: a fresh interpreter that imports this module by name (never
# the eval's own main module, as multiprocessing's spawn would) and serves its pipe.
_START: Final = (
    "import sys; from packproof.evals.report.plots.drawer import serve; "
    "serve(int(sys.argv[1]), int(sys.argv[2]))"
)
# Below this many cells the plots take less than starting a process does.
MIN_CELLS: Final = 20_000


# What each plot reads of a summary (and latency.png of the cells): a part of the
# summary that holds these is enough to draw it (Drawer.early).
NEEDS: Final[dict[str, tuple[str, ...]]] = {
    "recall_vs_budget.png": ("strategies", "confidence", "groups"),
    "recall_vs_stability.png": ("strategies", "confidence", "groups"),
    "latency.png": ("strategies",),
    "frontier.png": ("strategies", "replay"),
}


def _cell_rows(specs: list[str], ms: list[Any]) -> list[dict[str, Any]]:
    """Per cell, only its ``spec`` and ``latency_ms``: all the plots read of the records."""
    return [{"spec": s, "latency_ms": m} for s, m in zip(specs, ms, strict=True)]


def _draw(
    summary: Mapping[str, Any], records: list[dict[str, Any]], made: dict[str, Any]
) -> dict[str, Any]:
    """Every plot of a context holding ``summary`` and ``records`` (:func:`_cell_rows`);
    those in ``made`` are not drawn again."""
    ctx = ReportContext(summary, records, {}, dict(made))
    return {name: plot(ctx) for name, plot in PLOTS.items()}


def _drawable(part: Mapping[str, Any], cells: bool) -> list[str]:
    """The plots a part of a summary holds all they read of it (latency.png
    with the cells' specs and latencies, ``cells``)."""
    return [
        name
        for name, needs in NEEDS.items()
        if all(k in part for k in needs) and (cells or name != "latency.png")
    ]


def serve(fd: int, parent: int) -> None:
    """The second process (``python -c``, given its end of the pipe): draw each
    plot as soon as a part of the summary holds what it reads
    (:meth:`Drawer.early`), then the rest from the whole one, and send them back
    (None when drawing them failed: the eval draws them itself, and raises)."""
    from packproof.evals.run.process import die_with_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the eval's to handle
    die_with_parent(signal.SIGKILL)
    if os.getppid() != parent:  # the eval ended before prctl took effect
        return
    ready()  # matplotlib imported while the eval computes the summary
    conn = Connection(fd)
    made: dict[str, Any] = {}
    records: list[dict[str, Any]] | None = None  # not sent yet
    try:
        while True:
            job = conn.recv()
            if job[2] is not None:  # the cells' specs and latencies, sent once
                records = _cell_rows(job[2], job[3])
            if job[0] != "part":
                break
            ctx = ReportContext(job[1], records or [], {}, dict(made))
            for name in _drawable(job[1], records is not None):
                if name not in made:
                    with contextlib.suppress(Exception):  # drawn again from the whole summary
                        made[name] = PLOTS[name](ctx)
    except EOFError:  # the eval is done with it (an error before the summary)
        return
    try:
        drawn: dict[str, Any] | None = _draw(job[1], records or [], made)
    except BaseException:  # drawn again, and raised, in the eval
        drawn = None
    try:
        errors = None if job[4] is None else job[4](job[1])
    except BaseException:  # checked again in the eval
        errors = None
    with contextlib.suppress(OSError):  # OSError: the eval stopped waiting
        conn.send((drawn, errors))


class Drawer:
    """A second process for a report's plots; a context that ends it (a Ctrl-C,
    an error) however the report ends. ``enabled`` False: no process, and
    :meth:`into` leaves the plots to be drawn in this process."""

    def __init__(self, enabled: bool = True) -> None:
        self._conn: Connection | None = None
        self._process: Any = None
        self._cells_sent = False
        if not enabled:
            return
        try:
            ours, theirs = multiprocessing.Pipe()
        except OSError:  # no pipe to be had: drawn here
            return
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", _START, str(theirs.fileno()), str(os.getpid())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,  # a failure there is raised here, drawing again
                pass_fds=[theirs.fileno()],
                start_new_session=True,  # no terminal's Ctrl-C: the eval ends it
            )
        except (OSError, ValueError, TypeError):  # no process to be had: drawn here
            ours.close()
            return
        finally:
            theirs.close()
        self._conn, self._process = ours, process

    def early(
        self, part: Mapping[str, Any], records: Sequence[Mapping[str, Any]] | None = None
    ) -> None:
        """Send the process a part of the summary (as the summary will hold it)
        before the rest is computed, and the cells' specs and latencies once
        (``records``): it draws each plot whose part is all there (:data:`NEEDS`)."""
        self._send(("part", dict(part), *self._cells(records)))

    def _cells(self, records: Sequence[Mapping[str, Any]] | None) -> tuple[Any, Any]:
        """The cells' specs and latencies, the first time they are sent (then None)."""
        if records is None or self._cells_sent:
            return None, None
        self._cells_sent = True
        return [r["spec"] for r in records], [r.get("latency_ms") for r in records]

    def draw(self, ctx: ReportContext, check: Check | None = None) -> None:
        """Send the process what the plots need of ``ctx``, and ``check`` to run
        on its summary once they are drawn (a module's function: it is pickled
        by name)."""
        if self._conn is None:
            return
        self._send(("all", dict(ctx.summary), *self._cells(ctx.records), check))

    def _send(self, job: tuple[Any, ...]) -> None:
        if self._conn is None:
            return
        try:
            self._conn.send(job)
        except (OSError, ValueError):  # it died: drawn here
            self.close()

    def into(
        self, ctx: ReportContext, waiting: Callable[[], None] | None = None
    ) -> list[str] | None:
        """The process's plots, into ``ctx`` (``waiting`` is called first when they
        are not in yet), and what ``check`` said of the summary; nothing when
        there are none (drawn here), None when it did not run (run it here)."""
        if self._conn is None:
            return None
        try:
            if waiting is not None and not self._conn.poll():
                waiting()
            drawn, errors = self._conn.recv()
        except (OSError, EOFError):  # it died: drawn here
            drawn = errors = None
        self.close()
        if isinstance(drawn, dict) and set(drawn) == set(PLOTS):
            ctx.made.update(drawn)  # what ctx.once gives each renderer
        return errors if isinstance(errors, list) else None

    def close(self) -> None:
        """End the process (if still running) and wait for it."""
        conn, process, self._conn, self._process = self._conn, self._process, None, None
        if conn is not None:
            conn.close()
        if process is not None:
            if process.poll() is None:
                process.terminate()
            process.wait()

    def __enter__(self) -> Drawer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
