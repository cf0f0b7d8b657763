"""The Claude Code importer: hand-made transcripts for the mapping and its bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from packproof.cli import main
from packproof.evals.scenarios.format import load_compiled
from packproof.evals.scenarios.importers.claude_code import import_claude_code
from packproof.evals.scenarios.importers.claude_code.transcript import read_session
from packproof.packer.errors import InputError
from tests.reliability.helpers import assert_one_line_exit_2


def _usage(inp: int, written: int, cached: int) -> dict[str, object]:
    return {
        "input_tokens": inp,
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": cached,
        "cache_creation": {"ephemeral_5m_input_tokens": written, "ephemeral_1h_input_tokens": 0},
        "output_tokens": 5,
    }


def _rec(
    uuid: str, parent: str | None, kind: str, content: object, ts: str, **extra: object
) -> dict[str, object]:
    message: dict[str, object] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(model="claude-opus-4-6", usage=extra.pop("usage"))
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "timestamp": ts,
        "message": message,
        **extra,
    }


def _session(path: Path) -> Path:
    """Two calls: the second sends the first's response, a tool call and its result."""
    lines = [
        {"type": "file-history-snapshot"},
        _rec("u1", None, "user", "fix the build", "2026-02-11T10:00:00.000Z"),
        _rec(
            "a1",
            "u1",
            "assistant",
            [{"type": "thinking", "thinking": "look at the log"}],
            "2026-02-11T10:00:02.000Z",
            requestId="r1",
            usage=_usage(3, 8000, 17000),
        ),
        _rec(
            "a2",
            "a1",
            "assistant",
            [{"type": "tool_use", "name": "Bash", "input": {"command": "make"}}],
            "2026-02-11T10:00:03.000Z",
            requestId="r1",
            usage=_usage(3, 8000, 17000),
        ),
        _rec(
            "u2",
            "a2",
            "user",
            [{"type": "tool_result", "content": "error: missing semicolon " * 20}],
            "2026-02-11T10:00:05.000Z",
        ),
        _rec(
            "a3",
            "u2",
            "assistant",
            [{"type": "text", "text": "found it"}],
            "2026-02-11T10:00:07.500Z",
            requestId="r2",
            usage=_usage(1, 300, 25000),
        ),
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_records_sharing_a_request_id_are_one_call(tmp_path: Path) -> None:
    session = read_session(_session(tmp_path / "s1.jsonl"))
    assert [c.request_id for c in session.calls] == ["r1", "r2"]
    assert [m.uuid for m in session.calls[1].prompt] == ["u1", "a1", "a2", "u2"]
    assert session.calls[1].usage.prompt == 25301


def test_the_bill_sizes_what_a_call_appended(tmp_path: Path) -> None:
    scenarios, report = import_claude_code([_session(tmp_path / "s1.jsonl")], session_prefix=21460)
    (sc,) = scenarios
    assert [t.t for t in sc.turns] == [0.0, 5.5]  # seconds after the first call
    assert sc.turns[1].usage == {
        "cached": 25000,
        "input": 1,
        "output": 5,
        "written": 300,
        "written_1h": 0,
    }
    items = sc.turns[1].request["items"]
    # 25,301 tokens sent, 21,460 the session prefix: u1 has 25,003 - 21,460 = 3,543 from
    # the first call, and the three new records share 25,301 - 25,003 = 298
    assert items[0]["tokens"] == 3543
    assert sum(it["tokens"] for it in items[1:]) == 298
    assert report["steps"] == 2


def test_import_writes_a_suite_that_loads(tmp_path: Path) -> None:
    source = _session(tmp_path / "s1.jsonl")
    out = tmp_path / "out.jsonl"
    assert main(["import", "claude-code", str(source), "-o", str(out)]) == 0
    (sc,) = load_compiled(out)
    assert sc.id == "cc-s1" and sc.replay


def test_a_subagent_is_linked_to_its_parent(tmp_path: Path) -> None:
    _session(tmp_path / "main.jsonl")
    (tmp_path / "main" / "subagents").mkdir(parents=True)
    _session(tmp_path / "main" / "subagents" / "agent-a1.jsonl")
    scenarios, _ = import_claude_code([tmp_path])
    assert [s.id for s in scenarios] == ["cc-main", "cc-main-agent-a1"]
    assert "parent:cc-main" in scenarios[1].tags


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("{not json", "line 2: not a transcript record"),
        ('["a list"]', "line 2: not a transcript record (expected a JSON object"),
        (
            json.dumps(
                _rec(
                    "a9",
                    None,
                    "assistant",
                    [],
                    "2026-02-11T10:00:00Z",
                    requestId="r9",
                    usage={"input_tokens": -1},
                )
            ),
            "line 2: bad usage input_tokens",
        ),
        (
            json.dumps({"type": "user", "uuid": "x"}),
            "line 2: a user record without its uuid and message",
        ),
    ],
    ids=["invalid-json", "not-an-object", "negative-usage", "no-message"],
)
def test_a_bad_line_is_one_line_and_exit_2(
    line: str,
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def build(root: Path) -> list[str]:
        bad = root / "bad.jsonl"
        bad.write_text('{"type": "progress"}\n' + line + "\n", encoding="utf-8")
        return ["import", "claude-code", str(bad), "-o", str(root / "out.jsonl")]

    assert_one_line_exit_2(build, says, tmp_path, monkeypatch, capsys)


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in records), encoding="utf-8")
    return path


def test_parallel_tool_results_come_in_call_order_and_the_chain_marks_one(
    tmp_path: Path,
) -> None:
    """Two tool calls answered as sibling records: the chain passes the result of
    the first call (the last to arrive); the second call's result follows it."""
    ts = "2026-02-11T10:00:0{}.000Z"
    use = [{"type": "tool_use", "name": "Read", "input": {}}]
    records = [
        _rec("u1", None, "user", "go", ts.format(0)),
        _rec("a1", "u1", "assistant", use, ts.format(1), requestId="r1", usage=_usage(3, 9000, 0)),
        _rec("a2", "a1", "assistant", use, ts.format(1), requestId="r1", usage=_usage(3, 9000, 0)),
        _rec("t2", "a2", "user", [{"type": "tool_result", "content": "two"}], ts.format(2)),
        _rec("t1", "a1", "user", [{"type": "tool_result", "content": "one"}], ts.format(3)),
        _rec("a3", "t1", "assistant", [], ts.format(4), requestId="r2", usage=_usage(9, 10, 9003)),
    ]
    call = read_session(_write(tmp_path / "p.jsonl", records)).calls[1]
    assert [m.uuid for m in call.prompt] == ["u1", "a1", "a2", "t1", "t2"]
    assert call.marked == 4  # Claude Code's breakpoint: after t1, so t2 is uncached


def test_a_compaction_continues_in_a_new_part(tmp_path: Path) -> None:
    ts = "2026-02-11T10:00:0{}.000Z"
    text = [{"type": "text", "text": "ok"}]
    records = [
        _rec("u1", None, "user", "a long task", ts.format(0)),
        _rec("a1", "u1", "assistant", text, ts.format(1), requestId="r1", usage=_usage(3, 9000, 0)),
        _rec("s1", None, "user", "This session is being continued ...", ts.format(5)),
        _rec("a2", "s1", "assistant", text, ts.format(6), requestId="r2", usage=_usage(3, 500, 0)),
    ]
    scenarios, _ = import_claude_code([_write(tmp_path / "c.jsonl", records)])
    assert [s.id for s in scenarios] == ["cc-c", "cc-c-part-2"]
    assert "continues:cc-c" in scenarios[1].tags


def test_a_usage_with_an_unknown_key_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert (
        main(["import", "claude-code", str(_session(tmp_path / "s1.jsonl")), "-o", str(out)]) == 0
    )
    obj = json.loads(out.read_text(encoding="utf-8"))
    obj["turns"][0]["usage"]["extra"] = 1
    out.write_text(json.dumps(obj) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="usage"):
        load_compiled(out)


def test_each_step_carries_its_label_free_evidence(tmp_path: Path) -> None:
    """The Edit's path is what the Read returned: the signal points at the tool
    result (the Read's input is read with its result), not at the user's request
    or the bare call; a response with no rare token has no evidence."""
    ts = "2026-02-11T10:00:0{}.000Z"
    read = {"type": "tool_use", "id": "tu1", "name": "Read"}
    records = [
        _rec("u1", None, "user", "look at the config", ts.format(0)),
        _rec(
            "a1",
            "u1",
            "assistant",
            [{**read, "input": {"file_path": "/srv/app/settings.yaml"}}],
            ts.format(1),
            requestId="r1",
            usage=_usage(3, 9000, 0),
        ),
        _rec(
            "t1",
            "a1",
            "user",
            [{"type": "tool_result", "tool_use_id": "tu1", "content": "port: 8080"}],
            ts.format(2),
        ),
        _rec(
            "a2",
            "t1",
            "assistant",
            [{"type": "text", "text": "Editing /srv/app/settings.yaml to set port 8081"}],
            ts.format(3),
            requestId="r2",
            usage=_usage(3, 40, 9000),
        ),
    ]
    (sc,) = import_claude_code([_write(tmp_path / "e.jsonl", records)])[0]
    assert [t.relevant for t in sc.turns] == [(), ("t1",)]
    assert [t.request["items"][-1]["id"] for t in sc.turns] == ["u1", "t1"]


def test_steps_are_tagged_for_pricing_as_billed(tmp_path: Path) -> None:
    """Model, static prefix (the 17,000 cached tokens then the session context up
    to 21,460) and, on the first step, the part of it already cached (warm)."""
    (sc,) = import_claude_code([_session(tmp_path / "s1.jsonl")], session_prefix=21460)[0]
    assert [t.tags for t in sc.turns] == [
        ("step", "model:claude-opus-4-6", "static:21460", "warm:17000"),
        ("step", "model:claude-opus-4-6", "static:21460"),
    ]
    assert [t.relevant for t in sc.turns] == [(), ()]  # "make", "found it": nothing rare
