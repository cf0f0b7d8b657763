"""packproof tune: candidates are scored only on conversations they were not chosen on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from packproof.evals.scenarios.compile import write_compiled
from packproof.evals.scenarios.format import Scenario, Turn
from packproof.evals.tune.search import tune
from packproof.packer import InputError
from packproof.packer.request import parse_request, request_to_json


def conversation(n: int) -> Scenario:
    """Old evidence that only relevance finds; recency favours the distractors."""
    items = [{"id": f"e{n}", "text": f"the vault code is {n}{n}{n}", "turn": 0, "tokens": 5}]
    items += [
        {"id": f"c{n}-{k}", "text": f"small talk {k}", "turn": 10 + k, "tokens": 5}
        for k in range(6)
    ]
    request = request_to_json(
        parse_request({"items": items, "budget_tokens": 10}), with_strategy=False
    )
    turns = tuple(
        Turn({**request, "prompt": "what is the vault code"}, (f"e{n}",), {}) for _ in range(2)
    )
    return Scenario(f"conv{n}", "a synthetic conversation", ("synthetic",), turns, "x", n)


def setup(tmp: Path, space: str) -> tuple[Path, Path]:
    (tmp / "evals").mkdir()
    suite = tmp / "suite.yaml"
    write_compiled(
        {suite: "".join(json.dumps(conversation(n).to_json()) + "\n" for n in range(3))},
        tmp / "compiled",
    )
    config = tmp / "evals" / "cfg.yaml"
    config.write_text(
        json.dumps(
            {
                "name": "t",
                "suites": [str(tmp / "compiled" / "suite.jsonl")],
                "strategies": ["hybrid"],
                "budgets": [10],
                "bootstrap": {"resamples": 200},
            }
        )
    )
    space_path = tmp / "space.yaml"
    space_path.write_text(space)
    return config, space_path


SPACE = "strategy: hybrid\nfolds: 3\nparams:\n  w_recency: [0.0, 5.0]\n  w_relevance: [1.0]\n"


def test_held_out_tuning_prefers_relevance_here(tmp_path: Path) -> None:
    config, space = setup(tmp_path, SPACE)
    out, result = tune(
        config, "hybrid", space, out_root=tmp_path / "tune", jobs=1, executor="serial"
    )
    assert result["conversations"] == 3 and len(result["folds"]) == 3
    for fold in result["folds"]:  # chosen on the two other conversations, scored on this one
        assert fold["chosen"]["w_recency"] == 0.0
        assert fold["held_out_score"] == 1.0
    assert result["chosen"]["params"] == {"w_recency": 0.0, "w_relevance": 1.0}
    assert (out / "tune.md").exists() and json.loads((out / "tune.json").read_text())


def test_bad_spaces(tmp_path: Path) -> None:
    config, space = setup(tmp_path, "strategy: bm25\nparams:\n  k1: [1.2]\n")
    with pytest.raises(InputError, match="the space is for another strategy"):
        tune(config, "hybrid", space, out_root=tmp_path / "t", jobs=1, executor="serial")
    space.write_text("strategy: hybrid\nparams:\n  w_recency: [-1]\n")
    with pytest.raises(InputError, match=r"line 3 /params/w_recency/0: out of range"):
        tune(config, "hybrid", space, out_root=tmp_path / "t", jobs=1, executor="serial")
    space.write_text("strategy: hybrid\nparams:\n  nope: [1]\n")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "packproof",
            "tune",
            "--config",
            str(config),
            "--space",
            str(space),
            "--out",
            str(tmp_path / "t"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2 and "unknown parameter" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and not (tmp_path / "t").exists()
