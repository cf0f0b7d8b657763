"""What every reliability table shares: files to write, a config, and the check each
bad-input row makes (one line, exit 2, no traceback, nothing a user gave lost,
nothing half-written)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from packproof.cli import main
from tests.paths import ROOT

SUITE = ROOT / "scenarios" / "compiled" / "lossless-claw.jsonl"


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def config(tmp: Path, suites: list[str], **extra: object) -> Path:
    body = {
        "schema": "packproof.eval.v1",
        "name": "t",
        "suites": suites,
        "strategies": ["chronological", "bm25"],
        "budgets": ["scenario"],
        "bootstrap": {"resamples": 100},
        **extra,
    }
    return write(tmp / "cfg" / "c.yaml", json.dumps(body))


def assert_one_line_exit_2(
    builder: Callable[[Path], list[str]],
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Run ``packproof`` with the arguments ``builder`` makes in ``tmp_path`` (the
    working folder): exit 2, one line on stderr that says ``says``, no traceback,
    every file that was there before unchanged (a run's own results aside), and no
    temporary file left."""
    monkeypatch.chdir(tmp_path)
    argv = builder(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and not p.is_fifo()}
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("packproof: error: "), err
    assert says in err, err
    assert "Traceback" not in err
    for path, content in before.items():  # nothing a user gave is lost
        if path.exists() and path.suffix != ".jsonl" and "results" not in path.name:
            assert path.read_bytes() == content, path
    assert not list(tmp_path.rglob("*.tmp")), "a temporary file was left behind"
