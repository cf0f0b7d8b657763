"""``packproof.evaluate`` with a function packer: what the function does (exits,
is interrupted, overruns a timeout, kills its own process) fails a cell or stops
the run cleanly, never the caller's process; a run is named after the
function's code; what cannot run is refused before anything is written."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import packproof
from packproof.evals.run.folder import INCOMPLETE
from tests.evals.run.test_faults import wait_groups_gone
from tests.journal import records as journal_records
from tests.paths import ROOT

SUITE = ROOT / "scenarios/compiled/lossless-claw.jsonl"
CONFIG = {
    "name": "api",
    "suites": [str(SUITE)],
    "strategies": ["chronological"],
    "bootstrap": {"resamples": 100},
}
CELLS = len(SUITE.read_text("utf-8").splitlines()) * 2  # one turn a scenario, two strategies


def newest(request: dict[str, Any]) -> dict[str, Any]:
    kept: list[str] = []
    used = 0
    for item in reversed(request["items"]):
        if used + item["tokens"] <= request["budget_tokens"]:
            kept.insert(0, item["id"])
            used += item["tokens"]
    return packproof.make_pack(request, kept)


def statuses(run: packproof.Run) -> list[str]:
    return [r["status"] for r in journal_records(run.dir)]


@pytest.mark.parametrize("code", [0, 3, None])
def test_a_packer_that_calls_sys_exit_fails_its_cells_and_the_run_finishes(
    tmp_path: Path, code: int | None
) -> None:
    def exits(request: dict[str, Any]) -> dict[str, Any]:
        sys.exit(code)

    run = packproof.evaluate(exits, CONFIG, out=tmp_path)
    assert not (run.dir / INCOMPLETE).exists() and (run.dir / "summary.json").exists()
    assert run.failures["classes"] == {"CRASH": CELLS // 2} and not run.passed
    errors = {r.get("error") for r in journal_records(run.dir)}
    assert ("SystemExit" if code is None else f"SystemExit: {code}") in errors


def test_ctrl_c_in_a_packer_stops_the_run_saying_where_and_resume_finishes_it(
    tmp_path: Path,
) -> None:
    calls: list[int] = []

    def interrupted_once(request: dict[str, Any]) -> dict[str, Any]:
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return newest(request)

    with pytest.raises(KeyboardInterrupt) as stopped:
        packproof.evaluate(interrupted_once, CONFIG, out=tmp_path)
    (run_dir,) = (tmp_path / "api").iterdir()
    assert (run_dir / INCOMPLETE).exists()
    message = str(stopped.value)
    assert str(run_dir) in message and INCOMPLETE in message and "resume=True" in message
    # the same function (same code, same run): resume finishes the interrupted run
    run = packproof.evaluate(interrupted_once, CONFIG, out=tmp_path, resume=True)
    assert run.dir == run_dir and not (run_dir / INCOMPLETE).exists()
    assert statuses(run) == ["ok"] * CELLS


def test_a_timeout_fails_an_overrunning_call_as_timeout_and_kills_what_it_ran_in(
    tmp_path: Path,
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    (marks / "hang").touch()
    (marks / "die").touch()

    def unruly(request: dict[str, Any]) -> dict[str, Any]:
        (marks / f"group-{os.getpgrp()}").touch()  # the child it runs in, and its group
        for flag in ("hang", "die"):  # once each: the flag goes with the first call
            if (marks / flag).exists():
                (marks / flag).unlink()
                if flag == "hang":
                    time.sleep(600)
                os._exit(3)  # in-process, this would end the caller
        return newest(request)

    run = packproof.evaluate(unruly, CONFIG, out=tmp_path / "r", timeout=5)
    cells = {r["key"]: r for r in journal_records(run.dir)}
    failed = sorted((r["status"], r["error"]) for r in cells.values() if r["status"] != "ok")
    assert failed == [
        ("CRASH", "the packer exited (code 3)"),
        ("TIMEOUT", "no answer within 5 s"),
    ]
    assert len(cells) == CELLS
    groups = {int(p.name.split("-")[1]) for p in marks.glob("group-*")}
    assert len(groups) == 3 and os.getpgrp() not in groups  # a fresh child after each
    assert wait_groups_gone(groups) == set()


def test_without_a_timeout_a_function_runs_in_the_callers_process(tmp_path: Path) -> None:
    seen: set[int] = set()

    def here(request: dict[str, Any]) -> dict[str, Any]:
        seen.add(os.getpid())
        return newest(request)

    packproof.evaluate(here, CONFIG, out=tmp_path)
    assert seen == {os.getpid()}


def test_two_functions_with_one_name_are_two_runs(tmp_path: Path) -> None:
    def first(request: dict[str, Any]) -> dict[str, Any]:
        return newest(request)

    def second(request: dict[str, Any]) -> dict[str, Any]:
        return newest({**request, "items": request["items"][-1:]})

    a = packproof.evaluate(first, CONFIG, out=tmp_path, name="mine")
    b = packproof.evaluate(second, CONFIG, out=tmp_path, name="mine")
    again = packproof.evaluate(first, CONFIG, out=tmp_path, name="mine")
    assert a.dir != b.dir and again.dir == a.dir
    sha = {r.summary["manifest"]["packers"]["mine"]["source_sha256"] for r in (a, b)}
    assert len(sha) == 2


@pytest.mark.parametrize("timeout", [None, 30])
def test_a_function_a_pool_cannot_pickle_is_refused_before_anything_is_written(
    tmp_path: Path, timeout: float | None
) -> None:
    with pytest.raises(packproof.InputError) as refused:
        packproof.evaluate(
            lambda r: newest(r),
            CONFIG,
            name="mine",
            out=tmp_path,
            executor="process",
            jobs=2,
            timeout=timeout,
        )
    text = str(refused.value)
    assert "does not pickle" in text and "executor='serial'" in text and "\n" not in text
    assert not (tmp_path / "api").exists()


def test_a_module_level_function_runs_in_the_process_pool(tmp_path: Path) -> None:
    run = packproof.evaluate(newest, CONFIG, out=tmp_path, executor="process", jobs=2)
    assert statuses(run) == ["ok"] * CELLS


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"timeout": float("nan")}, "timeout: not a timeout"),
        ({"timeout": 0}, "timeout: not a timeout"),
        ({"name": "mine\n"}, "name: not a packer name"),
        ({"name": " mine"}, "name: not a packer name"),
        # each held to its CLI option's bounds (--jobs, --keep), named by its parameter
        ({"jobs": 0}, "jobs: out of range (expected an integer in [1, 256], found 0)"),
        ({"jobs": 257}, "jobs: out of range"),
        ({"jobs": 1.5}, "jobs: not a whole number (expected an integer in [1, 256], found 1.5)"),
        ({"jobs": True}, "jobs: not a whole number"),
        ({"keep": 0}, "keep: out of range (expected an integer in [1, 1000000], found 0)"),
        ({"keep": -1}, "keep: out of range"),
        ({"keep": 2.0}, "keep: not a whole number"),
        ({"executor": 3}, "executor: not an executor"),
        ({"builtins": "no"}, 'builtins: not a bool (expected True or False, found "no")'),
        ({"resume": 1}, "resume: not a bool"),
        ({"out": 42}, "out: not a folder (expected a path, found 42)"),
    ],
)
def test_a_bad_option_is_one_line_before_anything_is_written(
    tmp_path: Path, options: dict[str, Any], says: str
) -> None:
    for packer in (newest, "cmd:true"):
        with pytest.raises(packproof.InputError) as refused:
            packproof.evaluate(packer, CONFIG, **{"out": tmp_path, **options})
        assert str(refused.value).startswith(says) and "\n" not in str(refused.value)
    assert not tmp_path.joinpath("api").exists()


def test_keep_zero_is_refused_and_every_earlier_run_kept(tmp_path: Path) -> None:
    first = packproof.evaluate(newest, CONFIG, out=tmp_path)
    with pytest.raises(packproof.InputError, match=r"^keep: out of range"):
        packproof.evaluate(
            newest, {**CONFIG, "bootstrap": {"resamples": 101}}, out=tmp_path, keep=0
        )
    assert (first.dir / "summary.json").exists()
    assert {p.name for p in tmp_path.joinpath("api").iterdir()} == {first.dir.name, "latest"}


@pytest.mark.parametrize("config", [42, None, ["packproof.yaml"]])
def test_a_config_neither_a_path_nor_a_mapping_is_named(tmp_path: Path, config: Any) -> None:
    with pytest.raises(packproof.InputError) as refused:
        packproof.evaluate(newest, config, out=tmp_path)
    assert str(refused.value).startswith(
        "config: not a config (expected a path to an eval config YAML, or the config as a "
        "mapping, found "
    )
    assert not tmp_path.joinpath("api").exists()


def test_a_command_that_cannot_start_is_named_as_the_packer_argument(tmp_path: Path) -> None:
    with pytest.raises(packproof.InputError) as refused:
        packproof.evaluate("cmd:/no/such/packer", CONFIG, out=tmp_path)
    assert str(refused.value) == (
        "packer: cannot start '/no/such/packer': No such file or directory"
    )
    assert not tmp_path.joinpath("api").exists()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find the worker")
def test_a_worker_that_dies_raises_run_error_saying_how_and_resume_finishes(
    tmp_path: Path,
) -> None:
    from packproof.packer.errors import RunError
    from tests.evals.run.test_faults import KILLS_ITS_WORKER

    (tmp_path / "packer.py").write_text(KILLS_ITS_WORKER)
    (tmp_path / "kill").mkdir()
    packer = f"cmd:{sys.executable} {tmp_path / 'packer.py'} {tmp_path / 'kill'}"
    config = {**CONFIG, "budgets": ["scenario", 16, 32, 64]}  # a few requests per worker
    out = tmp_path / "r"
    with pytest.raises(RunError) as stopped:
        packproof.evaluate(packer, config, out=out, executor="process", jobs=2)
    (run,) = out.glob("api/api-*")
    assert str(stopped.value) == (
        "a worker process died (killed by signal 9, SIGKILL, as the out-of-memory killer "
        f"does): {run} is left INCOMPLETE with its finished cells; call evaluate(..., "
        "resume=True) to continue it"
    )
    assert (run / INCOMPLETE).exists()
    resumed = packproof.evaluate(packer, config, out=out, executor="process", jobs=2, resume=True)
    assert resumed.dir == run and not (run / INCOMPLETE).exists()
