"""Parity with openclaw-mem's real ``pack`` (``cmd_pack``, commit 7a3a848), proved by
its own outputs.

``../shared/data/openclaw-mem/pack-cases.jsonl.gz`` holds 2,000 random cases that
openclaw-mem's code packed. For every case, the request the importer makes from the
case's ``input`` alone, packed with the ``openclaw-mem`` strategy, must give the same
selected refs in order, the same ``bundle_text`` byte for byte, the same candidates
(ids in trace order, included, reasons, importance, trust, tokens) and the same
policy, trust-policy, quota and tail receipts and counts. The recorded
``diagnostics`` only say where a difference starts; they are never fed back.
"""

from __future__ import annotations

import copy
import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from packproof.cli import main
from packproof.evals.conformance import PEERS
from packproof.evals.conformance.openclaw_mem import PEER, check, diagnose
from tests.evals.conformance.recorded import assert_every_case_matches, recorded_cases
from tests.evals.scenarios.importers.test_openclaw_mem_case import CASE as INPUT
from tests.paths import ROOT

CASES = ROOT / PEER.default_file


def cases() -> list[dict[str, Any]]:
    return recorded_cases(PEER)


def test_every_case_packs_as_openclaw_mems_pack_did() -> None:
    assert_every_case_matches(PEER, 2000)


def test_the_suite_covers_both_profiles_the_tail_quotas_and_the_trust_policy() -> None:
    """The file exercises what the parity claim covers (so a thinner file is noticed)."""
    seen: Counter[str] = Counter()
    for case in cases():
        expected = case["expected"]
        seen[expected["scoring_profile"]] += 1
        seen.update(k for k in ("trust_policy", "quota_hits", "tail") if k in expected)
        seen.update(r for c in expected["candidates"] for r in c["reason"])
        seen["card preferred"] += bool(expected["policy"]["graph_preferred_card_refs"])
    assert seen["composite"] and seen["relevance"] and seen["card preferred"]
    assert seen["trust_policy"] and seen["quota_hits"] and seen["tail"]
    assert {
        "missing_summary",
        "quota_event_capped",
        "trust_quarantined_excluded",
        "tail_budget_tokens_exceeded",
        "max_items_reached",
        "budget_tokens_exceeded",
    } <= set(seen)


# A hand case (the importer's, with every receipt openclaw-mem would record for it):
# relevance profile, quotas off, the trust policy on, two tail lines in a 10-token tail.
CASE: dict[str, Any] = {
    **INPUT,
    "expected": {
        "selected_record_refs": ["obs:7", "tail:1", "tail:2"],
        "bundle_text": "- [obs:7] deploy plan\n- [tail:1] recent turn\n- [tail:2] from stdin",
        "candidates": [
            {
                "id": "obs:7",
                "layer": "L1",
                "importance": "must_remember",
                "trust": "trusted",
                "included": True,
                "reason": ["trust_allowed", "within_item_limit", "within_budget"],
                "tokens": 3,
            },
            *(
                {
                    "id": f"tail:{k}",
                    "layer": "L0",
                    "importance": "unknown",
                    "trust": "unknown",
                    "included": True,
                    "reason": ["protected_tail", "within_item_limit", "within_tail_budget"],
                    "tokens": 3,
                }
                for k in (1, 2)
            ),
        ],
        "policy": {
            "id": "pack-policy-v1.1",
            "selection_order": [
                "graph_synthesis_preference",
                "trust",
                "importance",
                "rrf",
                "match_count",
                "recency",
            ],
            "primary_budget_tokens": 40,
            "primary_used_tokens": 3,
            "primary_item_limit": 1,
            "tail_reserved_tokens": 10,
            "tail_used_tokens": 6,
            "tail_reserved_slots": 2,
            "tail_requested_count": 2,
            "tail_included_count": 2,
            "graph_preferred_card_refs": [],
            "graph_covered_raw_refs": [],
        },
        "trust_policy": {
            "kind": "openclaw-mem.pack.trust-policy.v1",
            "mode": "exclude_quarantined_fail_open",
            "checked_count": 1,
            "included_count": 1,
            "excluded_count": 0,
            "fail_open_count": 0,
            "decision_reason_counts": {"trust_allowed": 1},
            "decisions": [
                {
                    "recordRef": "obs:7",
                    "trust": "trusted",
                    "included": True,
                    "reason": "trust_allowed",
                    "fail_open": False,
                    "error_code": None,
                }
            ],
            "selected_refs": ["obs:7"],
        },
        "tail": {"requestedCount": 2, "includedCount": 2, "budgetTokens": 10, "usedTokens": 6},
        "counts": {"included": 3, "excluded": 0},
        "scoring_profile": "relevance",
    },
    "diagnostics": {
        "rrf_scores": {"5": 1 / 62 + 1 / 61, "7": 1 / 61},
        "tail_texts": ["recent turn", "from stdin"],
        "synthesis": {"preferredCardRefs": [], "coveredRawRefs": [], "coverageMap": {}},
        "policy_candidate_ids": [7],
        "sorted_refs": ["obs:7"],
    },
}


def test_a_hand_case_matches_every_receipt() -> None:
    assert check(CASE) == []


def test_a_changed_recording_is_a_difference_not_an_input() -> None:
    case = copy.deepcopy(CASE)
    expected = case["expected"]
    expected["candidates"][0]["reason"] = ["within_budget"]
    expected["tail"]["usedTokens"] = 5
    expected["bundle_text"] += "\n"
    expected["selected_record_refs"] = ["obs:7"]
    found = {d.what for d in check(case)}
    assert found == {
        "selected_record_refs",
        "bundle_text",
        "candidates: obs:7 reason",
        "tail",
    }
    expected["quota_hits"] = []  # recorded with quotas on: packproof has none here
    assert "quota_hits" in {d.what for d in check(case)}


def test_diagnose_names_the_first_recorded_step_that_differs() -> None:
    assert "every recorded step agrees" in diagnose(CASE)
    case = copy.deepcopy(CASE)
    case["diagnostics"]["tail_texts"] = ["recent turn"]
    assert diagnose(case).startswith("tail lines: ours ['recent turn', 'from stdin']")
    case = copy.deepcopy(CASE)
    case["diagnostics"]["rrf_scores"]["7"] = 0.5
    assert diagnose(case).startswith("rrf of obs:7: ours 0.01639")
    case = copy.deepcopy(CASE)
    case["diagnostics"]["policy_candidate_ids"] = [7, 5]
    assert diagnose(case).startswith("memory candidates")
    assert diagnose({**CASE, "diagnostics": None}) == "no diagnostics recorded"


def _write(path: Path, lines: list[str]) -> Path:
    path.write_bytes(gzip.compress("\n".join(lines).encode("utf-8"), mtime=0))
    return path


def test_the_command_prints_the_count_and_exits_1_on_a_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = copy.deepcopy(CASE)
    wrong["id"] = "hand-2"
    wrong["expected"]["counts"]["excluded"] = 1
    path = _write(tmp_path / "c.jsonl.gz", [json.dumps(CASE), json.dumps(wrong)])
    assert main(["conformance", "openclaw-mem", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("openclaw-mem: 1 of 2 cases match openclaw-mem's cmd_pack")
    assert out[0].endswith("FAILED")
    assert out[1] == "- hand-2 (line 2):"
    assert out[2].startswith("    counts: expected {'included': 3, 'excluded': 1}, found {")
    assert out[3] == (
        "    inputs: every recorded step agrees: the difference is in the fill or the receipts"
    )
    assert main(["conformance", "openclaw-mem", str(_write(path, [json.dumps(CASE)]))]) == 0
    assert "1 of 1 cases match" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("[1, 2]", 'c.jsonl.gz: line 1: a case is a JSON object (expected object, found "list")'),
        (
            json.dumps({"id": "x", "input": INPUT["input"]}),
            "c.jsonl.gz: line 1: /expected: missing",
        ),
        (
            json.dumps({**CASE, "expected": {"bundle_text": ""}}),
            "c.jsonl.gz: line 1: /expected/selected_record_refs: missing",
        ),
        (
            json.dumps({**CASE, "input": {**INPUT["input"], "args": ["pack", "--query", ""]}}),
            "c.jsonl.gz: line 1: /input/args: empty query",
        ),
        (json.dumps({"expected": CASE["expected"]}), "line 1: missing required field 'input'"),
    ],
)
def test_a_bad_case_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, message: str
) -> None:
    path = _write(tmp_path / "c.jsonl.gz", [line])
    assert main(["conformance", "openclaw-mem", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_every_peer_is_registered_once() -> None:
    assert PEERS["openclaw-mem"] is PEER


@pytest.fixture(autouse=True)
def _validate_every_pack() -> None:
    """2,000 packs: their schema validity is tested elsewhere, their selection here."""
