"""Bad scenario files: one line naming file and line, exit code 2, nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GOOD = """\
scenarios:
  - id: ok-one
    why: A valid scenario used as the base of the broken variants.
    request:
      budget_tokens: 10
      items:
        - [a, user, 1, hello]
        - [b, assistant, 1, world]
    expect:
      "*": {must_include: [b]}
"""

BROKEN = {
    "malformed-yaml": ("scenarios:\n  - id: [unclosed\n", "invalid YAML", 3),
    "duplicate-key": (
        GOOD.replace("    why:", "    why: first why is long enough.\n    why:"),
        "duplicate key 'why'",
        4,
    ),
    "unknown-scenario-field": (GOOD.replace("    why:", "    colour: red\n    why:"), "colour", 2),
    "unknown-item-field": (
        GOOD.replace("[a, user, 1, hello]", "{id: a, text: hi, colour: red}"),
        "/items/0/colour: unknown field",
        7,
    ),
    "wrong-type": (
        GOOD.replace("budget_tokens: 10", "budget_tokens: ten"),
        "/request/budget_tokens: wrong type",
        5,
    ),
    "unknown-strategy": (GOOD.replace('"*":', "bm26:"), "unknown strategy", 10),
    "unknown-id": (GOOD.replace("must_include: [b]", "must_include: [zz]"), "'zz'", 10),
    "strategy-in-request": (
        GOOD.replace("budget_tokens: 10", "budget_tokens: 10\n      strategy: bm25"),
        "/request/strategy: field not allowed here",
        6,
    ),
    "relevant-unknown": (
        GOOD.replace("    expect:", "    relevant: [nope]\n    expect:"),
        "relevant id 'nope'",
        9,
    ),
    "alias-bomb": (
        "a: &a [x,x,x,x,x,x,x,x,x,x]\n"
        + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 10)}]\n"
            for i in range(6)
        ),
        "alias bomb",
        1,
    ),
}


def packproof(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "packproof", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def assert_one_line_error(out: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "Traceback" not in out.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_file(case: str, tmp_path: Path) -> None:
    text, needle, line = BROKEN[case]
    (tmp_path / "good.yaml").write_text(GOOD.replace("ok-one", "ok-two"))
    (tmp_path / "bad.yaml").write_text(text)
    out = packproof("scenarios", "compile", "good.yaml", "bad.yaml", "--out", "out", cwd=tmp_path)
    assert_one_line_error(out, "bad.yaml", f"line {line}", needle)
    assert not (tmp_path / "out").exists()  # nothing written, not even the good file


def test_duplicate_ids_across_files(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(GOOD)
    (tmp_path / "b.yaml").write_text(GOOD)
    out = packproof("scenarios", "validate", "a.yaml", "b.yaml", cwd=tmp_path)
    assert_one_line_error(out, "b.yaml", "line 2", "duplicate scenario id 'ok-one'", "a.yaml")


def test_non_utf8_file(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_bytes(GOOD.encode() + b"# caf\xe9\n")
    out = packproof("scenarios", "validate", "bad.yaml", cwd=tmp_path)
    assert_one_line_error(out, "bad.yaml", "line 11", "not UTF-8")


def test_oversized_file(tmp_path: Path) -> None:
    (tmp_path / "big.yaml").write_text(GOOD + "#" * (5 * 1024 * 1024) + "\n")
    out = packproof("scenarios", "validate", "big.yaml", cwd=tmp_path)
    assert_one_line_error(out, "big.yaml", "file too large")


def test_check_reports_stale_and_missing_mirrors(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(GOOD)
    assert packproof("scenarios", "check", "s.yaml", cwd=tmp_path).returncode == 1
    assert packproof("scenarios", "compile", "s.yaml", cwd=tmp_path).returncode == 0
    first = (tmp_path / "compiled" / "s.jsonl").read_bytes()
    assert packproof("scenarios", "compile", "s.yaml", cwd=tmp_path).returncode == 0
    assert (tmp_path / "compiled" / "s.jsonl").read_bytes() == first  # byte-stable
    assert packproof("scenarios", "check", "s.yaml", cwd=tmp_path).returncode == 0
    (tmp_path / "s.yaml").write_text(GOOD.replace("budget_tokens: 10", "budget_tokens: 11"))
    out = packproof("scenarios", "check", "s.yaml", cwd=tmp_path)
    assert out.returncode == 1
    assert "stale (changed ok-one)" in out.stderr
    (tmp_path / "compiled" / "s.jsonl").write_text("{not json\n")
    out = packproof("scenarios", "check", "s.yaml", cwd=tmp_path)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "new ok-one, removed <unreadable line 1>" in out.stderr
