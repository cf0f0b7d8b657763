"""The command line: packs to stdout; bad input is one line on stderr, exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from packproof.packer.schema import validate


def packproof(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "packproof", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


REQUEST = {
    "items": [
        {"id": "a", "text": "database migration plan"},
        {"id": "b", "text": "lunch", "role": "assistant"},
        {"id": "c", "text": "ok"},
    ],
    "budget_tokens": 8,
    "prompt": "database",
}  # lcm tokens: a 6, b 8 (its JSON content blocks), c 1


def test_pack_from_file_and_stdin(tmp_path: Path) -> None:
    path = tmp_path / "req.json"
    path.write_text(json.dumps(REQUEST))
    from_file = packproof("pack", str(path), "--strategy", "bm25")
    from_stdin = packproof("pack", "-", "--strategy", "bm25", stdin=json.dumps(REQUEST))
    assert from_file.returncode == 0, from_file.stderr
    assert from_file.stdout == from_stdin.stdout
    out = json.loads(from_file.stdout)
    assert validate("pack", out) == []
    # a (the match) fits, b does not fit what is left, c (zero score) fills the rest
    assert [i["recordRef"] for i in out["items"]] == ["a", "c"]


def test_flags_override_the_request(tmp_path: Path) -> None:
    out = packproof(
        "pack",
        "--strategy",
        "bm25lite",
        "--budget",
        "100",
        "--prompt",
        "lunch",
        stdin=json.dumps(REQUEST),
    )
    trace = json.loads(out.stdout)["trace"]
    assert trace["mode"] == "full-fit" and trace["budget"]["budget_tokens"] == 100
    out = packproof(
        "pack",
        "--strategy",
        "bm25",
        "--param",
        "k1=2",
        "--param",
        "stopwords=english",
        stdin=json.dumps(REQUEST),
    )
    assert (
        json.loads(out.stdout)["trace"]["spec"] == "bm25(b=0.75,k1=2,stem=none,stopwords=english)"
    )


def test_output_file_is_written(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "pack.json"
    assert packproof("pack", "-o", str(target), stdin=json.dumps(REQUEST)).returncode == 0
    assert json.loads(target.read_text())["schema"] == "openclaw-mem.context-pack.v1"


@pytest.mark.parametrize(
    ("args", "stdin", "needle"),
    [
        (["pack"], "{not json", "line 1 column 2: invalid JSON"),
        (["pack"], '{"items": [], "items": [], "budget_tokens": 1}', "duplicate key 'items'"),
        (["pack"], '{"items": [], "budget_tokens": NaN}', "invalid JSON"),
        (["pack", "--strategy", "bm26"], json.dumps(REQUEST), "--strategy/name: unknown strategy"),
        (
            ["pack", "--strategy", "bm25", "--param", "k9=1"],
            json.dumps(REQUEST),
            "unknown parameter",
        ),
        (["pack", "--param", "oops"], json.dumps(REQUEST), "--param: malformed parameter"),
        (["pack", "--budget", "0"], json.dumps(REQUEST), "/budget_tokens: out of range"),
        (["pack"], json.dumps({**REQUEST, "token_counter": "gpt9"}), "/token_counter"),
        (["pack", "/no/such/file.json"], None, "cannot read file"),
        (["pack", "--nope"], None, "unrecognized arguments"),
        (["schema", "nope"], None, "invalid choice"),
    ],
)
def test_bad_input_is_one_line_exit_2(args: list[str], stdin: str | None, needle: str) -> None:
    out = packproof(*args, stdin=stdin)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert needle in lines[0]
    assert "Traceback" not in out.stderr


def test_bad_input_writes_no_output_file(tmp_path: Path) -> None:
    target = tmp_path / "pack.json"
    out = packproof("pack", "-o", str(target), "--budget", "0", stdin=json.dumps(REQUEST))
    assert out.returncode == 2 and not target.exists()


def test_strategies_and_schema_commands() -> None:
    listing = packproof("strategies")
    assert listing.returncode == 0
    assert "bm25: sum_t" in listing.stdout and "k1=1.2" in listing.stdout
    as_json = json.loads(packproof("strategies", "--json").stdout)
    assert as_json["clarity"]["params"]["half_life"]["default"] == 5.0
    for name in ("request", "pack", "trace"):
        out = packproof("schema", name)
        assert json.loads(out.stdout)["$schema"].endswith("2020-12/schema")
