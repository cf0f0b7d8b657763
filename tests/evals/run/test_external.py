"""External packers: the JSON-lines protocol, failure classes, same metrics."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from packproof.evals.run import external
from packproof.evals.run.config import load_config
from packproof.evals.run.evaluate import evaluate
from packproof.evals.run.external import ExternalPacker
from packproof.evals.run.runner import run_cells
from tests.evals.run.test_runner import suite_turns, write_config
from tests.journal import records as journal_records
from tests.paths import ROOT

SERVE = f"cmd:{sys.executable} -m packproof serve"


def small_config(tmp: Path) -> Path:
    return write_config(tmp, strategies=["chronological", "bm25"], budgets=["scenario", 16])


def test_builtin_packer_through_the_protocol_gives_the_same_metrics(tmp_path: Path) -> None:
    cfg = small_config(tmp_path)
    inside = evaluate(cfg, out_root=tmp_path / "in", jobs=1, executor="serial", resume=False)
    outside = evaluate(
        cfg, out_root=tmp_path / "out", jobs=1, executor="serial", resume=False, packer=SERVE
    )
    assert (inside / "metrics.csv").read_text() == (outside / "metrics.csv").read_text()

    def records(run: Path) -> list[dict[str, object]]:
        rows = journal_records(run)
        return sorted(
            ({k: v for k, v in r.items() if k != "latency_ms"} for r in rows),
            key=lambda r: str(r["key"]),
        )

    assert records(inside) == records(outside)
    summary = json.loads((outside / "summary.json").read_text())
    assert summary["manifest"]["packer"] == SERVE


FAKES = {
    "TIMEOUT": "import sys, time\nfor line in sys.stdin:\n    time.sleep(30)\n",
    "CRASH": "import sys\nsys.stdin.readline()\nsys.exit(3)\n",
    "PARSE_ERROR": "import sys\nfor line in sys.stdin:\n    print('not json', flush=True)\n",
    "SCHEMA_ERROR": (
        "import json, sys\nfor line in sys.stdin:\n"
        "    print(json.dumps({'request_id': json.loads(line)['request_id']}), flush=True)\n"
    ),
    # closes stdout and keeps running: a CRASH within the timeout, not a hang
    "CRASH_OPEN": "import os, sys, time\nsys.stdin.readline()\nos.close(1)\ntime.sleep(60)\n",
    # an empty line before each answer: not an answer (not the end of the stream),
    # and the packer is restarted, so every cell says so (none is a DESYNC)
    "EMPTY_LINE": (
        "import json, sys\nfrom packproof import pack\nfor line in sys.stdin:\n"
        "    request = json.loads(line)\n    rid = request.pop('request_id')\n"
        "    print('', flush=True)\n"
        "    print(json.dumps({**pack(request).to_dict(), 'request_id': rid}), flush=True)\n"
    ),
    # packs nothing, with packproof's trace of a full pack: never scored from the trace
    "TRACE_ONLY": (
        "import json, sys\nfrom packproof import pack\nfor line in sys.stdin:\n"
        "    request = json.loads(line)\n    rid = request.pop('request_id')\n"
        "    answer = {**pack(request).to_dict(), 'request_id': rid}\n"
        "    answer['items'], answer['bundle_text'] = [], ''\n"
        "    print(json.dumps(answer), flush=True)\n"
    ),
}
NEVER_READS = "import time\ntime.sleep(60)\n"
# a fake's failure class, where it is not the fake's name
STATUS = {"CRASH_OPEN": "CRASH", "EMPTY_LINE": "PARSE_ERROR", "TRACE_ONLY": "SCHEMA_ERROR"}
SAYS = {  # what each failed cell's error says, where the class alone is not enough
    "EMPTY_LINE": "the answer line is empty (expected one JSON object)",
    "TRACE_ONLY": "the answer has a trace that contradicts its items: it decides packed ids "
    "that are not among its items",
}
UNKNOWN_ID = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    rid = json.loads(line)['request_id']\n"
    "    item = {'recordRef': 'zzz', 'layer': 'L1', 'type': 'message', 'importance': 'unknown',\n"
    "            'trust': 'unknown', 'text': 'x', 'citations': {'recordRef': 'zzz'}}\n"
    "    meta = {'ts': 't', 'query': '', 'scope': None, 'budgetTokens': 1, 'maxItems': 1}\n"
    "    print(json.dumps({'request_id': rid, 'schema': 'openclaw-mem.context-pack.v1',\n"
    "        'meta': meta, 'bundle_text': '', 'items': [item], 'notes': {'how_to_use': []}}),\n"
    "        flush=True)\n"
)


@pytest.mark.parametrize(
    ("expected", "script", "says"),
    [
        *((STATUS.get(k, k), v, SAYS.get(k, "")) for k, v in FAKES.items()),
        ("SCHEMA_ERROR", UNKNOWN_ID, ""),
    ],
    ids=[*FAKES, "UNKNOWN_ID"],
)
def test_failures_are_recorded_per_cell_and_the_run_goes_on(
    tmp_path: Path, expected: str, script: str, says: str
) -> None:
    fake = tmp_path / "fake.py"
    fake.write_text(script)
    cfg = load_config(
        write_config(
            tmp_path,
            strategies=["bm25"],
            budgets=["scenario"],
            suites=[str(ROOT / "scenarios/compiled/lossless-claw.jsonl")],
        )
    )
    # A packer that hangs is cut off at once; one that fails is given the time a
    # loaded machine may take to start it, so it is never mistaken for a hang.
    timeout = 0.5 if expected == "TIMEOUT" else 60
    records = run_cells(
        cfg, tmp_path / "o", executor="serial", packer=[sys.executable, str(fake)], timeout=timeout
    )
    # every cell ran, none was skipped by an earlier failure
    assert len(records) == suite_turns("lossless-claw")
    assert {r["status"] for r in records} == {expected}
    assert all(r["metrics"] == {} and r["error"] for r in records)
    assert all(says in r["error"] for r in records), records[0]["error"]


def long_line(tmp: Path, size: int, newline: bool) -> list[str]:
    """A packer answering each request with a JSON object of ``size`` bytes
    written at once (with its newline, or none, holding the line open)."""
    fake = tmp / "long.py"
    fake.write_text(
        "import json, sys, time\n"
        "for line in sys.stdin:\n"
        "    rid = json.dumps(json.loads(line)['request_id'])\n"
        '    head = b\'{"request_id": \' + rid.encode() + b\', "pad": "\'\n'
        f"    body = head + b'x' * ({size} - len(head) - 2) + b'\"}}'\n"
        f"    sys.stdout.buffer.write(body + (b'\\n' if {newline} else b''))\n"
        "    sys.stdout.buffer.flush()\n"
        "    time.sleep(600)\n"
    )
    return [sys.executable, str(fake)]


def test_a_long_answer_is_read_in_linear_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read in 1 KiB pieces, a 32 MiB line is 32768 reads: in linear time a
    moment, in quadratic time (each piece appended to, and the whole line
    searched for its newline again) about half a terabyte of copying, far past
    the generous timeout. Read whole, it is parsed and held to the pack schema."""
    monkeypatch.setattr(external, "READ_CHUNK", 1024)
    packer = ExternalPacker(long_line(tmp_path, 32 << 20, newline=True), timeout=300)
    try:
        failure, message = packer.call({"items": [{"id": "a", "text": "x"}], "budget_tokens": 9})
    finally:
        packer.close()
    assert failure == "SCHEMA_ERROR" and "not a ContextPack v1" in message


def test_an_answer_longer_than_the_most_read_is_a_parse_error_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the bound, the line is not read on (memory stays bounded), the cell
    fails at once, not at the timeout, and the packer is restarted."""
    monkeypatch.setattr(external, "ANSWER_FLOOR_BYTES", 1 << 20)
    packer = ExternalPacker(long_line(tmp_path, 3 << 20, newline=False), timeout=600)
    request = {"items": [{"id": "a", "text": "x"}], "budget_tokens": 9}
    try:
        failure, message = packer.call(request)
        assert packer._proc is None  # ended: the rest of its line is still coming
    finally:
        packer.close()
    assert failure == "PARSE_ERROR"
    assert message.startswith("the answer line is longer than 1 MiB, the most read for this ")
    assert external.max_answer_bytes(10 << 20) == 160 << 20  # 16 times a big request


ANSWERS_TWICE = (
    "import json, sys\n"
    "from packproof import pack\n"
    "for line in sys.stdin:\n"
    "    request = json.loads(line)\n"
    "    rid = request.pop('request_id')\n"
    "    text = json.dumps({**pack(request).to_dict(), 'request_id': rid})\n"
    "    print(text, flush=True)\n"
    "    print(text, flush=True)\n"
)


def test_a_packer_that_answers_twice_never_gets_a_stale_pack_scored(tmp_path: Path) -> None:
    """Without ids echoed, every second answer would be scored as the next cell's
    pack. With them, it is a DESYNC (the packer restarts) and every cell that is
    scored is scored with its own pack."""
    fake = tmp_path / "fake.py"
    fake.write_text(ANSWERS_TWICE)
    cfg = load_config(small_config(tmp_path))
    inside = {r["key"]: r for r in run_cells(cfg, tmp_path / "in", executor="serial")}
    outside = run_cells(
        cfg, tmp_path / "out", executor="serial", packer=[sys.executable, str(fake)], timeout=60
    )
    statuses = {r["status"] for r in outside}
    assert "DESYNC" in statuses and statuses <= {"DESYNC", "ok"}, statuses
    scored = [r for r in outside if r["status"] == "ok"]
    assert scored and all(r["metrics"] == inside[r["key"]]["metrics"] for r in scored)


def test_a_packer_that_never_reads_times_out_on_the_write(tmp_path: Path) -> None:
    """A request larger than the pipe's buffer blocks a writer whose reader never
    reads: the write is bounded by the timeout like the read."""
    fake = tmp_path / "fake.py"
    fake.write_text(NEVER_READS)
    packer = ExternalPacker([sys.executable, str(fake)], timeout=0.5)
    big = {"items": [{"id": "a", "text": "x" * 1_000_000}], "budget_tokens": 10}
    try:
        failure, message = packer.call(big)
    finally:
        packer.close()
    assert failure == "TIMEOUT" and "not read" in message


def test_a_failing_packer_fails_the_summary_and_junit(tmp_path: Path) -> None:
    fake = tmp_path / "fake.py"
    fake.write_text(FAKES["PARSE_ERROR"])
    cfg = small_config(tmp_path)
    run = evaluate(
        cfg,
        out_root=tmp_path / "r",
        jobs=1,
        executor="serial",
        resume=False,
        packer=f"cmd:{sys.executable} {fake}",
    )
    summary = json.loads((run / "summary.json").read_text())
    assert sum(g["hard_invariants"]["cell_failures"] for g in summary["groups"]) == summary["cells"]
    assert "PARSE_ERROR" in (run / "junit.xml").read_text()
    assert "PARSE_ERROR" in (run / "metrics.csv").read_text()


def test_a_command_that_cannot_start_is_one_line(tmp_path: Path) -> None:
    cfg = small_config(tmp_path)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "packproof",
            "eval",
            "--config",
            str(cfg),
            "--packer",
            "cmd:/no/such/packer",
            "--out",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().splitlines() == [
        "packproof: error: --packer: cannot start '/no/such/packer': No such file or directory"
    ]
    assert not (tmp_path / "r").exists()
