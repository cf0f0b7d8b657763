"""A run's id is a function of what can change its results: a packer file edited
between two evals gives a second run folder beside the first, the manifest names
the file's hash, the same inputs find the same folder, two functions of one name
are two runs, and where a run ran (commit, Python, platform) is not in its id."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import packproof
from packproof.evals.run.evaluate import evaluate
from packproof.evals.run.identity import command_files, function_sha256, run_id
from packproof.evals.scenarios.format import load_compiled
from tests.evals.run.test_named_packers import SUITE, doc_example, write_config

# the documented packer, made to fill oldest first: other packs from other bytes
OLDEST_FIRST = ('reversed(request["items"])', 'request["items"]')


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run(cfg: Path, out: Path, **options: Any) -> Path:
    return evaluate(cfg, out_root=out, jobs=1, executor="serial", progress=False, **options)


def manifest(run_dir: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((run_dir / "summary.json").read_text())["manifest"]
    return manifest


@pytest.fixture
def packer_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``newest.py`` in a project folder that is the working folder, where the
    command runs, so the command names it relatively."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "newest.py"
    script.write_text(doc_example())
    return script


def test_a_changed_packer_file_is_a_new_run_and_the_earlier_one_stays(packer_file: Path) -> None:
    tmp = packer_file.parent
    entry = {"name": "mine", "packer": f"cmd:{sys.executable} newest.py"}
    cfg = write_config(tmp, ["chronological", entry])
    first = packer_file.read_text()
    before = run(cfg, tmp / "r")
    packer_file.write_text(first.replace(*OLDEST_FIRST))
    after = run(cfg, tmp / "r")
    assert before != after and before.parent == after.parent
    assert (before / "summary.json").is_file() and (after / "summary.json").is_file()
    # each manifest names the bytes it ran: a reader sees which file changed
    assert manifest(before)["packers"]["mine"]["files"] == {"newest.py": sha256(first)}
    assert manifest(after)["packers"]["mine"]["files"] == {
        "newest.py": sha256(first.replace(*OLDEST_FIRST))
    }
    # the second eval ran the edited file (not a packer process left from the first)
    assert (before / "metrics.csv").read_text() != (after / "metrics.csv").read_text()
    assert run(cfg, tmp / "r") == after  # the same inputs: the same folder


def test_the_packer_option_fingerprints_the_files_its_command_names(packer_file: Path) -> None:
    tmp = packer_file.parent
    cfg = write_config(tmp, ["chronological"], budgets=[64])
    command = f"cmd:{sys.executable} newest.py"
    first = run(cfg, tmp / "r", packer=command)
    assert manifest(first)["packer_files"] == {"newest.py": sha256(packer_file.read_text())}
    packer_file.write_text(packer_file.read_text().replace(*OLDEST_FIRST))
    second = run(cfg, tmp / "r", packer=command)
    assert second != first and (first / "summary.json").is_file()
    assert run(cfg, tmp / "r", packer=command) == second


def test_the_manifest_records_every_scenarios_hash(packer_file: Path) -> None:
    tmp = packer_file.parent
    run_dir = run(write_config(tmp, ["chronological"], budgets=[64]), tmp / "r")
    expected = {f"lossless-claw/{s.id}": s.sha256 for s in load_compiled(SUITE)}
    assert manifest(run_dir)["scenarios"] == expected


def test_command_files_are_the_arguments_naming_files_of_the_project(tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (project / "pkg" / "tool").mkdir(parents=True)
    elsewhere.mkdir()
    files = {
        "pkg/packer.py": "print('module')\n",
        "pkg/tool/__main__.py": "print('package')\n",
        "weights.json": "[1, 2]\n",
        "run.sh": "#!/bin/sh\n",
    }
    for name, text in files.items():
        (project / name).write_text(text)
    (elsewhere / "shared.py").write_text("print('shared')\n")
    argv = [
        "python",  # a program found on PATH, not a file of the project
        "-m",
        "pkg.packer",
        "--weights=weights.json",
        "./run.sh",
        str(elsewhere / "shared.py"),  # outside the project folders
        "missing.py",
        "-m",
        "pkg.tool",
    ]
    found = command_files(argv, [], "packer", cwd=project)
    assert found == {
        "pkg/packer.py": sha256(files["pkg/packer.py"]),
        "pkg/tool/__main__.py": sha256(files["pkg/tool/__main__.py"]),
        "weights.json": sha256(files["weights.json"]),
        "./run.sh": sha256(files["run.sh"]),
    }
    # the config's folder is a project folder too
    beside_config = command_files(argv, [elsewhere], "packer", cwd=project)
    assert beside_config[str(elsewhere / "shared.py")] == sha256("print('shared')\n")


NEWEST = """def newest(request):
    ids = [item["id"] for item in request["items"]]
    return packproof.make_pack(request, ids[-{keep}:])
"""


def load_packer(folder: Path, keep: int) -> Any:
    """``newest`` from a fresh ``mypacker.py`` in ``folder``, imported under one
    module name whatever its body: the same qualified name, its own source."""
    folder.mkdir()
    (folder / "mypacker.py").write_text("import packproof\n\n\n" + NEWEST.format(keep=keep))
    spec = importlib.util.spec_from_file_location("mypacker", folder / "mypacker.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.newest


def test_two_functions_of_one_name_are_two_runs(tmp_path: Path) -> None:
    cfg = {"name": "api", "suites": [str(SUITE)], "strategies": ["chronological"], "budgets": [64]}
    one, other = load_packer(tmp_path / "one", 1), load_packer(tmp_path / "other", 12)
    runs = [packproof.evaluate(f, cfg, out=tmp_path / "r") for f in (one, other)]
    assert runs[0].dir != runs[1].dir and all((r.dir / "summary.json").is_file() for r in runs)
    packers = [r.summary["manifest"]["packers"]["newest"] for r in runs]
    assert [p["packer"] for p in packers] == ["python:mypacker.newest"] * 2
    assert [p["source_sha256"] for p in packers] == [
        sha256(NEWEST.format(keep=1)),
        sha256(NEWEST.format(keep=12)),
    ]
    assert packproof.evaluate(other, cfg, out=tmp_path / "r").dir == runs[1].dir


def test_a_function_without_source_is_known_by_its_code() -> None:
    def typed(body: str) -> Any:
        space: dict[str, Any] = {}
        exec(compile(f"def newest(request):\n    return {body}\n", "<stdin>", "exec"), space)
        return space["newest"]

    assert function_sha256(typed("request['items'][-1:]")) == function_sha256(
        typed("request['items'][-1:]")
    )
    assert function_sha256(typed("request['items'][-1:]")) != function_sha256(
        typed("request['items'][-2:]")
    )


def test_where_a_run_ran_is_not_in_its_id() -> None:
    inputs = {"config": {"sha256": "1" * 64}, "name": "t"}
    here = {**inputs, "git_commit": "abc", "python": "3.11.7", "platform": "Linux"}
    there = {**inputs, "git_commit": None, "python": "3.12.1", "platform": "Darwin"}
    # sha256 of the identity's canonical JSON (sorted keys, no spaces)
    expected = "t-" + sha256('{"config":{"sha256":"' + "1" * 64 + '"},"name":"t"}')[:8]
    assert run_id("t", here) == run_id("t", there) == expected
    assert run_id("t", {**here, "config": {"sha256": "2" * 64}}) != expected
