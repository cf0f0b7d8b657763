"""The LoCoMo importer: a synthetic file in LoCoMo's format (always), and the
real development split when ../shared/data/locomo/ has it (skipped otherwise)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from packproof.evals.run.evaluate import evaluate
from packproof.evals.scenarios.format import load_compiled
from packproof.evals.scenarios.importers.locomo import CATEGORIES, import_locomo
from packproof.packer import InputError
from tests.paths import ROOT

LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev.json"

SAMPLE: list[dict[str, Any]] = [
    {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_2_date_time": "2:00 pm on 9 May, 2023",
            "session_1_date_time": "1:00 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a dog."},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely!", "blip_caption": "a puppy"},
            ],
            "session_2": [{"speaker": "Ana", "dia_id": "D2:1", "text": "The dog is called Rex."}],
        },
        "session_summary": {"session_1_summary": "Ana adopted a dog."},
        "qa": [
            {
                "question": "What is the dog called?",
                "answer": "Rex",
                "evidence": ["D2:1"],
                "category": 4,
            },
            {
                "question": "When was the dog adopted?",
                "evidence": ["D1:1; D2:1", "D9:9"],
                "category": 2,
            },
            {"question": "Unanswerable?", "adversarial_answer": "x", "evidence": [], "category": 5},
        ],
    }
]


def write(tmp: Path, data: object) -> Path:
    path = tmp / "locomo.json"
    path.write_text(json.dumps(data))
    return path


def test_items_turns_and_evidence(tmp_path: Path) -> None:
    (sc,), report = import_locomo(
        write(tmp_path, SAMPLE), budget=512, fresh_tail=1, with_summaries=True
    )
    assert sc.id == "locomo-conv-x" and sc.tags == ("locomo", "conv-x")
    items = sc.turns[0].request["items"]
    assert [(it["id"], it["role"], it["turn"], it["kind"]) for it in items] == [
        ("D1:1", "user", 1, "message"),
        ("D1:2", "assistant", 1, "message"),
        ("S1:summary", "system", 1, "summary"),
        ("D2:1", "user", 2, "message"),
    ]
    assert items[1]["text"] == "Lovely! [shared a photo: a puppy]"
    assert [t.request["prompt"] for t in sc.turns] == [
        "What is the dog called?",
        "When was the dog adopted?",
        "Unanswerable?",
    ]
    assert [t.relevant for t in sc.turns] == [("D2:1",), ("D1:1", "D2:1"), ()]
    assert [t.tags for t in sc.turns] == [
        ("category:single-hop",),
        ("category:temporal",),
        ("category:adversarial",),
    ]
    # the gold answer; none for a question without one, nor for an adversarial
    # question's adversarial_answer (the wrong answer it baits)
    assert [t.answers for t in sc.turns] == [("Rex",), (), ()]
    assert sc.turns[0].request["ts"] == "2:00 pm on 9 May, 2023"  # the last session's date
    assert sc.turns[0].request["budget_tokens"] == 512
    assert report == {
        "file": "locomo.json",
        "conversations": 1,
        "dangling": 1,
        "items": 4,
        "malformed": 1,
        "questions": 3,
        "recovered": 2,
        "without_evidence": 1,
    }


def test_answers_are_text_and_categories_are_named(tmp_path: Path) -> None:
    sample = copy.deepcopy(SAMPLE)
    sample[0]["qa"][1].update(answer=2022, category=9)  # a number; no such category
    sample[0]["qa"][2]["answer"] = "No"  # two adversarial questions carry one too
    sample[0]["qa"].append({"question": "Q?", "answer": "", "evidence": [], "category": 1})
    sample[0]["qa"].append({"question": "Q?", "answer": None, "category": "3"})
    (sc,), _ = import_locomo(write(tmp_path, sample))
    assert [t.answers for t in sc.turns] == [("Rex",), ("2022",), ("No",), (), ()]
    assert [t.tags for t in sc.turns] == [
        ("category:single-hop",),
        ("category:unknown",),
        ("category:adversarial",),
        ("category:multi-hop",),
        ("category:unknown",),
    ]
    assert {f"category:{name}" for name in CATEGORIES.values()} == {
        "category:multi-hop",
        "category:temporal",
        "category:open-domain",
        "category:single-hop",
        "category:adversarial",
    }
    (replay,), _ = import_locomo(write(tmp_path, sample), replay=True)
    assert [t.answers for t in replay.turns if t.probe] == [t.answers for t in sc.turns]


def test_bad_files_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a LoCoMo file"):
        import_locomo(write(tmp_path, {"not": "a list"}))
    with pytest.raises(InputError, match=r"/0: not a LoCoMo conversation"):
        import_locomo(write(tmp_path, [{"qa": []}]))
    out = subprocess.run(
        [sys.executable, "-m", "packproof", "import", "locomo", str(tmp_path / "missing.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1


def test_cli_writes_compact_compiled_scenarios(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "packproof",
            "import",
            "locomo",
            str(write(tmp_path, SAMPLE)),
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert "questions=3" in run.stdout
    (sc,) = load_compiled(out)
    line = json.loads(out.read_text())
    assert "items" in line and "items_upto" in line["turns"][0]["request"]  # items once
    assert len(sc.turns) == 3 and len(sc.turns[2].request["items"]) == 3


@pytest.mark.skipif(
    not LOCOMO.exists(), reason=f"LoCoMo is not at {LOCOMO} (licence: read, never committed)"
)
def test_the_real_development_split() -> None:
    scenarios, report = import_locomo(LOCOMO)
    assert report["conversations"] == len(scenarios) == 5
    assert report["questions"] == sum(len(s.turns) for s in scenarios) == 999
    # the file's own problems are counted, never fatal
    assert report["malformed"] >= 1 and report["dangling"] >= 1
    for sc in scenarios:
        ids = {it["id"] for it in sc.turns[0].request["items"]}
        assert all(set(t.relevant) <= ids for t in sc.turns)


@pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo is not at {LOCOMO}")
def test_locomo_config_end_to_end_on_one_conversation(tmp_path: Path) -> None:
    """evals/locomo.yaml's strategies, budgets and category breakdown, run on the
    first imported conversation (the full grid is `make eval-locomo`)."""
    scenarios, _ = import_locomo(LOCOMO)
    suite = tmp_path / "reports" / "imports" / "locomo_dev.jsonl"
    suite.parent.mkdir(parents=True)
    suite.write_text(json.dumps(scenarios[0].to_json()) + "\n")
    config = yaml.safe_load((ROOT / "evals" / "locomo.yaml").read_text())
    config["bootstrap"] = {"resamples": 200}
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "locomo.yaml").write_text(json.dumps(config))
    run = evaluate(
        tmp_path / "evals" / "locomo.yaml",
        out_root=tmp_path / "r",
        jobs=1,
        executor="serial",
        resume=False,
    )
    summary = json.loads((run / "summary.json").read_text())
    grid = len(config["strategies"]) * len(config["budgets"])
    assert summary["cells"] == len(scenarios[0].turns) * grid
    tags = {b["tag"].removeprefix("category:") for b in summary["breakdown"]}
    assert tags >= {"multi-hop", "temporal", "single-hop"}
    assert all(sum(g["hard_invariants"].values()) == 0 for g in summary["groups"])
    recall = {
        (g["label"], g["budget"]): g["metrics"]["evidence_recall"]["mean"]
        for g in summary["groups"]
    }
    assert recall[("bm25", 1024)] > recall[("chronological", 1024)]
    assert "Evidence recall by category" in (run / "summary.md").read_text()
    html = (run / "report.html").read_text()
    assert 'id="by-tag"' in html and "more turns" in html  # long conversations are capped


def with_turn(edit: Any) -> list[dict[str, Any]]:
    """SAMPLE with its conversation edited by ``edit(conversation)``."""
    sample = copy.deepcopy(SAMPLE)
    edit(sample[0]["conversation"])
    return sample


@pytest.mark.parametrize("replay", [False, True])
@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (
            lambda c: c["session_2"][0].update(dia_id="D1:1"),
            "/0/conversation/session_2/0/dia_id: dia_id 'D1:1' is already the id of the turn "
            "at session_1/0",
        ),
        (
            lambda c: c["session_2"][0].update(dia_id=None),
            "/0/conversation/session_2/0/dia_id: a dialogue turn needs its dia_id",
        ),
        (
            lambda c: c["session_1"][1].pop("dia_id"),
            "/0/conversation/session_1/1/dia_id: a dialogue turn needs its dia_id",
        ),
        (
            lambda c: c.update(session_2={"0": c["session_2"][0]}),
            "/0/conversation/session_2: a session is a list of dialogue turns (expected an "
            "array, found an object)",
        ),
        (
            lambda c: c["session_1"].insert(0, "hello"),
            "/0/conversation/session_1/0: not a dialogue turn",
        ),
    ],
)
def test_a_turn_that_cannot_be_an_item_is_refused_not_dropped(
    tmp_path: Path, edit: Any, says: str, replay: bool
) -> None:
    path = write(tmp_path, with_turn(edit))
    with pytest.raises(InputError) as caught:
        import_locomo(path, replay=replay)
    assert str(caught.value).startswith(f"{path}: {says}")


def test_a_gap_past_the_next_session_is_refused_naming_the_largest_the_file_takes(
    tmp_path: Path,
) -> None:
    # session 1 (three turns) at 1:00 pm on 8 May, session 2 at 1:00 pm on 9 May:
    # 86,400 s apart, so two gaps of at most 43,200 s fit between them
    sample = with_turn(lambda c: c["session_1"].append({"dia_id": "D1:3", "text": "ok"}))
    sample[0]["conversation"]["session_2_date_time"] = "1:00 pm on 9 May, 2023"
    path = write(tmp_path, sample)
    with pytest.raises(InputError) as caught:
        import_locomo(path, replay=True, gap_s=43_201.0)
    assert str(caught.value) == (
        f"{path}: --gap: 43201 s between two turns of a session puts the last of the 3 turns "
        "of conv-x's session 1 after session 2, which starts 86400 s after it: a replay "
        "keeps its steps in time order (expected --gap <= 43200 for this file, found 43201.0)"
    )
    (sc,), _ = import_locomo(path, replay=True, gap_s=43_200)  # the largest it takes
    times = [t.t for t in sc.turns if not t.probe]
    assert times == [0, 43_200, 86_400, 86_400] and times == sorted(times)


def test_dates_out_of_order_are_said_as_such_and_a_gap_without_replay_is_a_usage_error(
    tmp_path: Path,
) -> None:
    sample = with_turn(lambda c: c.update(session_2_date_time="1:00 pm on 7 May, 2023"))
    with pytest.raises(InputError, match="session_2_date_time: sessions out of time order"):
        import_locomo(write(tmp_path, sample), replay=True, gap_s=0)
    with pytest.raises(InputError) as caught:
        import_locomo(write(tmp_path, SAMPLE), gap_s=30)
    assert str(caught.value) == (
        "usage: --gap: only a replay times its turns: give --replay too, or leave out --gap"
    )
