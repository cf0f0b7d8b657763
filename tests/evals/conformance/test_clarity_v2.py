"""Clarity v2 as the plugin runs it, proved by its own outputs.

``../shared/data/clarity/v2-cases.jsonl.gz`` holds 500 random conversations run
through the plugin's ``V2ContextTracker`` (kbarbel640-del/openclaw 88bb3988) turn by
turn. Replayed by :mod:`packproof.packer.clarity2`, every one must give the same
mentions, injections (ids, scores, shown scores) and references at every turn, and
the same entities, scores, parts, counts, legacy scores and final injection, and the
plugin's pruner on those scores the same keep and prune lists, categories and stats.
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from packproof.evals.conformance.cases import read_cases
from packproof.evals.conformance.clarity_v2 import check, diagnose, is_v2
from packproof.packer.errors import InputError
from tests.paths import ROOT

V2_CASES = ROOT / ".." / "shared" / "data" / "clarity" / "v2-cases.jsonl.gz"


@cache
def _read(path: Path) -> list[dict[str, Any]]:
    return [case for _, case in read_cases(path)]


def v2_cases() -> list[dict[str, Any]]:
    if not V2_CASES.exists():
        pytest.skip(
            f"{V2_CASES} is absent: the Clarity v2 conformance suite is read from "
            "../shared beside the project root (CI has it)"
        )
    return _read(V2_CASES)


def test_every_shared_v2_conversation_replays_as_the_plugin_ran_it() -> None:
    cases = v2_cases()
    differing = [(case["id"], check(case)) for case in cases]
    differing = [(ref, found) for ref, found in differing if found]
    shown = [f"{ref}: {found[:3]}" for ref, found in differing[:5]]
    assert differing == [], f"{len(differing)} of {len(cases)} differ:\n" + "\n".join(shown)
    assert len(cases) == 500


def test_every_shared_v2_case_is_recognised_by_its_shape() -> None:
    cases = v2_cases()
    assert all(is_v2(case) for case in cases)
    shaped = [{k: v for k, v in case.items() if k != "kind"} for case in cases[:20]]
    assert all(is_v2(case) for case in shaped)


def test_a_v1_case_is_not_v2() -> None:
    assert not is_v2({"kind": "v1", "input": {"state": {}}, "request": {}})


def test_a_changed_injection_is_reported_and_diagnosed_with_its_turn() -> None:
    case = copy.deepcopy(v2_cases()[0])
    turn = next(t for t in case["expected"]["turns"] if t["injected"])
    turn["injected"][0]["score"] += 1e-6
    found = check(case)
    assert [d.what for d in found] == [f"clarity2: turn {turn['turn']} injected"]
    assert diagnose(case).startswith(f"turn {turn['turn']}: user ")


def test_a_changed_pruner_verdict_is_reported() -> None:
    case = copy.deepcopy(v2_cases()[0])
    case["expected"]["pruner"]["keep"].reverse()
    case["expected"]["pruner"]["keep"].append("tool:none")
    assert [d.what for d in check(case)] == ["clarity2: pruner keep"]


def test_a_matching_case_diagnoses_as_matching() -> None:
    assert diagnose(v2_cases()[0]) == "matches"


def test_a_case_without_turns_is_bad_input() -> None:
    with pytest.raises(InputError, match=r"expected\.turns"):
        check({"kind": "v2", "input": {"turns": []}, "expected": {}})
    with pytest.raises(InputError, match=r"input\.turns"):
        check({"kind": "v2", "input": {}, "expected": {"turns": []}})
