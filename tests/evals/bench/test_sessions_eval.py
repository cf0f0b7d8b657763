"""``make eval-sessions`` (evals/bench/sessions_eval.py): the skip without data, and the
whole path (import, eval, as-billed report) on a hand-made two-call session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from packproof.evals.bench.sessions_eval import main

SUITE = "../reports/imports/claude_code_sessions.jsonl"


def test_without_the_sessions_it_skips_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    absent = tmp_path / "no-such-folder"
    assert main(["--sessions", str(absent)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out == [f"eval-sessions: skipped: no Claude Code sessions at {absent}"]
    assert not (tmp_path / "reports").exists()


def _rec(uuid: str, parent: str | None, kind: str, text: str, second: int, **usage: int) -> str:
    message: dict[str, object] = {"role": kind, "content": [{"type": "text", "text": text}]}
    record: dict[str, object] = {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "timestamp": f"2026-02-11T10:00:{second:02d}.000Z",
        "message": message,
    }
    if kind == "assistant":
        record["requestId"] = f"r-{uuid}"
        message["model"] = "claude-sonnet-4-5-20250929"
        message["usage"] = {
            "input_tokens": usage["uncached"],
            "cache_creation_input_tokens": usage["written"],
            "cache_read_input_tokens": usage["cached"],
            "cache_creation": {"ephemeral_5m_input_tokens": usage["written"]},
            "output_tokens": 1,
        }
    return json.dumps(record)


def test_the_report_prices_a_tiny_session_as_billed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two calls on Sonnet 4.5 ($3 per million, 5-minute entries), the first
    reading a 2,000-token prefix the user's other sessions wrote: call 1 sends
    2,000 + 600 (u1), call 2 adds a1 and u2, 1,200 tokens. At a budget above the
    whole conversation every spec sends what the session sent, so it costs the
    bill: (0.1 x 2,000 + 1.25 x 600) + (0.1 x 2,600 + 1.25 x 1,200) = 2,710
    input-token units, $0.00813."""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    lines = [
        _rec("u1", None, "user", "please fix /srv/app/main.py " + "x " * 200, 0),
        _rec("a1", "u1", "assistant", "reading it", 1, uncached=0, written=600, cached=2000),
        _rec("u2", "a1", "user", "it fails in /srv/app/main.py " + "y " * 400, 3),
        _rec("a2", "u2", "assistant", "fixed /srv/app/main.py", 4, uncached=0, written=1200,
             cached=2600),
    ]  # fmt: skip
    (sessions / "tiny.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "evals").mkdir()
    config = tmp_path / "evals" / "sessions.yaml"
    config.write_text(
        f"schema: packproof.eval.v1\nname: sessions\nsuites: [{SUITE}]\n"
        "strategies: [chronological, bm25]\nbudgets: [8192]\n"
        "cache: {static_prefix_tokens: [2000], profiles: [anthropic]}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    argv = ["--sessions", str(sessions), "--config", str(config), "--jobs", "1"]
    assert main([*argv, "--proof", "proof"]) == 0
    capsys.readouterr()
    figures = json.loads((tmp_path / "proof" / "sessions.json").read_text(encoding="utf-8"))
    assert figures["actual"]["usd"] == pytest.approx(2710 * 3 / 1e6)
    assert figures["as_sent"]["usd"] == pytest.approx(2710 * 3 / 1e6)
    rows = {r["spec"]: r for r in figures["rows"]}
    assert set(rows) == {"chronological", "bm25"}
    for row in rows.values():
        assert row["usd"] == pytest.approx(2710 * 3 / 1e6)
        assert row["multiple"] == pytest.approx(1.0)
        assert row["hit_rate"] == pytest.approx(4600 / 6400)
        assert (row["evidence_steps"], row["recall"]) == (1, 1.0)  # a2 reuses u1's path
    assert {p.name for p in (tmp_path / "proof").iterdir()} == {
        "sessions.md",
        "sessions.json",
        "sessions.png",
    }
    assert "| 8192 | `bm25` | 1.000 | 0.01 | 1.000 |" in (
        tmp_path / "reports" / "sessions" / "latest" / "sessions.md"
    ).read_text(encoding="utf-8")
