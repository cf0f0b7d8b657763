"""packproof init: a starter project that compiles, evaluates and gates as it is,
written from package data, never over a user's file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from packproof.cli import main
from packproof.evals.project import DATA, STARTER, default_gates, init_project, shipped_space


def test_init_writes_the_starter_set_and_it_runs_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", str(tmp_path / "p")]) == 0
    assert sorted(str(p.relative_to(tmp_path / "p")) for p in (tmp_path / "p").rglob("*.yaml")) == [
        "gates.yaml",
        "packproof.yaml",
        "scenarios/example.yaml",
    ]
    monkeypatch.chdir(tmp_path / "p")
    assert main(["scenarios", "compile"]) == 0
    assert main(["eval", "--jobs", "1"]) == 0  # default config: ./packproof.yaml
    summary = json.loads(Path("reports/starter/latest/summary.json").read_text())
    assert summary["expectation_failures"] == []
    assert summary["cells"] > 0
    assert default_gates() == Path("gates.yaml")
    assert main(["gate", "--baseline", "reports/starter/latest/summary.json"]) == 0
    capsys.readouterr()


def test_init_never_overwrites_and_writes_nothing_then(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "gates.yaml").write_text("mine\n")
    assert main(["init", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gates.yaml: already exists" in err
    assert (tmp_path / "gates.yaml").read_text() == "mine\n"
    assert not (tmp_path / "packproof.yaml").exists()


def test_defaults_come_from_package_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no ./gates.yaml here
    assert default_gates() == DATA / "gates.yaml"
    assert shipped_space("hybrid") == DATA / "spaces" / "hybrid.yaml"
    assert all((DATA / shipped).exists() for shipped in STARTER.values())


def test_eval_without_a_config_says_how_to_get_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["eval"]) == 2
    err = capsys.readouterr().err
    assert "packproof.yaml: no eval config here: run `packproof init`" in err


def test_tune_without_a_shipped_space_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    init_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["tune", "--strategy", "bm25"]) == 2
    assert "no shipped search space for strategy 'bm25'" in capsys.readouterr().err
