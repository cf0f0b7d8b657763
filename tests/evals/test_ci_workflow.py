"""docs/ci.md's commands, run as printed, in order, with the installed package in
an empty folder: the baseline lines (``packproof scenarios compile`` and
``packproof baseline``), then every ``packproof`` step of the GitHub Actions
workflow (with ``GITHUB_STEP_SUMMARY`` set as GitHub sets it). Then a packer that
drops evidence fails the gate, and a team whose packer already failed when its
baseline was taken passes until it fails something new."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.paths import ROOT

DOC = ROOT / "docs/ci.md"
BIN = Path(sys.executable).parent  # the installed package's commands
# keeps every pack but its first DROP items: the fresh tail or evidence is lost
DROPPING = """
import json, sys
from packproof import make_pack, pack
for line in sys.stdin:
    request = json.loads(line)
    rid = request.pop("request_id")
    kept = pack(request).selected_ids[{drop}:]
    print(json.dumps({{**make_pack(request, kept), "request_id": rid}}))
    sys.stdout.flush()
"""
DROP_FIRST = DROPPING.format(drop=1)


def block(marker: str) -> str:
    after = DOC.read_text("utf-8").split(f"<!-- ci: {marker} -->", 1)[1]
    match = re.search(r"```\w+\n(.*?)```", after, re.S)
    assert match is not None, marker
    return match.group(1)


def baseline_lines() -> list[str]:
    return [line.split("#")[0].strip() for line in block("baseline").splitlines() if line.strip()]


def workflow_commands() -> list[str]:
    steps = yaml.safe_load(block("workflow"))["jobs"]["gate"]["steps"]
    return [s["run"] for s in steps if str(s.get("run", "")).startswith("packproof ")]


def sh(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def use_packer(folder: Path, program: str) -> None:
    """The team's packer (``program``) in place of the starter's chronological,
    under a label of its own that the config's baseline strategy names."""
    (folder / "mine.py").write_text(program)
    config = folder / "packproof.yaml"
    text = config.read_text()
    config.write_text(
        text.replace(
            "  - chronological\n",
            f'  - {{name: mine, packer: "cmd:{sys.executable} mine.py"}}\n',
            1,
        ).replace("baseline_strategy: chronological", "baseline_strategy: mine")
    )


def start(tmp_path: Path, program: str | None = None) -> tuple[Path, dict[str, str]]:
    """``packproof init``, the team's packer when given, then the baseline lines."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    folder = tmp_path / "project"
    folder.mkdir()
    assert sh("packproof init", folder, env).returncode == 0
    if program is not None:
        use_packer(folder, program)
    assert [line.split()[:2] for line in baseline_lines()] == [
        ["packproof", "scenarios"],
        ["packproof", "baseline"],
    ]  # only packproof's own commands: no cp, no gzip
    for line in baseline_lines():
        done = sh(line, folder, env)
        assert done.returncode == 0, (line, done.stderr)
    assert (folder / "reports/baseline/summary.json").is_file()
    assert (folder / "reports/baseline/metrics.csv.gz").is_file()
    return folder, {**env, "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md")}


@pytest.fixture()
def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    return start(tmp_path)


def test_the_documented_workflow_passes_on_an_unchanged_project(
    project: tuple[Path, dict[str, str]],
) -> None:
    folder, env = project
    commands = workflow_commands()
    assert [c.split()[1] for c in commands] == ["scenarios", "eval", "gate"]
    for command in commands:
        done = sh(command, folder, env)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        if command.startswith("packproof eval"):
            assert done.stdout.count("\n") == 1 and ": passed: " in done.stdout
            assert done.stderr == ""  # no progress bar in a CI log
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert summary == (folder / "gate.md").read_text() and "passed" in summary.lower()
    assert (folder / "reports/starter/latest/junit.xml").is_file()  # what the upload keeps


def test_the_workflow_fails_a_packer_that_drops_evidence(
    project: tuple[Path, dict[str, str]],
) -> None:
    folder, env = project
    use_packer(folder, DROP_FIRST)  # after the baseline: its failures are all new
    codes = {}
    for command in workflow_commands():
        done = sh(command, folder, env)
        codes[command.split()[1]] = done.returncode
        if command.startswith("packproof eval"):
            assert ": FAILED: " in done.stdout and "failing cell" in done.stdout
        if command.startswith("packproof gate"):
            out = done.stdout.lower()
            assert "missing" in out and "new failure: mine @" in out
    assert codes == {"scenarios": 0, "eval": 0, "gate": 1}  # eval --no-fail: the gate decides
    assert (folder / "gate.md").read_text().startswith("## ❌ packproof gate: FAILED")


def test_a_team_whose_packer_already_fails_gates_from_its_first_baseline(
    tmp_path: Path,
) -> None:
    folder, env = start(tmp_path, DROP_FIRST)  # the baseline has the packer's failures
    for command in workflow_commands():
        done = sh(command, folder, env)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        if command.startswith("packproof eval"):
            assert ": FAILED: " in done.stdout  # the failures are there, and reported
        if command.startswith("packproof gate"):
            assert "still failing" in done.stdout and "new failure" not in done.stdout
    # the packer gets worse: what it newly loses fails the gate
    (folder / "mine.py").write_text(DROPPING.format(drop=2))
    eval_done = sh("packproof eval --quiet --no-fail", folder, env)
    assert eval_done.returncode == 0, eval_done.stderr
    done = sh("packproof gate", folder, env)
    assert done.returncode == 1 and "new failure: mine @" in done.stdout, done.stdout
