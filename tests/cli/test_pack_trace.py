"""``packproof pack --trace full|decisions|none``: full is today's bytes, none has no
trace, decisions keeps each candidate's decision and validates against the schema."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from packproof.cli import main
from packproof.packer import pack
from packproof.packer.render import TRACE_LEVELS, render
from packproof.packer.schema import validate

REQUEST = {
    "items": [
        {"id": "m1", "role": "user", "text": "Users get logged out after five minutes."},
        {"id": "m2", "role": "assistant", "text": "JWT_EXPIRY_SECONDS is 300 in auth/config.py."},
        {"id": "m3", "role": "user", "text": "Fix the card CSS first.", "trust": "quarantined"},
        {"id": "m4", "role": "assistant", "text": "Changed height to min-height on .card."},
        {"id": "m5", "role": "user", "text": "Where was the expiry setting again?"},
    ],
    "prompt": "Where was the expiry setting again?",
    "budget_tokens": 30,
    "fresh_tail": {"count": 1},
    "trust_policy": "exclude_quarantined",
}
SPECS = ["chronological", "bm25", "hybrid", "bm25+cache(recall_share=0.3)"]
DECISION_FIELDS = {"id", "tokens", "score", "rank", "decision"}


def run_pack(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["pack", *args]) == 0
    return capsys.readouterr().out


@pytest.fixture
def request_file(tmp_path: Path) -> Path:
    path = tmp_path / "req.json"
    path.write_text(json.dumps(REQUEST), "utf-8")
    return path


@pytest.mark.parametrize("spec", SPECS)
def test_full_is_the_default_and_todays_bytes(
    spec: str, request_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    default = run_pack(capsys, str(request_file), "--strategy", spec)
    full = run_pack(capsys, str(request_file), "--strategy", spec, "--trace", "full")
    assert full == default
    if "+" not in spec:  # the library's own JSON (tests/packer/test_fast_json.py: the reference's)
        assert default == pack({**REQUEST, "strategy": spec}).to_json() + "\n"
    assert "level" not in json.loads(default)["trace"]


@pytest.mark.parametrize("spec", SPECS)
def test_none_is_the_pack_without_its_trace(
    spec: str, request_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = json.loads(run_pack(capsys, str(request_file), "--strategy", spec))
    none = json.loads(run_pack(capsys, str(request_file), "--strategy", spec, "--trace", "none"))
    assert "trace" not in none
    del full["trace"]
    assert none == full
    assert validate("pack", none) == []


@pytest.mark.parametrize("spec", SPECS)
def test_decisions_keep_each_candidates_decision_and_validate(
    spec: str, request_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = json.loads(run_pack(capsys, str(request_file), "--strategy", spec))
    light = json.loads(
        run_pack(capsys, str(request_file), "--strategy", spec, "--trace", "decisions")
    )
    assert validate("pack", light) == []
    assert light["trace"]["level"] == "decisions"
    cache_fields = {"placement", "position"} if "cache_aware" in full["trace"] else set()
    for lean, whole in zip(light["trace"]["candidates"], full["trace"]["candidates"], strict=True):
        assert set(lean) == DECISION_FIELDS | cache_fields
        assert lean == {k: whole[k] for k in lean}
    # everything but the candidates is the full trace's, and the pack is the same
    rest = {k: v for k, v in light["trace"].items() if k not in ("candidates", "level")}
    assert rest == {k: v for k, v in full["trace"].items() if k != "candidates"}
    assert {k: v for k, v in light.items() if k != "trace"} == {
        k: v for k, v in full.items() if k != "trace"
    }


def test_the_schema_tells_the_levels_apart() -> None:
    result = pack({**REQUEST, "strategy": "hybrid"})
    full, light = render(result, "full"), render(result, "decisions")
    assert validate("pack", full) == [] and validate("pack", light) == []
    heavy = copy.deepcopy(light)  # a decisions candidate with a full-only field
    heavy["trace"]["candidates"][0]["components"] = {}
    assert validate("pack", heavy) != []
    lacking = copy.deepcopy(full)  # a full candidate lacking a field
    del lacking["trace"]["candidates"][0]["citations"]
    assert validate("pack", lacking) != []
    mislabelled: dict[str, Any] = copy.deepcopy(full)  # full candidates under "decisions"
    mislabelled["trace"]["level"] = "decisions"
    assert validate("pack", mislabelled) != []
    other = copy.deepcopy(light)
    other["trace"]["level"] = "full"  # full is written by leaving the field out
    assert validate("pack", other) != []


def test_library_levels_and_an_unknown_one() -> None:
    result = pack({**REQUEST, "strategy": "bm25"})
    assert set(TRACE_LEVELS) == {"full", "decisions", "none"}
    assert "trace" not in result.to_dict(trace="none")
    assert result.to_json(trace="decisions") == json.dumps(
        result.to_dict(trace="decisions"), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    with pytest.raises(ValueError, match="unknown trace level"):
        render(result, "all")  # type: ignore[arg-type]


def test_a_bad_level_is_one_line_exit_2(
    request_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["pack", str(request_file), "--trace", "everything"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--trace" in err and "invalid choice" in err
