"""The gate's outputs (``--markdown`` and GitHub's job summary) are checked
against every file the gate reads, the default current run found from the
baseline among them, before the gate runs and before either is written; a job
summary file not made yet is made, in a folder that exists."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest

from packproof.cli import main
from packproof.evals.gate.run import gate_inputs
from packproof.evals.project import default_gates
from tests.reliability.test_targets import starter_project


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return starter_project(tmp_path_factory.mktemp("gate-outputs") / "p")


def test_what_the_gate_reads_includes_its_defaults_and_the_cells_beside_each_summary(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    inputs = gate_inputs(Path("reports/baseline/summary.json"), None, default_gates())
    reads = {read.path: read.what for read in inputs.reads()}
    current = Path("reports/starter/latest")
    assert inputs.current == current / "summary.json"  # found from the baseline's config name
    assert reads[Path("gates.yaml")] == "the gates file"
    assert reads[Path("reports/baseline/metrics.csv.gz")] == "the baseline's cells"
    assert reads[current / "summary.json"] == "the current run's summary"
    assert reads[current / "metrics.csv"] == "the current run's cells"


@pytest.mark.parametrize(
    ("markdown", "job", "says"),
    [
        ("reports/starter/latest/summary.json", None, "is the current run's summary"),
        ("gate.md", "nowhere/summary.md", "cannot append: no folder 'nowhere'"),
        ("gate.md", "reports/baseline/metrics.csv.gz", "is the baseline's cells"),
    ],
    ids=["markdown-over-the-default-current", "job-summary-folder-missing", "job-over-cells"],
)
def test_an_output_is_refused_before_the_gate_runs(
    markdown: str,
    job: str | None,
    says: str,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(project)
    if job is None:
        monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    else:
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", job)

    def never(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the gate ran before its outputs were checked")

    monkeypatch.setattr("packproof.evals.gate.run.judge_gate", never)
    capsys.readouterr()
    assert main(["gate", "--markdown", markdown]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and says in err
    assert not Path("gate.md").exists()


def test_a_job_summary_not_made_yet_is_made_beside_the_markdown(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    job = tmp_path / "job.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(job))
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["gate", "--markdown", str(tmp_path / "gate.md")]) == 0
    text = (tmp_path / "gate.md").read_text("utf-8")
    assert text.startswith("## ✅ packproof gate: PASSED\n")
    assert job.read_text("utf-8") == text  # nothing before it: no blank line first
