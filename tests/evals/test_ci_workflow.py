"""docs/ci.md's commands, run as printed, in order, with the installed package in
an empty folder: the baseline lines, then every ``packproof`` step of the GitHub
Actions workflow (with ``GITHUB_STEP_SUMMARY`` set as GitHub sets it). Then a
packer that drops evidence fails both the eval and the gate."""

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
# keeps every pack but its first item: the fresh tail or evidence is lost
DROP_FIRST = """
import json, sys
from packproof import make_pack, pack
for line in sys.stdin:
    request = json.loads(line)
    rid = request.pop("request_id")
    print(json.dumps({**make_pack(request, pack(request).selected_ids[1:]), "request_id": rid}))
    sys.stdout.flush()
"""


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


@pytest.fixture()
def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    folder = tmp_path / "project"
    folder.mkdir()
    assert sh("packproof init", folder, env).returncode == 0
    for line in baseline_lines():
        done = sh(line, folder, env)
        assert done.returncode == 0, (line, done.stderr)
    assert (folder / "reports/baseline/summary.json").is_file()
    assert (folder / "reports/baseline/metrics.csv.gz").is_file()
    return folder, {**env, "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md")}


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
    assert summary == (folder / "gate.md").read_text() and "passed" in summary
    assert (folder / "reports/starter/latest/junit.xml").is_file()  # what the upload keeps


def test_the_workflow_fails_a_packer_that_drops_evidence(
    project: tuple[Path, dict[str, str]],
) -> None:
    folder, env = project
    (folder / "drop.py").write_text(DROP_FIRST)
    config = folder / "packproof.yaml"
    text = config.read_text()
    # the team's packer replaces the baseline's chronological under its label
    config.write_text(
        text.replace(
            "  - chronological\n",
            f'  - {{name: chronological2, packer: "cmd:{sys.executable} drop.py"}}\n',
            1,
        ).replace("baseline_strategy: chronological", "baseline_strategy: chronological2")
    )
    codes = {}
    for command in workflow_commands():
        done = sh(command, folder, env)
        codes[command.split()[1]] = done.returncode
        if command.startswith("packproof eval"):
            assert ": FAILED: " in done.stdout and "failing cell" in done.stdout
        if command.startswith("packproof gate"):
            assert "missing" in done.stdout.lower() and "chronological2" in done.stdout
    assert codes == {"scenarios": 0, "eval": 1, "gate": 1}
    assert "❌" in (folder / "gate.md").read_text()
