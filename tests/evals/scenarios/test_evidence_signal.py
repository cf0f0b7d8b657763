"""The label-free evidence signal (evals/scenarios/evidence_signal.py;
docs/evidence-signal.md): hand cases for its tokens, rarity and first-seen rule,
its determinism and speed, how the bench reads a Claude Code transcript, and on
LoCoMo (when ../shared/data/locomo has it) that it beats a random pick."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from packproof.evals.bench.evidence_signal import LOCOMO, locomo_figures, session_steps
from packproof.evals.scenarios.evidence_signal import (
    EvidenceIndex,
    Match,
    SignalRule,
    evidence,
    salient_tokens,
)

CHAT = [
    ("m1", "Let me look at the config first."),
    ("m2", "Found it in /srv/app/config/settings.yaml, see the timeout there."),
    ("m3", "The config is fine, the timeout too."),
]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("open /srv/app/main.py now", {"/srv/app/main.py", "main.py"}),
        ("lib/spotter/a.ex", {"lib/spotter/a.ex", "a.ex"}),
        ("and/or input/output", set()),
        ("call handle_event or handleEvent", {"handle_event", "handleEvent"}),
        ("commit 8cc42b0 with sha256", {"8cc42b0", "sha256"}),
        ("git push --set-upstream origin", {"--set-upstream"}),
        ("id 258c7280-ae70-4798", {"258c7280-ae70-4798"}),
        ("a well-known long-term plan", set()),
        ("version 2.1.39 took 17800 tokens", {"2.1.39", "17800"}),
        ("1 2 42 2024 1999 300 120000 1024 4096", set()),
        ("Spotter.Transcripts and Plain Words Here", {"Spotter.Transcripts"}),
        ("     12→def foo(x):\n    123→  pass", set()),  # a file listing's gutter
    ],
    ids=[
        "absolute-path",
        "relative-path",
        "slashed-words",
        "identifiers",
        "hash-and-alnum",
        "flag",
        "uuid-like",
        "hyphenated-words",
        "version-and-number",
        "trivial-numbers",
        "dotted-module",
        "read-gutter",
    ],
)
def test_salient_tokens_are_paths_identifiers_and_numbers(text: str, tokens: set[str]) -> None:
    assert salient_tokens(text) == tokens


def test_a_rare_path_reused_points_at_the_item_that_held_it() -> None:
    response = "Editing /srv/app/config/settings.yaml to raise the timeout."
    assert evidence(CHAT, response) == ["m2"]


def test_a_common_word_is_no_evidence() -> None:
    assert evidence(CHAT, "The config and the timeout are fine.") == []


@pytest.mark.parametrize("number", ["1", "2", "42", "2024", "300", "1024"])
def test_a_trivial_number_is_no_evidence(number: str) -> None:
    earlier = [("a", f"we have {number} of them"), ("b", "nothing here")]
    assert evidence(earlier, f"so {number} it is") == []


def test_a_specific_number_is_evidence() -> None:
    earlier = [("a", "the bill says 17843 tokens"), ("b", "nothing here")]
    assert evidence(earlier, "17843 tokens were read") == ["a"]


def test_the_first_item_that_held_a_token_is_the_evidence() -> None:
    earlier = [
        ("a", "nothing"),
        ("b", "read tools/export_rows.py"),
        ("c", "then export_rows.py again"),
    ]
    assert evidence(earlier, "fix export_rows.py") == ["b"]


def test_a_token_in_more_items_than_max_df_is_common() -> None:
    earlier = [(f"m{k}", "run make_report here") for k in range(4)]
    assert evidence(earlier, "make_report", SignalRule(max_df=3)) == []
    assert evidence(earlier, "make_report", SignalRule(max_df=4)) == ["m0"]


def test_a_token_seen_nowhere_before_is_no_evidence() -> None:
    assert evidence(CHAT, "created /srv/app/new_module.py") == []


def test_evidence_comes_in_item_order_with_the_tokens_that_point_at_it() -> None:
    index = EvidenceIndex()
    index.extend([("x", "see beta_two.py"), ("y", "and alpha_one.py, alpha_one")])
    assert index.matches("alpha_one.py then beta_two.py") == [
        Match("x", 0, ("beta_two", "beta_two.py")),
        Match("y", 1, ("alpha_one", "alpha_one.py")),
    ]


def test_plain_words_count_only_with_words() -> None:
    earlier = [("a", "we adopted a greyhound"), ("b", "nice")]
    assert evidence(earlier, "greyhound") == []
    assert evidence(earlier, "greyhound", SignalRule(words=True)) == ["a"]


def test_the_index_step_by_step_agrees_with_the_one_shot_form() -> None:
    items = [(f"m{k}", f"step {k} touches file_{k % 5}.py and id{k * 7919}") for k in range(40)]
    index = EvidenceIndex()
    for k, (ident, text) in enumerate(items):
        response = f"now file_{(k + 2) % 5}.py and id{(k - 3) * 7919}"
        assert index.evidence(response) == evidence(items[:k], response), k
        index.add(ident, text)


def test_an_item_id_is_added_once() -> None:
    index = EvidenceIndex()
    index.add("a", "x")
    with pytest.raises(ValueError, match="'a' was already added"):
        index.add("a", "y")


def test_a_rule_refuses_a_parameter_below_one() -> None:
    with pytest.raises(ValueError, match=r"SignalRule.max_df: expected an integer >= 1"):
        SignalRule(max_df=0)


_RUN = """
from packproof.evals.scenarios.evidence_signal import EvidenceIndex
index = EvidenceIndex()
for k in range(300):
    index.add(f"m{k}", f"tok_{k % 97} path/to/f{k % 89}.py n{k * 31} mod.Name{k % 53}")
print([index.matches(f"tok_{j} path/to/f{j}.py mod.Name{j}") for j in range(60)])
"""


def test_the_evidence_does_not_depend_on_the_hash_seed() -> None:
    outputs = {
        subprocess.run(
            [sys.executable, "-c", _RUN],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1


def test_thousands_of_messages_are_read_incrementally() -> None:
    # a long conversation, one step at a time (its speed is the bench's figure:
    # python -m packproof.evals.bench.evidence_signal): each step's response names
    # the handler the step before defined, rare, while the file paths repeat
    # every 400 messages and stop being rare
    index = EvidenceIndex()
    found = []
    for k in range(5000):
        text = f"Read lib/app/mod_{k % 400}.ex: def handle_{k}(x), do: x + {k * 13 + 1000} " * 20
        found.append(index.evidence(f"Edit lib/app/mod_{k % 400}.ex handle_{k - 1}"))
        index.add(f"m{k}", text)
    assert found[0] == [] and found[4999] == ["m4998"]
    assert all(f"m{k - 1}" in ids for k, ids in enumerate(found) if k)


def test_a_transcript_step_is_one_call_and_a_tool_call_is_read_with_its_result(
    tmp_path: Path,
) -> None:
    def record(kind: str, uuid: str, content: object, request: str | None = None) -> str:
        line = {"type": kind, "uuid": uuid, "message": {"content": content}}
        return json.dumps(line | ({"requestId": request} if request else {}))

    read = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/p/q/a.ex"}}
    lines = [
        record("user", "u1", "fix the bug in a.ex"),
        record("assistant", "a1", [read], "r1"),
        record(
            "user", "u2", [{"type": "tool_result", "tool_use_id": "t1", "content": "row_id = 1"}]
        ),
        record("assistant", "a2", [{"type": "thinking", "thinking": "the_hidden one"}], "r2"),
        record("assistant", "a3", [{"type": "text", "text": "row_id in /p/q/a.ex"}], "r2"),
        json.dumps({"type": "progress"}),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    steps, items = session_steps(path)
    assert [(s.line, s.earlier) for s in steps] == [("s.jsonl:2", 1), ("s.jsonl:4", 3)]
    assert steps[1].response == "row_id in /p/q/a.ex"  # its text, not its thinking
    assert items["s.jsonl:2"] == ""  # the Read's input is read with its result
    assert [(m.item_id, m.tokens) for m in steps[1].matches] == [
        ("s.jsonl:1", ("a.ex",)),
        ("s.jsonl:3", ("/p/q/a.ex", "row_id")),
    ]


@pytest.mark.skipif(not LOCOMO.exists(), reason="../shared/data/locomo is absent")
@pytest.mark.parametrize("rule", [SignalRule(), SignalRule(words=True)], ids=["default", "words"])
def test_on_locomo_the_signal_finds_labelled_evidence_better_than_chance(rule: SignalRule) -> None:
    overall, by_category = locomo_figures(LOCOMO, rule, seed=29)
    assert overall.questions > 500
    assert sum(f.questions for f in by_category.values()) == overall.questions
    assert 0 <= overall.empty <= overall.questions
    assert 0.0 <= overall.precision <= 1.0 and 0.0 < overall.recall <= 1.0
    # the same number of items per question, drawn at random with the same seed
    assert overall.hits > overall.random_hits
    assert overall.mean_recall > overall.random_mean_recall
