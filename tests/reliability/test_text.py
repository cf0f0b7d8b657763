"""Bad input to ``packproof import locomo``, every class: one line naming the
file and JSON pointer (or the option), exit 2, no traceback, no output file.
A table, one row per class; then what a refused import leaves behind."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.helpers import assert_one_line_exit_2, write

CONVERSATION: list[dict[str, Any]] = [
    {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:00 pm on 8 May, 2023",
            "session_2_date_time": "1:00 pm on 9 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a dog."},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely!"},
                {"speaker": "Ana", "dia_id": "D1:3", "text": "He is called Rex."},
            ],
            "session_2": [{"speaker": "Ana", "dia_id": "D2:1", "text": "Rex is two now."}],
        },
        "qa": [{"question": "What is the dog called?", "answer": "Rex", "evidence": ["D1:3"]}],
    }
]


def importing(
    edit: Callable[[dict[str, Any]], object], *flags: str, sample: bool = False
) -> Callable[[Path], list[str]]:
    """The arguments that import CONVERSATION, its conversation (with ``sample``,
    the whole sample: its ``qa`` too) edited by ``edit``."""

    def build(tmp: Path) -> list[str]:
        data = copy.deepcopy(CONVERSATION)
        edit(data[0] if sample else data[0]["conversation"])
        source = write(tmp / "locomo.json", json.dumps(data))
        return ["import", "locomo", str(source), "-o", str(tmp / "out.jsonl"), *flags]

    return build


def _unchanged(conversation: dict[str, Any]) -> None:
    """No edit: the conversation as it is."""


ROWS = [
    pytest.param(
        importing(lambda c: c["session_2"][0].update(dia_id="D1:1"), "--replay"),
        "locomo.json: /0/conversation/session_2/0/dia_id: dia_id 'D1:1' is already the id",
        id="a-dia-id-two-turns-share",
    ),
    pytest.param(
        importing(lambda c: c["session_1"][1].update(dia_id=None), "--replay"),
        "locomo.json: /0/conversation/session_1/1/dia_id: a dialogue turn needs its dia_id",
        id="a-null-dia-id",
    ),
    pytest.param(
        importing(lambda c: c.update(session_2={"0": c["session_2"][0]}), "--replay"),
        "locomo.json: /0/conversation/session_2: a session is a list of dialogue turns",
        id="a-session-written-as-an-object",
    ),
    pytest.param(
        importing(lambda c: c["session_1"].append(["D1:4", "hi"])),
        "locomo.json: /0/conversation/session_1/3: not a dialogue turn",
        id="a-turn-that-is-not-an-object",
    ),
    pytest.param(
        importing(_unchanged, "--replay", "--gap", "86400"),
        "locomo.json: --gap: 86400 s between two turns of a session puts the last of the 3 "
        "turns of conv-x's session 1 after session 2",
        id="a-gap-past-the-next-session",
    ),
    pytest.param(
        importing(_unchanged, "--gap", "60"),
        "usage: --gap: only a replay times its turns",
        id="a-gap-without-replay",
    ),
    pytest.param(
        importing(lambda c: [c.pop(k) for k in list(c) if k.startswith("session_")], "--replay"),
        "locomo.json: /0/conversation: a conversation without dialogue turns",
        id="a-conversation-without-sessions",
    ),
    pytest.param(
        importing(lambda c: c.update(session_1=[], session_2=[])),
        "locomo.json: /0/conversation: a conversation without dialogue turns",
        id="a-conversation-whose-sessions-are-empty",
    ),
    pytest.param(
        importing(lambda c: c["session_1"][1].update(text=None), "--replay"),
        "locomo.json: /0/conversation/session_1/1/text: wrong type (expected a string, found null)",
        id="a-turn-whose-text-is-null",
    ),
    pytest.param(
        importing(lambda s: s["qa"][0].update(answer=["Rex", "Rexy"]), sample=True),
        "locomo.json: /0/qa/0/answer: not a gold answer (expected a string or a number, found "
        "an array of 2)",
        id="an-answer-that-is-a-list",
    ),
    pytest.param(
        importing(lambda s: s["qa"][0].update(answer=True), sample=True),
        "locomo.json: /0/qa/0/answer: not a gold answer",
        id="an-answer-that-is-a-boolean",
    ),
    pytest.param(
        importing(lambda s: s["qa"][0].update(question=["What?"]), sample=True),
        "locomo.json: /0/qa/0/question: wrong type (expected a string, found an array of 1)",
        id="a-question-that-is-not-text",
    ),
]


@pytest.mark.parametrize(("builder", "says"), ROWS)
def test_bad_locomo_input_is_one_line_and_exit_2(
    builder: Callable[[Path], list[str]],
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert_one_line_exit_2(builder, says, tmp_path, monkeypatch, capsys)
    assert not (tmp_path / "out.jsonl").exists()  # nothing half-written


def test_a_refused_import_keeps_the_output_file_that_was_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = write(tmp_path / "out.jsonl", '{"earlier": "import"}\n')
    build = importing(lambda c: c["session_2"][0].update(dia_id="D1:1"), "--replay")
    assert_one_line_exit_2(build, "dia_id 'D1:1'", tmp_path, monkeypatch, capsys)
    assert kept.read_text("utf-8") == '{"earlier": "import"}\n'


def test_the_largest_gap_the_message_names_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from packproof.cli import main

    monkeypatch.chdir(tmp_path)
    argv = importing(_unchanged, "--replay", "--gap", "86400")(tmp_path)
    assert main(argv) == 2
    bound = capsys.readouterr().err.rsplit("expected --gap <= ", 1)[1].split(" ", 1)[0]
    assert bound == "43200"
    assert main([*argv[:-1], bound]) == 0
    steps = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    times = [t["t"] for t in steps[0]["turns"] if not t.get("probe")]
    assert times == sorted(times) == [0, 43_200, 86_400, 86_400]
