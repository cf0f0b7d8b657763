"""A packer is ended with everything it started: a helper it forks, holding its
stdout, and a daemon that left its process group (``setsid``) go with it on a
timeout, a crash, a desync and a parse error, when the eval exits, and when the
eval or its worker is killed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from packproof.cli import main
from packproof.evals.run.external import ExternalPacker
from packproof.evals.run.process import PackerProcess
from tests.evals.run.test_faults import group_alive, wait_groups_gone
from tests.paths import ROOT

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find groups")

# A packer that forks a helper inheriting its stdout (as a shell or a launcher in
# front of the real program does) and a daemon (fork, setsid, fork: a process
# group and a session of its own, its parent gone at once), marks the daemon's
# group once it runs, then its own group as started.
FORKER = """\
import json, os, subprocess, sys, time
from packproof import pack
marks, mode = sys.argv[1], sys.argv[2]
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
leader = os.fork()
if leader == 0:
    os.setsid()
    if os.fork() == 0:
        open(os.path.join(marks, f"daemon-{os.getpgrp()}"), "w").close()
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)"])
    os._exit(0)
os.waitpid(leader, 0)
while not os.path.exists(os.path.join(marks, f"daemon-{leader}")):
    time.sleep(0.01)
open(os.path.join(marks, f"group-{os.getpgrp()}"), "w").close()
for line in sys.stdin:
    request = json.loads(line)
    rid = request.pop("request_id")
    if mode == "hang":
        time.sleep(600)
    if mode == "crash":
        sys.exit(3)
    if mode == "desync":
        rid = "another"
    if mode == "parse":  # a line before the answer: not the answer
        print("", flush=True)
    if mode == "slow" and os.path.exists(os.path.join(marks, "slow")):
        time.sleep(1.0)
    print(json.dumps({**pack(request).to_dict(), "request_id": rid}), flush=True)
"""
REQUEST = {"items": [{"id": "a", "text": "deploy"}], "budget_tokens": 8, "prompt": "deploy"}


def forker(tmp: Path) -> tuple[Path, Path]:
    """The packer's script, and the folder where each of its groups is marked."""
    script = tmp / "forker.py"
    script.write_text(FORKER)
    marks = tmp / "marks"
    marks.mkdir()
    return script, marks


def packers(marks: Path) -> set[int]:
    """The packers' own process groups."""
    return {int(p.name.split("-")[1]) for p in marks.glob("group-*")}


def groups(marks: Path) -> set[int]:
    """Every group marked: the packers' and their daemons'."""
    return packers(marks) | {int(p.name.split("-")[1]) for p in marks.glob("daemon-*")}


def wait_marked(marks: Path, count: int = 1, timeout: float = 60) -> set[int]:
    """The groups marked (the daemons' too) once ``count`` packers run at once."""
    deadline = time.monotonic() + timeout
    while len({g for g in packers(marks) if group_alive(g)}) < count:
        assert time.monotonic() < deadline, "the packers never started"
        time.sleep(0.05)
    return groups(marks)


@pytest.mark.parametrize(
    ("mode", "timeout", "failure"),
    [
        ("hang", 2.0, "TIMEOUT"),
        ("crash", 60.0, "CRASH"),
        ("desync", 60.0, "DESYNC"),
        ("parse", 60.0, "PARSE_ERROR"),
    ],
)
def test_a_failed_call_ends_the_packers_whole_group(
    tmp_path: Path, mode: str, timeout: float, failure: str
) -> None:
    script, marks = forker(tmp_path)
    packer = ExternalPacker([sys.executable, str(script), str(marks), mode], timeout)
    packer.start()
    try:
        started = wait_marked(marks)  # the helper runs before the request is sent
        assert len(started) == 2  # the packer's group and its daemon's
        assert packer.call(dict(REQUEST))[0] == failure
        assert wait_groups_gone(started) == set()
    finally:
        packer.close()


@pytest.mark.parametrize(("script", "code"), [("exit 3", 3), ("kill -9 $$", -9)])
def test_a_packers_keeper_exits_as_the_packer_did(script: str, code: int) -> None:
    """The process packproof holds is the packer's keeper: its exit code, or the
    signal that killed it, is the packer's (what a CRASH says)."""
    proc = PackerProcess.run(["sh", "-c", script], "--packer")
    try:
        assert proc.kept == sys.platform.startswith("linux")
        assert proc.wait(120) == code
    finally:
        proc.end()


def config(tmp: Path, script: Path, marks: Path, mode: str) -> Path:
    command = f"cmd:{sys.executable} {script} {marks} {mode}"
    body = {
        "schema": "packproof.eval.v1",
        "name": "groups",
        "suites": [str(ROOT / "scenarios/compiled/conversations.jsonl")],
        "strategies": ["chronological", {"name": "mine", "packer": command}],
        "budgets": ["scenario", 16, 32],
        "bootstrap": {"resamples": 100},
    }
    path = tmp / "c.yaml"
    path.write_text(json.dumps(body))
    return path


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_an_eval_that_exits_leaves_no_group_of_its_packers(tmp_path: Path, executor: str) -> None:
    script, marks = forker(tmp_path)
    cfg = config(tmp_path, script, marks, "fast")
    argv = ["eval", "--config", str(cfg), "--out", str(tmp_path / "r"), "-q"]
    if executor == "serial":  # in this process, which goes on: the run's end ends them
        assert main([*argv, "--executor", "serial"]) == 0
    else:
        done = subprocess.run(
            [sys.executable, "-m", "packproof", *argv, "--executor", "process", "--jobs", "2"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
    assert groups(marks), "the packer never ran"
    assert wait_groups_gone(groups(marks)) == set()


@pytest.mark.parametrize(
    ("executor", "sig"),
    [
        ("process", signal.SIGKILL),
        ("process", signal.SIGTERM),
        ("serial", signal.SIGKILL),  # the eval's own packer: its keeper ends all below it
    ],
    ids=["kill-9", "sigterm", "serial-kill-9"],
)
def test_a_killed_eval_leaves_no_group_of_its_workers_packers(
    tmp_path: Path, executor: str, sig: signal.Signals
) -> None:
    script, marks = forker(tmp_path)
    (marks / "slow").mkdir()  # the packers answer slowly: the eval is running when struck
    cfg = config(tmp_path, script, marks, "slow")
    argv = [sys.executable, "-m", "packproof", "eval", "--config", str(cfg)]
    argv += ["--out", str(tmp_path / "r"), "--executor", executor, "--jobs", "2"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # one packer per worker (one in all, serial), answering
        wait_marked(marks, count=2 if executor == "process" else 1, timeout=120)

        proc.send_signal(sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert wait_groups_gone(groups(marks)) == set()
