"""packproof init: a starter project that compiles, evaluates and gates as it is,
written from package data, never over a user's file; packproof baseline: a complete
run recorded as the baseline the gate reads by default, both files or neither."""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from packproof.cli import main
from packproof.evals import project
from packproof.evals.project import (
    DATA,
    STARTER,
    default_gates,
    init_project,
    shipped_space,
    space_file,
)
from packproof.packer.errors import InputError


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


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A starter project whose baseline `packproof baseline` recorded (one eval run),
    and what the command printed."""
    folder = tmp_path_factory.mktemp("baseline") / "p"
    init_project(folder)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        assert main(["scenarios", "compile"]) == 0
        with contextlib.redirect_stdout(io.StringIO()) as out:
            assert main(["baseline", "--jobs", "1", "--quiet"]) == 0
    return folder, out.getvalue()


def run_folder(project: Path) -> Path:
    """The one run under reports/starter/ (not the latest link)."""
    (run,) = [p for p in (project / "reports/starter").iterdir() if p.name.startswith("starter-")]
    return run


def copy_run(project: Path, into: Path) -> Path:
    target = into / "run"
    shutil.copytree(run_folder(project), target)
    return target


def test_baseline_runs_the_eval_and_records_its_summary_and_cells(
    recorded: tuple[Path, str],
) -> None:
    folder, printed = recorded
    run = run_folder(folder)
    base = folder / "reports/baseline"
    assert sorted(p.name for p in base.iterdir()) == ["metrics.csv.gz", "summary.json"]
    assert (base / "summary.json").read_bytes() == (run / "summary.json").read_bytes()
    packed = (base / "metrics.csv.gz").read_bytes()
    assert gzip.decompress(packed) == (run / "metrics.csv").read_bytes()
    # gzip's header: method 8, no flags (no file name), mtime 0, best compression (2)
    assert packed[:9] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02"
    lines = printed.splitlines()
    assert lines[0].startswith(f"eval {run.name}: passed: ")
    assert lines[1:4] == [
        "wrote reports/baseline/metrics.csv.gz",
        "wrote reports/baseline/summary.json",
        f"the baseline is now run {run.name} (reports/starter/{run.name}/); "
        "review the change and commit reports/baseline/",
    ]
    assert lines[-1] == "next, after each change: packproof eval && packproof gate"


def test_the_gate_reads_the_recorded_baseline_by_default(
    recorded: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, _ = recorded
    monkeypatch.chdir(folder)
    assert main(["gate", "--significance", "0.05"]) == 0  # the cells are read from the .gz
    out = capsys.readouterr().out
    assert "baseline: reports/baseline/summary.json" in out and "passed" in out


def test_baseline_from_a_finished_run_writes_the_same_bytes_every_time(
    recorded: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, _ = recorded
    run = copy_run(folder, tmp_path)
    first, second = tmp_path / "first", tmp_path / "second"
    assert main(["baseline", "--from", str(run), "--out", str(first)]) == 0
    assert main(["baseline", "--from", str(run / "summary.json"), "--out", str(second)]) == 0
    for name in ("summary.json", "metrics.csv.gz"):
        assert (first / name).read_bytes() == (second / name).read_bytes()
        assert (first / name).read_bytes() == (folder / "reports/baseline" / name).read_bytes()
    out = capsys.readouterr().out
    assert not out.startswith("eval ")  # nothing was run
    assert f"the baseline is now run {run_folder(folder).name} ({run}/)" in out
    gate = f"packproof gate --baseline {second}/summary.json"
    assert f"next, after each change: packproof eval && {gate}" in out


@pytest.mark.parametrize(
    ("damage", "needle"),
    [
        ("INCOMPLETE", "an incomplete run (interrupted, or still running)"),
        ("metrics.csv", "not a complete run folder (expected summary.json and metrics.csv"),
        ("summary.json", 'found "no summary.json"'),
        ("{}", "summary.json: /manifest/run_id: not an eval summary (no run id)"),
    ],
    ids=["incomplete", "no-cells", "no-summary", "not-a-summary"],
)
def test_baseline_refuses_an_unfinished_run_in_one_line_and_writes_nothing(
    damage: str,
    needle: str,
    recorded: tuple[Path, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = copy_run(recorded[0], tmp_path)
    if damage == "INCOMPLETE":
        (run / damage).write_text("this run has not finished its reports\n")
    elif damage == "{}":
        (run / "summary.json").write_text(damage)
    else:
        (run / damage).unlink()
    out = tmp_path / "baseline"
    assert main(["baseline", "--from", str(run), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err and str(run) in err
    assert not out.exists()


def test_baseline_never_writes_over_the_runs_own_files(
    recorded: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = copy_run(recorded[0], tmp_path)
    before = sorted(p.name for p in run.iterdir())
    assert main(["baseline", "--from", str(run), "--out", str(run)]) == 2
    assert "summary.json: is the run's summary; write elsewhere" in capsys.readouterr().err
    assert sorted(p.name for p in run.iterdir()) == before  # no metrics.csv.gz either


def test_a_failed_write_puts_the_previous_baseline_back(
    recorded: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = copy_run(recorded[0], tmp_path)
    out = tmp_path / "baseline"
    out.mkdir()
    (out / "summary.json").write_text("old summary\n")
    (out / "metrics.csv.gz").write_bytes(b"old cells")
    real = os.replace

    def full_disk(src: Any, dst: Any) -> None:  # the summary, after the cells were put in place
        if Path(dst).name == "summary.json":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(src, dst)

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(InputError, match="No space left"):
        project.write_baseline(run, out)
    assert (out / "summary.json").read_text() == "old summary\n"
    assert (out / "metrics.csv.gz").read_bytes() == b"old cells"
    assert sorted(p.name for p in out.iterdir()) == ["metrics.csv.gz", "summary.json"]


def test_baseline_checks_its_targets_before_running_the_eval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    init_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    Path("taken").write_text("a file, not a folder\n")
    assert main(["baseline", "--out", "taken", "--jobs", "1", "--quiet"]) == 2
    assert "Not a directory: 'taken'" in capsys.readouterr().err
    assert not Path("reports").exists()  # no eval was run


def test_init_is_refused_whole_when_a_folder_it_needs_is_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "scenarios").write_text("not a folder\n")
    assert main(["init", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Not a directory" in err and "scenarios" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scenarios"]
    (tmp_path / "scenarios").unlink()
    assert main(["init", str(tmp_path)]) == 0  # nothing of it left in the way


def test_init_undoes_what_it_wrote_when_a_file_appears_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another program writes scenarios/example.yaml between init's check and its
    write: init writes nothing over it, and takes back the two files (and the
    folder) it had written, so that it can be run again."""
    folder = tmp_path / "p"
    real = os.link

    def racing(src: Any, dst: Any) -> None:
        if Path(dst).name == "example.yaml":
            Path(dst).write_text("theirs\n")
        real(src, dst)

    monkeypatch.setattr(os, "link", racing)
    assert main(["init", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "example.yaml: appeared while writing" in err
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == [
        "scenarios",
        "scenarios/example.yaml",
    ]
    assert (folder / "scenarios/example.yaml").read_text() == "theirs\n"
    assert not list(tmp_path.rglob("*.tmp"))
    monkeypatch.undo()
    (folder / "scenarios/example.yaml").unlink()
    assert main(["init", str(folder)]) == 0
    assert sorted(p.name for p in folder.rglob("*.yaml")) == [
        "example.yaml",
        "gates.yaml",
        "packproof.yaml",
    ]


def test_init_leaves_nothing_when_a_write_fails_midway(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "new" / "p"
    real = os.link
    calls: list[str] = []

    def failing(src: Any, dst: Any) -> None:  # the third file's write fails
        calls.append(str(dst))
        if len(calls) == 3:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(src, dst)

    monkeypatch.setattr(os, "link", failing)
    assert main(["init", str(folder)]) == 2
    assert "cannot write: Input/output error" in capsys.readouterr().err
    assert len(calls) == 3
    assert list(tmp_path.iterdir()) == []  # the folders it made are gone too


def test_baseline_from_a_run_takes_no_eval_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["baseline", "--from", "reports/x/latest", "--config", "packproof.yaml"]) == 2
    err = capsys.readouterr().err
    assert "--config applies when baseline runs the eval, not with --from" in err


def test_init_says_what_to_run_next(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(tmp_path / "p")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2:] == [
        f"next: cd {tmp_path / 'p'} && packproof scenarios compile && packproof baseline",
        "then, after each change: packproof eval && packproof gate",
    ]


def test_the_gate_without_a_baseline_says_how_to_record_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["gate"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert (
        "reports/baseline/summary.json: no baseline here: record one with `packproof baseline`"
        in err
    )


def test_tune_takes_a_shipped_space_by_name(tmp_path: Path) -> None:
    assert space_file("bm25-cache", "bm25") == DATA / "spaces" / "bm25-cache.yaml"
    assert space_file(None, "hybrid") == DATA / "spaces" / "hybrid.yaml"
    mine = tmp_path / "bm25-cache"  # a file of that name is the user's, and wins
    mine.write_text("schema: packproof.space.v1\n")
    assert space_file(str(mine), "bm25") == mine
