"""``packproof eval mine.yaml`` in a folder with no config: the starter config's
strategies and budgets, on the given scenario files only (docs/eval.md), never
the starter's own suites, which a project's ``scenarios/compiled/`` holds."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from packproof.cli import main
from packproof.evals.project import CONFIG, DATA, STARTER

MINE = """\
schema: packproof.scenarios.v1
scenarios:
  - id: vault
    why: The code is said once; a pack that keeps it holds the answer.
    request:
      budget_tokens: 20
      prompt: what is the vault code
      items:
        - [m1, user, the vault code is 4417]
        - [m2, assistant, noted]
    relevant: [m1]
"""


def test_eval_of_a_file_in_an_empty_folder_runs_the_starter_config_on_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.yaml").write_text(MINE, "utf-8")
    assert main(["eval", "mine.yaml", "--quiet", "--jobs", "1", "--executor", "serial"]) == 0
    assert capsys.readouterr().out.startswith("eval starter-")
    summary = json.loads((tmp_path / "reports/starter/latest/summary.json").read_text("utf-8"))
    starter_file = DATA / STARTER[CONFIG]
    starter = yaml.safe_load(starter_file.read_text("utf-8"))
    manifest = summary["manifest"]
    assert [s["file"] for s in manifest["suites"]] == ["mine.yaml"]
    assert manifest["config"] == {
        "file": "packproof.yaml",
        "sha256": hashlib.sha256(starter_file.read_bytes()).hexdigest(),
    }
    assert [s["label"] for s in summary["strategies"]] == starter["strategies"]
    assert summary["budgets"] == starter["budgets"]
    assert summary["cells"] == len(starter["strategies"]) * len(starter["budgets"])


def test_a_config_in_the_folder_is_still_the_one_that_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.yaml").write_text(MINE, "utf-8")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "mine.yaml").write_text(MINE, "utf-8")
    config = {
        "schema": "packproof.eval.v1",
        "name": "own",
        "suites": ["elsewhere/*.yaml"],
        "strategies": ["bm25"],
        "budgets": [8],
    }
    (tmp_path / CONFIG).write_text(json.dumps(config), "utf-8")
    assert main(["eval", "mine.yaml", "--list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"config {CONFIG} (own)")
    assert "cells: 1 (1 turns x 1 strategies x 1 budgets)" in out
