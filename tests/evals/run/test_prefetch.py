"""While the workers run the cells, the eval imports what its reports need in
a thread: only once a task has finished (the workers forked before it starts),
once, and only when this process is idle meanwhile."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from packproof.evals.run import evaluate

STARTED: list[Any] = []  # what each _Thread started would run


class _Thread:
    """A thread that records what it would run."""

    def __init__(self, *, target: Any, name: str, daemon: bool) -> None:
        self.target, self.daemon = target, daemon

    def start(self) -> None:
        assert self.daemon  # never holds the eval open
        STARTED.append(self.target)


def _calls(idle: bool, counts: list[int], monkeypatch: pytest.MonkeyPatch) -> int:
    STARTED.clear()
    monkeypatch.setattr(threading, "Thread", _Thread)
    seen: list[tuple[int, int]] = []
    progress = evaluate._prefetching(lambda done, total: seen.append((done, total)), idle)
    for done in counts:
        progress(done, 100)
    assert seen == [(done, 100) for done in counts]  # the progress itself, unchanged
    assert all(target is evaluate._import_all for target in STARTED)
    return len(STARTED)


def test_the_imports_start_once_a_task_has_finished(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _calls(True, [0, 0, 10, 20, 30], monkeypatch) == 1


def test_a_resumes_kept_cells_are_not_a_finished_task(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _calls(True, [40], monkeypatch) == 0  # the first call, before any task
    assert _calls(True, [40, 40, 50], monkeypatch) == 1


def test_a_busy_process_imports_nothing_early(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _calls(False, [0, 10, 20], monkeypatch) == 0


def test_the_modules_import_where_the_eval_extra_is_installed() -> None:
    evaluate._import_all()
