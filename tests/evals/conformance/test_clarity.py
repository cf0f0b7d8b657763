"""Parity with the Clarity plugin's v1 scorer and pruner (kbarbel640-del/openclaw,
commit 88bb3988, ``extensions/clarity/``), proved by its own outputs.

``../shared/data/clarity/scorer-cases.jsonl.gz`` holds 2,000 random cases the
plugin's code scored and pruned. Each case's native ``input`` alone, run through the
functions the ``clarity`` strategy is made of, must give every item's final and raw
score, components and tier multiplier (the data README's tolerance), its rounded
breakdown, adjusted score, category, decision, reason and walk position, and the
pruner's order, keep and prune lists.
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
from packproof.evals.conformance.clarity import PEER, check, within
from tests.evals.conformance.recorded import assert_every_case_matches, recorded_cases
from tests.paths import ROOT


def test_every_shared_v1_case_matches_the_plugin() -> None:
    assert_every_case_matches(PEER, 2000)


def test_the_threshold_case_that_needs_v8s_pow_is_kept_as_v8_keeps_it() -> None:
    # the data README: adjusted 8.000000000000004 in V8 against pruneThreshold 8; a
    # correctly rounded pow gives 7.999999999999998 and the item falls to under_target
    (case,) = (c for c in recorded_cases(PEER) if c["id"] == "clarity-v1-real-1101-00730")
    assert check(case) == []
    assert case["expected"]["items"]["tool:memory_search127"]["reason"] == "score_threshold"


def test_the_suite_covers_every_reason_zeros_and_both_option_paths() -> None:
    reasons = set()
    paths = set()
    for case in recorded_cases(PEER):
        paths.add(case["input"]["pruner_options"])
        reasons.update(it["reason"] for it in case["expected"]["items"].values())
    assert paths == {"config", "top-level"}
    assert {
        "anchored",
        "strict_score",
        "min_mentions",
        "strict_essential",
        "category_full",
        "score_threshold",
        "under_target",
        "below_threshold_target_reached",
        "hard_cap(anchored)",
    } <= reasons


# By hand, defaults but for an explicit 0 frequencyScale (read as 10) at turn 10:
# a: 3 mentions at turn 10 -> frequency 20, recency 20, 1 reference 15: 55;
# b: 1 mention at turn 2 -> t = 8, turnsStale 5: frequency 10 halves: 5.
CASE: dict[str, Any] = {
    "id": "hand-1",
    "input": {
        "state": {
            "currentTurn": 10,
            "items": [
                {"id": "b", "mentionCount": 1, "lastMentionTurn": 2},
                {"id": "a", "mentionCount": 3, "referenceCount": 1, "lastMentionTurn": 10},
            ],
        },
        "scoring": {"frequencyScale": 0},
        "pruning": {"targetContextItems": 0},
        "pruner_options": "config",
        "existingContext": [{"id": "b", "tier": "critical"}, {"id": "x", "tier": "high"}],
    },
    "expected": {
        "items": {
            "a": {
                "final_score": 55.0,
                "raw_score": 55.0,
                "components": {
                    "frequency": 20.0,
                    "recency": 20.0,
                    "utility": 15.0,
                    "staleness": 0.0,
                    "anchor": 0.0,
                },
                "breakdown": {
                    "frequency": 20.0,
                    "recency": 20.0,
                    "utility": 15.0,
                    "stalenessPenalty": 0.0,
                    "anchor": 0.0,
                },
                "tier_multiplier": 1.0,
                "adjusted_score": 55.0,
                "category": "other",
                "decision": "keep",
                "reason": "min_mentions",
                "position": 0,
            },
            "b": {
                "final_score": 5.000000000000001,
                "raw_score": 5.000000000000001,
                "components": {
                    "frequency": 10.0,
                    "recency": 0.0,
                    "utility": 0.0,
                    "staleness": 5.0,
                    "anchor": 0.0,
                },
                "breakdown": {
                    "frequency": 10.0,
                    "recency": 0.0,
                    "utility": 0.0,
                    "stalenessPenalty": 5.0,
                    "anchor": 0.0,
                },
                "tier_multiplier": 1.0,  # "critical" is no tier name: 1.0
                "adjusted_score": 5.0,
                "category": "other",
                "decision": "prune",
                "reason": "below_threshold_target_reached",
                "position": 2,
            },
            "x": {  # untracked context id: a fixed 10, times high's 1.5
                "tier_multiplier": 1.5,
                "adjusted_score": 15.0,
                "category": "other",
                "decision": "keep",
                "reason": "score_threshold",
                "position": 1,
            },
        },
        "pruner": {"order": ["a", "x", "b"], "keep": ["a", "x"], "prune": ["b"]},
    },
}


def test_the_tolerance_is_1e9_absolute_or_1e12_relative() -> None:
    assert within(1.0 + 9e-10, 1.0) and not within(1.0 + 2e-9, 1.0)
    assert within(1.2e11 + 9e-7, 1.2e11) and not within(1.2e11 + 1.0, 1.2e11)


def test_a_hand_case_matches() -> None:
    assert check(CASE) == []


def test_a_changed_recording_is_a_difference() -> None:
    case = copy.deepcopy(CASE)
    case["expected"]["items"]["b"]["reason"] = "under_target"
    case["expected"]["pruner"]["keep"] = ["a", "x", "b"]
    found = {(d.what, str(d.found)) for d in check(case)}
    assert found == {
        ("b reason", "below_threshold_target_reached"),
        ("pruner keep", "['a', 'x']"),
    }


def _write(path: Path, lines: list[str]) -> Path:
    path.write_bytes(gzip.compress("\n".join(lines).encode("utf-8"), mtime=0))
    return path


def test_the_command_prints_the_count_and_exits_1_on_a_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = copy.deepcopy(CASE)
    wrong["id"] = "hand-2"
    wrong["expected"]["items"]["a"]["final_score"] = 54.0
    path = _write(tmp_path / "c.jsonl.gz", [json.dumps(CASE), json.dumps(wrong)])
    assert main(["conformance", "clarity", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("clarity: 1 of 2 cases match") and out[0].endswith("FAILED")
    assert out[1] == "- hand-2 (line 2):"
    assert out[2] == "    a final_score: expected 54.0, found 55.0"
    assert out[3].startswith("    inputs: scoring {'frequencyScale': 0}")
    assert main(["conformance", "clarity", str(_write(path, [json.dumps(CASE)]))]) == 0


def test_the_peer_is_registered_with_the_shared_files() -> None:
    assert PEERS["clarity"] is PEER
    assert PEER.default_file == Path("../shared/data/clarity/scorer-cases.jsonl.gz")
    assert Path("../shared/data/clarity/v2-cases.jsonl.gz") in PEER.also_files
    assert (ROOT / PEER.default_file).name == "scorer-cases.jsonl.gz"


def test_a_case_without_state_is_bad_input(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.jsonl.gz", [json.dumps({"id": "x", "input": {}})])
    assert main(["conformance", "clarity", str(path)]) == 2
