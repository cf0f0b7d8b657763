"""Parity with lossless-claw's real ``ContextAssembler``, proved by its own outputs.

``../shared/data/lossless-claw/assembler-cases.jsonl.gz`` holds 2,000 random cases
that lossless-claw's assembler (commit 4214b48, run unmodified) packed with
prompt-aware eviction off and on. For every case, ``chronological`` and
``bm25lite`` must select the same ids, in pack order, in the same mode. The
adapter packs the requests as they are: the per-item token counts and scored
texts the assembler recorded are for diagnosing a mismatch and are never fed back.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from packproof.cli import main
from packproof.evals.conformance import PEERS
from packproof.evals.conformance.lossless_claw import PEER, check
from tests.evals.conformance.recorded import assert_every_case_matches, recorded_cases
from tests.paths import ROOT

CASES = ROOT / PEER.default_file


def cases() -> list[dict[str, Any]]:
    return recorded_cases(PEER)


def test_every_case_selects_what_lossless_claws_assembler_selected() -> None:
    assert_every_case_matches(PEER, 2000)


def test_the_suite_covers_every_mode_and_role() -> None:
    """The file exercises what the parity claim covers (so a thinner file is noticed)."""
    modes = {(s, c["expected"][s]["mode"]) for c in cases() for s in c["expected"]}
    assert modes >= {
        ("chronological", "full-fit"),
        ("chronological", "chronological"),
        ("bm25lite", "prompt-aware"),
        ("bm25lite", "chronological"),
    }
    kinds = {(it.get("kind"), it.get("role")) for c in cases() for it in c["request"]["items"]}
    assert {("message", r) for r in ("user", "assistant", "tool", "system")} <= kinds
    assert any(k == "summary" for k, _ in kinds)


# Hand cases: the adapter finds a difference, and never takes the recording as input.
CASE = {
    "id": "hand-1",
    "request": {
        "items": [
            {"id": "m1", "role": "user", "text": "the expiry is set in auth config"},
            {"id": "m2", "role": "assistant", "text": "fixed the card css"},
            {"id": "m3", "role": "user", "text": "where was the expiry setting"},
        ],
        "prompt": "where was the expiry setting",
        "budget_tokens": 1000,
        "token_counter": "lcm",
    },
    "expected": {
        "chronological": {"selected": ["m1", "m2", "m3"], "mode": "full-fit"},
        "bm25lite": {"selected": ["m1", "m2", "m3"], "mode": "full-fit"},
    },
}


def test_a_hand_case_that_fits_matches_in_both_modes() -> None:
    assert check(CASE) == []


def test_a_changed_recording_is_a_difference_not_an_input() -> None:
    case = copy.deepcopy(CASE)
    case["expected"]["bm25lite"] = {"selected": ["m3"], "mode": "prompt-aware"}
    found = {
        (d.what, tuple(d.found) if isinstance(d.found, list) else d.found) for d in check(case)
    }
    assert found == {
        ("bm25lite: selected", ("m1", "m2", "m3")),
        ("bm25lite: mode", "full-fit"),
    }


def _write(path: Path, lines: list[str]) -> Path:
    path.write_bytes(gzip.compress("\n".join(lines).encode("utf-8"), mtime=0))
    return path


def test_the_command_prints_the_count_and_exits_1_on_a_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = copy.deepcopy(CASE)
    wrong["id"] = "hand-2"
    wrong["expected"]["chronological"]["mode"] = "chronological"
    path = _write(tmp_path / "c.jsonl.gz", [json.dumps(CASE), json.dumps(wrong)])
    assert main(["conformance", "lossless-claw", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("lossless-claw: 1 of 2 cases match") and out[0].endswith("FAILED")
    assert out[1] == "- hand-2 (line 2):"
    assert out[2] == "    chronological: mode: expected 'chronological', found 'full-fit'"
    assert out[3] == "    inputs: token counts that differ: none"
    assert main(["conformance", "lossless-claw", str(_write(path, [json.dumps(CASE)]))]) == 0


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("[1, 2]", 'c.jsonl.gz: line 1: a case is a JSON object (expected object, found "list")'),
        ('{"id": "x"', "c.jsonl.gz: line 1: invalid JSON"),
        ('{"id": "x", "request": {"items": []}}', "c.jsonl.gz: line 1: /expected: missing"),
        (
            json.dumps({**CASE, "expected": {"newest": {"selected": [], "mode": "full-fit"}}}),
            "c.jsonl.gz: line 1: /expected/newest: not a strategy lossless-claw has",
        ),
        (
            json.dumps({**CASE, "request": {**CASE["request"], "budget_tokens": -1}}),
            "c.jsonl.gz: line 1: /request/budget_tokens",
        ),
    ],
)
def test_a_bad_case_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, message: str
) -> None:
    path = _write(tmp_path / "c.jsonl.gz", [line])
    assert main(["conformance", "lossless-claw", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_an_empty_or_corrupt_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["conformance", "lossless-claw", str(_write(tmp_path / "e.gz", []))]) == 2
    assert "holds no case" in capsys.readouterr().err
    (tmp_path / "bad.gz").write_bytes(b"not gzip")
    assert main(["conformance", "lossless-claw", str(tmp_path / "bad.gz")]) == 2
    assert "cannot read file" in capsys.readouterr().err


def test_every_peer_is_registered_once() -> None:
    assert PEERS["lossless-claw"] is PEER


@pytest.fixture(autouse=True)
def _validate_every_pack() -> None:
    """4,000 packs: their schema validity is tested elsewhere, their selection here."""
