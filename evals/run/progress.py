"""What a terminal shows while ``packproof eval`` runs: a bar of the grid's cells
as their records arrive, then a bar of the report writing that names each step
(the summary statistics a part at a time, then each file rendered and written).

A cell is one record of ``results.jsonl.gz`` (one turn, spec and budget; a replay's
cells are its steps and probes under each spec and budget), so the first bar
counts what the run produces, not the tasks that carry it: a replay of a few long
conversations is a few tasks of thousands of cells. Records arrive a task at a
time (a task is packed in one worker), so the bar moves in steps of a task's
cells. Both bars stay on screen when done, to show what ran and how long it took.

They are drawn on stderr, and only on a terminal: a CI log, a pipe or a test's
captured output gets nothing, and no report byte depends on them.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import IO, Any

from packproof.evals.run.journal import RESULTS

__all__ = ["EvalProgress"]

# The report bar: a rate of steps per second says nothing (rendering report.html
# and writing junit.xml are one step each), the elapsed time and the step do.
REPORT_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]"


class EvalProgress:
    """The eval's two bars. The run calls it as ``progress(done, total)`` in cells
    (the runner's callback); when the last cell is in, the runner reads
    ``results.jsonl.gz`` back, the first of ``report_steps`` steps of the report bar,
    and each later :meth:`step` names the next. ``enabled`` defaults to whether
    ``file`` (stderr) is a terminal; a disabled one draws nothing. As a context,
    it ends its bars' lines however the run ends, so an error is not printed on
    the end of a bar."""

    def __init__(
        self, report_steps: int, file: IO[str] | None = None, *, enabled: bool | None = None
    ) -> None:
        self.file = file if file is not None else sys.stderr
        self.enabled = self.file.isatty() if enabled is None else enabled
        self.report_steps = report_steps
        self._cells: Any = None
        self._reports: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        if self._cells is None:  # a resumed run starts at the cells it kept
            self._cells = tqdm(
                total=total, initial=done, desc="cells", unit=" cells", file=self.file, leave=True
            )
        else:
            self._cells.update(done - self._cells.n)
        if done >= total:
            self._cells.close()
            self.step(f"reading {RESULTS}")

    def step(self, doing: str) -> None:
        """The report bar's previous step is done; ``doing`` is the one now running."""
        if not self.enabled:
            return
        if self._reports is None:
            from tqdm import tqdm

            self._reports = tqdm(
                total=self.report_steps,
                desc="reports",
                postfix=doing,
                file=self.file,
                leave=True,
                bar_format=REPORT_FORMAT,
            )
        else:  # the new step's name first, so no line shows a count beside the old one
            self._reports.set_postfix_str(doing, refresh=False)
            self._reports.update(1)
        self.show(doing)

    def show(self, doing: str) -> None:
        """What the report bar's current step is doing now (the file it writes)."""
        if self._reports is not None:
            self._reports.set_postfix_str(doing)  # refreshes: every one is drawn

    def close(self, done: str) -> None:
        """The report writing is over; ``done`` says what it left."""
        if not self.enabled or self._reports is None:
            return
        self._reports.update(self._reports.total - self._reports.n)
        self._reports.set_postfix_str(done, refresh=False)
        self._reports.close()

    def __enter__(self) -> EvalProgress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for bar in (self._cells, self._reports):
            if bar is not None:
                bar.close()  # closing twice is a no-op
