"""Fault injection: a killed or interrupted eval leaves no process behind and a
resumable run; a full disk leaves a run marked incomplete, no temporary file and
``latest`` untouched."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.paths import ROOT

# A packer that answers a task's worth of requests quickly (so records appear),
# then slowly while the flag file exists: the eval is surely still running when
# the test strikes, however loaded the machine. The resumed run, with the flag
# removed, is quick.
SLOW_PACKER = (
    "import json, os, sys, time\n"
    "from packproof import pack\n"
    "for n, line in enumerate(sys.stdin):\n"
    "    request = json.loads(line)\n"
    "    rid = request.pop('request_id')\n"
    "    time.sleep(0.05 if n < 36 or not os.path.exists(sys.argv[1]) else 1.0)\n"
    "    print(json.dumps({**pack(request).to_dict(), 'request_id': rid}), flush=True)\n"
)


def setup(tmp: Path) -> tuple[list[str], Path]:
    (tmp / "packer.py").write_text(SLOW_PACKER)
    # removed before a resume; a folder, not a file: a file the command names is
    # part of the run's identity, and the resume must find the same run
    (tmp / "slow").mkdir()
    config = {
        "schema": "packproof.eval.v1",
        "name": "faults",
        "suites": [str(ROOT / "scenarios/compiled/conversations.jsonl")],
        "strategies": ["chronological", "bm25", "hybrid"],
        "budgets": ["scenario", 16, 32, 64],
        "bootstrap": {"resamples": 100},
    }
    (tmp / "c.yaml").write_text(json.dumps(config))
    out = tmp / "r"
    argv = [
        sys.executable,
        "-m",
        "packproof",
        "eval",
        "--config",
        str(tmp / "c.yaml"),
        "--out",
        str(out),
        "--jobs",
        "2",
        "--packer",
        f"cmd:{sys.executable} {tmp / 'packer.py'} {tmp / 'slow'}",
    ]
    return argv, out


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is still running (a zombie, waiting
    for an init that may not reap, is not)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


def wait_groups_gone(groups: set[int], timeout: float = 60) -> set[int]:
    """The process groups still running after ``timeout`` seconds (none, when
    every one ended)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = {g for g in groups if group_alive(g)}
        if not left:
            return set()
        time.sleep(0.1)
    return {g for g in groups if group_alive(g)}


def started(proc: subprocess.Popen[bytes], out: Path, timeout: float = 60) -> None:
    """Wait until the eval has written some records (its workers are busy)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        journals = list(out.glob("faults/faults-*/results.jsonl.gz"))
        if journals and journals[0].stat().st_size > 0:
            return
        assert proc.poll() is None, "the eval ended before the test could strike"
        time.sleep(0.05)
    pytest.fail("the eval wrote no record in time")


def wait_gone(pids: set[int], timeout: float = 20) -> set[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = {p for p in pids if alive(p)}
        if not left:
            return set()
        time.sleep(0.1)
    return {p for p in pids if alive(p)}


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find the workers")
@pytest.mark.parametrize(
    ("executor", "sig"),
    [("process", signal.SIGKILL), ("process", signal.SIGTERM), ("dask", signal.SIGKILL)],
    ids=["kill-9", "sigterm", "dask-kill-9"],
)
def test_a_killed_eval_leaves_no_process_behind_and_resume_finishes(
    tmp_path: Path, executor: str, sig: signal.Signals
) -> None:
    argv, out = setup(tmp_path)
    argv = [*argv, "--executor", executor]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        started(proc, out)
        below = descendants(proc.pid)
        assert below, "no worker processes were found"
        proc.send_signal(sig)
        proc.wait()
        assert wait_gone(below) == set(), "workers outlived a kill -9 of the eval"
    finally:
        if proc.poll() is None:
            proc.kill()
    (run,) = out.glob("faults/faults-*")
    assert (run / "INCOMPLETE").exists() and not (run.parent / "latest").exists()
    (tmp_path / "slow").rmdir()
    done = subprocess.run([*argv, "--resume"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert not (run / "INCOMPLETE").exists() and (run.parent / "latest" / "metrics.csv").exists()


# A packer that, at its third request, kills the pool worker it answers (as the
# out-of-memory killer would: SIGKILL), once in all (the flag folder goes first),
# and otherwise packs as packproof does. Its parent is packproof's keeper, whose
# parent is the worker.
KILLS_ITS_WORKER = """\
import json, os, signal, sys
from packproof import pack
flag = sys.argv[1]
def worker():
    pid = os.getppid()
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        kept = b"keeper.py" in f.read()
    if kept:
        with open(f"/proc/{pid}/stat") as f:
            pid = int(f.read().rsplit(")", 1)[1].split()[1])
    return pid
for n, line in enumerate(sys.stdin):
    request = json.loads(line)
    rid = request.pop("request_id")
    if n == 2 and os.path.isdir(flag):
        try:
            os.rmdir(flag)
        except OSError:
            pass
        else:
            os.kill(worker(), signal.SIGKILL)
    print(json.dumps({**pack(request).to_dict(), "request_id": rid}), flush=True)
"""


def worker_killer(tmp: Path) -> list[str]:
    """``packproof eval`` (2 pool workers) with a packer that kills its worker once."""
    argv, _ = setup(tmp)
    (tmp / "packer.py").write_text(KILLS_ITS_WORKER)
    (tmp / "kill").mkdir()
    return [*argv[:-1], f"cmd:{sys.executable} {tmp / 'packer.py'} {tmp / 'kill'}"]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find the worker")
def test_a_worker_that_dies_is_one_line_exit_1_and_resume_finishes(tmp_path: Path) -> None:
    argv = worker_killer(tmp_path)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    (run,) = (tmp_path / "r").glob("faults/faults-*")
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        "packproof: error: a worker process died (killed by signal 9, SIGKILL, as the "
        f"out-of-memory killer does): {run} is left INCOMPLETE with its finished cells; "
        "rerun it with --resume to continue it"
    ]
    assert (run / "INCOMPLETE").exists() and not (run.parent / "latest").exists()
    assert not (tmp_path / "kill").exists()  # it struck
    resumed = subprocess.run([*argv, "--resume"], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert not (run / "INCOMPLETE").exists() and (run.parent / "latest" / "metrics.csv").exists()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find the workers")
def test_ctrl_c_is_one_line_exit_130_and_a_resumable_run(tmp_path: Path) -> None:
    argv, out = setup(tmp_path)
    # A shell's background job (CI's, say) starts with SIGINT ignored, and the eval
    # would inherit that; a terminal's Ctrl-C reaches a process that handles it.
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    started(proc, out)
    below = descendants(proc.pid)
    # As a terminal's Ctrl-C does: SIGINT to the whole foreground process group
    # would reach the test too, so each process of the eval gets its own.
    for pid in [proc.pid, *below]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    text = err.decode()
    assert proc.returncode == 130, text
    assert "Traceback" not in text
    assert text.strip().splitlines()[-1].startswith("packproof: interrupted")
    assert sum("packproof:" in line for line in text.splitlines()) == 1
    assert wait_gone(below) == set()
    (tmp_path / "slow").rmdir()
    done = subprocess.run([*argv, "--resume"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr


def test_a_full_disk_leaves_an_incomplete_run_and_latest_untouched(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        config = {
            "schema": "packproof.eval.v1",
            "name": "full",
            "suites": [str(ROOT / "scenarios/compiled/conversations.jsonl")],
            "strategies": ["chronological", "bm25"],
            "budgets": ["scenario", 16],
            "bootstrap": {"resamples": 100},
        }
        (tmp_path / "c.yaml").write_text(json.dumps(config))
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "packproof",
                "eval",
                "--config",
                str(tmp_path / "c.yaml"),
                "--out",
                str(disk),
                "--jobs",
                "1",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 2, run.stderr
        errors = [line for line in run.stderr.splitlines() if line.startswith("packproof:")]
        assert len(errors) == 1 and "No space left on device" in errors[0], run.stderr
        assert "Traceback" not in run.stderr
        assert not list(disk.glob("*/latest"))
        assert not [p for p in disk.rglob("*") if p.name.endswith(".tmp")]
        (folder,) = disk.glob("full/full-*")
        assert (folder / "INCOMPLETE").exists()
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)
