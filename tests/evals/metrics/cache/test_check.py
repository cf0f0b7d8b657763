"""``packproof cache check`` on the shared Claude Code sessions (skipped without them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from packproof.cli import main
from packproof.evals.metrics.cache.check import check_sessions, within
from tests.paths import ROOT

SESSIONS = ROOT.parent / "shared" / "data" / "claude-code" / "sessions"
needs_sessions = pytest.mark.skipif(
    not SESSIONS.is_dir(), reason=f"the shared Claude Code sessions are not at {SESSIONS}"
)


def test_tolerance_is_one_percent_or_eight_tokens() -> None:
    assert within(108, 100) and not within(109, 100)
    assert within(10_100, 10_000) and not within(10_101, 10_000)


@needs_sessions
def test_the_model_reproduces_the_bill() -> None:
    rows = check_sessions([SESSIONS])
    assert len(rows) == 546
    assert sum(r.ok for r in rows) / len(rows) >= 0.98
    cost, billed = sum(r.cost for r in rows), sum(r.billed_cost for r in rows)
    assert abs(cost - billed) / billed <= 0.01
    assert all(r.note for r in rows if not r.ok)  # every miss names its rule


@needs_sessions
def test_the_cli_writes_a_new_run_and_ends_with_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for run in ("check-1", "check-2"):
        assert main(["cache", "check", str(SESSIONS / "short.jsonl"), "-o", str(tmp_path)]) == 0
        assert {p.name for p in (tmp_path / run).iterdir()} == {
            "calls.csv",
            "totals.json",
            "predicted-vs-billed.png",
        }
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert (
        last == "1 of 1 calls within tolerance; input cost +0.01% from the bill"
    )  # the 3-token tail is billed as written
    assert json.loads((tmp_path / "check-1" / "totals.json").read_text())["calls"] == 1


def _line(uuid: str, parent: str | None, kind: str, second: int, **usage: int) -> str:
    message: dict[str, object] = {"role": kind, "content": [{"type": "text", "text": uuid * 40}]}
    record: dict[str, object] = {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "timestamp": f"2026-02-11T10:00:{second:02d}.000Z",
        "message": message,
    }
    if kind == "assistant":
        message["model"] = "claude-opus-4-6"
        message["usage"] = {
            "input_tokens": usage["i"],
            "cache_creation_input_tokens": usage["w"],
            "cache_read_input_tokens": usage["r"],
            "cache_creation": {"ephemeral_5m_input_tokens": usage["w"]},
        }
        record["requestId"] = "req-" + uuid
    return json.dumps(record) + "\n"


def test_a_compaction_subagent_reads_its_main_sessions_prefix(tmp_path: Path) -> None:
    """Warm start (a seed of 17,800), the main session's two calls, then a
    compaction sub-agent that sends the main prompt plus its instruction."""
    main_file = tmp_path / "m.jsonl"
    main_file.write_text(
        _line("u", None, "user", 0)
        + _line("a", "u", "assistant", 1, i=3, w=8000, r=17800)
        + _line("v", "a", "user", 2)
        + _line("b", "v", "assistant", 3, i=1, w=600, r=25800),
        encoding="utf-8",
    )
    sub = tmp_path / "m" / "subagents"
    sub.mkdir(parents=True)
    (sub / "agent-acompact-1.jsonl").write_text(
        _line("x", None, "user", 5) + _line("y", "x", "assistant", 6, i=3, w=900, r=26400),
        encoding="utf-8",
    )
    rows = check_sessions([main_file])
    assert [(r.session, r.cached, r.billed_cached) for r in rows] == [
        ("m", 17800, 17800),
        ("m", 25803, 25800),
        ("agent-acompact-1", 26401, 26400),
    ]
    assert all(r.ok for r in rows)
