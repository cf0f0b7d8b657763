"""Output targets, every class: a command never writes over what it reads (its
inputs, the defaults it falls back to, the files it derives from them, a link to
any of them) nor into a target it cannot write, and it says so before any work
and before its first byte. One line, exit 2, every file as it was (the
baseline's metrics.csv.gz and an earlier step's job summary among them), no new
file, no temporary one. A table, one row per class."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from packproof.cli import main
from tests.reliability.helpers import assert_one_line_exit_2, write

EARLIER_STEP = "## an earlier step\n"


def starter_project(folder: Path) -> Path:
    """A starter project in ``folder`` with a recorded baseline (reports/baseline/:
    summary.json and metrics.csv.gz) and the run it recorded as the config's latest."""
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(io.StringIO()):
        assert main(["init", str(folder)]) == 0
        patch.chdir(folder)
        assert main(["scenarios", "compile"]) == 0
        assert main(["baseline", "--jobs", "1", "--quiet"]) == 0
    return folder


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return starter_project(tmp_path_factory.mktemp("project") / "p")


@dataclass
class Here:
    """A row's working folder, a copy of the project, and the environment."""

    tmp: Path
    monkeypatch: pytest.MonkeyPatch

    def job_summary(self, path: str | Path = "step-summary.md") -> None:
        """GITHUB_STEP_SUMMARY, as GitHub Actions sets it for every step."""
        self.monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(path))

    @property
    def run(self) -> Path:
        """The run the baseline recorded (the latest of the config, the default current)."""
        return (self.tmp / "reports/starter/latest").resolve()


def link(target: str | Path, name: str | Path, *, hard: bool = False) -> str:
    Path(name).parent.mkdir(parents=True, exist_ok=True)
    (os.link if hard else os.symlink)(Path(target).resolve(), name)
    return str(name)


def fifo(name: str) -> str:
    os.mkfifo(name)
    return name


def dangling(name: str) -> str:
    """A symbolic link at ``name`` to a file that does not exist."""
    Path(name).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(Path("nowhere.yaml").resolve(), name)
    return name


# (id, argv builder run in the project's copy, what the one line says)
CASES: list[tuple[str, Callable[[Here], list[str]], str]] = [
    # the gate: --markdown, and GITHUB_STEP_SUMMARY (set to an earlier step's file)
    (
        "markdown-is-the-default-current-summary",
        lambda h: ["gate", "--markdown", "reports/starter/latest/summary.json"],
        "is the current run's summary",
    ),
    (
        "markdown-is-the-default-baseline",
        lambda h: ["gate", "--markdown", "reports/baseline/summary.json"],
        "is the baseline's summary",
    ),
    (
        "markdown-is-the-baselines-cells-significance-reads",
        lambda h: [
            "gate",
            "--significance",
            "0.05",
            "--markdown",
            "reports/baseline/metrics.csv.gz",
        ],
        "is the baseline's cells",
    ),
    (
        "markdown-is-the-current-runs-cells",
        lambda h: ["gate", "--markdown", str(h.run / "metrics.csv")],
        "is the current run's cells",
    ),
    (
        "markdown-is-the-default-gates-file",
        lambda h: ["gate", "--markdown", "gates.yaml"],
        "is the gates file",
    ),
    (
        "markdown-is-the-given-gates-file",
        lambda h: ["gate", "--gates", "gates.yaml", "--markdown", "./gates.yaml"],
        "is the gates file",
    ),
    (
        "markdown-is-a-symlink-to-the-baseline",
        lambda h: ["gate", "--markdown", link("reports/baseline/summary.json", "gate.md")],
        "is the baseline's summary",
    ),
    (
        "markdown-is-a-link-to-a-missing-file",  # written through, it would make one there
        lambda h: ["gate", "--markdown", dangling("gate.md")],
        "gate.md: is a symbolic link to",
    ),
    (
        "init-where-the-config-is-a-link-to-a-missing-file",  # F20: not "appeared"
        lambda h: ["init", str(Path(dangling("p/packproof.yaml")).parent)],
        "p/packproof.yaml: already exists (a symbolic link to",
    ),
    (
        "markdown-is-a-hard-link-to-the-baselines-cells",
        lambda h: [
            "gate",
            "--markdown",
            link("reports/baseline/metrics.csv.gz", "gate.md", hard=True),
        ],
        "is the baseline's cells",
    ),
    (
        "markdown-is-the-job-summary",
        lambda h: ["gate", "--markdown", "step-summary.md"],
        "which this command writes too",
    ),
    (
        "markdown-is-the-job-summary-not-yet-made",
        lambda h: (
            Path("step-summary.md").unlink(),
            h.job_summary("new-summary.md"),
            ["gate", "--markdown", "new-summary.md"],
        )[-1],
        "which this command writes too",
    ),
    (
        "markdown-under-a-file",
        lambda h: ["gate", "--markdown", str(write(Path("afile"), "x") / "gate.md")],
        "Not a directory",
    ),
    (
        "markdown-is-a-fifo",
        lambda h: ["gate", "--markdown", fifo("pipe")],
        "not a regular file",
    ),
    (
        "job-summary-is-the-baseline",
        lambda h: (h.job_summary("reports/baseline/summary.json"), ["gate"])[-1],
        "GITHUB_STEP_SUMMARY=reports/baseline/summary.json: is the baseline's summary",
    ),
    (
        "job-summary-is-a-symlink-to-the-current-cells",
        lambda h: (
            h.job_summary(link(h.run / "metrics.csv", "job.md")),
            ["gate", "--markdown", "gate.md"],
        )[-1],
        "is the current run's cells",
    ),
    (
        "job-summary-folder-missing-and-markdown-not-written",
        lambda h: (h.job_summary("nowhere/summary.md"), ["gate", "--markdown", "gate.md"])[-1],
        "GITHUB_STEP_SUMMARY=nowhere/summary.md: cannot append: no folder 'nowhere'",
    ),
    (
        "job-summary-is-a-directory-and-markdown-not-written",
        lambda h: (h.job_summary("reports"), ["gate", "--markdown", "gate.md"])[-1],
        "GITHUB_STEP_SUMMARY=reports: is a directory",
    ),
    (
        "job-summary-is-a-fifo",
        lambda h: (h.job_summary(fifo("pipe")), ["gate", "--markdown", "gate.md"])[-1],
        "GITHUB_STEP_SUMMARY=pipe: not a regular file",
    ),
    # compare: both runs' summary, cells and results; its three files all or none
    (
        "compare-out-holds-a-link-to-run-as-summary",
        lambda h: [
            "compare",
            "reports/baseline",
            "reports/starter/latest",
            "--out",
            str(Path(link("reports/baseline/summary.json", "cmp/compare.json")).parent),
        ],
        "is run A's summary",
    ),
    (
        "compare-out-holds-a-hard-link-to-run-bs-results",
        lambda h: [
            "compare",
            "reports/baseline",
            "reports/starter/latest",
            "--out",
            str(Path(link(h.run / "results.jsonl.gz", "cmp/compare.md", hard=True)).parent),
        ],
        "is run B's results",
    ),
    (
        "compare-out-under-a-file",
        lambda h: [
            "compare",
            "reports/baseline",
            "reports/starter/latest",
            "--out",
            str(write(Path("afile"), "x") / "cmp"),
        ],
        "Not a directory",
    ),
    # baseline: the run it records
    (
        "baseline-out-is-the-run-it-records",
        lambda h: ["baseline", "--from", "reports/starter/latest", "--out", str(h.run)],
        "is the run's summary",
    ),
    (
        "baseline-out-holds-a-link-to-the-runs-cells",
        lambda h: [
            "baseline",
            "--from",
            "reports/starter/latest",
            "--out",
            str(Path(link(h.run / "metrics.csv", "b/metrics.csv.gz")).parent),
        ],
        "is the run's cells",
    ),
    # init: every target first; nothing written then
    (
        "init-over-an-existing-file",
        lambda h: ["init", str(write(Path("new/scenarios/example.yaml"), "mine\n").parents[1])],
        "already exists",
    ),
    (
        "init-where-a-folder-it-needs-is-a-file",
        lambda h: ["init", str(write(Path("new/scenarios"), "a file\n").parent)],
        "Not a directory",
    ),
    # one file out: pack -o, import -o, scenarios compile --out, tune --out
    (
        "pack-output-is-a-link-to-its-request",
        lambda h: [
            "pack",
            str(write(Path("req.json"), '{"items": [], "budget_tokens": 5}')),
            "-o",
            link("req.json", "out.json"),
        ],
        "is this command's input",
    ),
    (
        "import-output-is-a-hard-link-to-its-dataset",
        lambda h: [
            "import",
            "locomo",
            str(write(Path("locomo.json"), "[]")),
            "-o",
            link("locomo.json", "out.jsonl", hard=True),
        ],
        "is this command's input",
    ),
    (
        "import-openclaw-mem-output-is-a-link-to-its-cases",
        lambda h: [
            "import",
            "openclaw-mem",
            str(write(Path("cases.jsonl"), "{}\n")),
            "--out",
            link("cases.jsonl", "out.jsonl"),
        ],
        "is this command's input",
    ),
    (
        "compile-mirror-is-a-link-to-its-source",
        lambda h: [
            "scenarios",
            "compile",
            "scenarios/example.yaml",
            "--out",
            str(Path(link("scenarios/example.yaml", "mirrors/example.jsonl")).parent),
        ],
        "is this command's input",
    ),
    (
        "compile-two-sources-of-one-name-into-one-folder",
        lambda h: [
            "scenarios",
            "compile",
            "scenarios/example.yaml",
            str(Path(shutil.copytree("scenarios", "other")) / "example.yaml"),
            "--out",
            "mirrors",
        ],
        "which this command writes too",
    ),
    (
        "eval-out-is-a-file",
        lambda h: ["eval", "--jobs", "1", "--out", "packproof.yaml"],
        "packproof.yaml: not a folder (expected a folder to hold run folders, found a file)",
    ),
    (
        "eval-latest-is-a-users-file",
        lambda h: [
            "eval",
            "--jobs",
            "1",
            "--out",
            str(Path(write(h.tmp / "o/starter/latest", "notes\n")).parents[1]),
        ],
        "latest: not packproof's link to the newest run (expected a symbolic link, found a file)",
    ),
    (
        "eval-latest-is-a-users-folder",
        lambda h: [
            "eval",
            "--jobs",
            "1",
            "--out",
            str(Path(write(h.tmp / "o/starter/latest/notes.md", "notes\n")).parents[2]),
        ],
        "latest: not packproof's link to the newest run "
        "(expected a symbolic link, found a folder that is not a run)",
    ),
    (
        "tune-output-is-a-link-to-its-config",
        lambda h: [
            "tune",
            "--out",
            str(Path(link("packproof.yaml", "t/starter-hybrid/tune.md")).parents[1]),
        ],
        "is this command's input",
    ),
]


@pytest.mark.parametrize(("builder", "says"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_target_it_must_not_write_is_one_line_and_exit_2_before_any_work(
    builder: Callable[[Here], list[str]],
    says: str,
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    made: list[set[Path]] = []

    def build(tmp: Path) -> list[str]:
        shutil.copytree(project, tmp, symlinks=True, dirs_exist_ok=True)
        write(tmp / "step-summary.md", EARLIER_STEP)
        here = Here(tmp, monkeypatch)
        here.job_summary()
        argv = builder(here)
        made.append(set(tmp.rglob("*")))
        return argv

    assert_one_line_exit_2(build, says, tmp_path, monkeypatch, capsys)
    assert set(tmp_path.rglob("*")) == made[0], "a file was written"
    if (tmp_path / "step-summary.md").exists():
        assert (tmp_path / "step-summary.md").read_text("utf-8") == EARLIER_STEP


def test_a_replaced_output_keeps_its_mode_and_a_linked_one_stays_a_link(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An output written over keeps its permission bits (a private 0600 file is
    not made world-readable), and an output that is a symbolic link is written
    through: the file it points to gets the content, the link stays a link.
    Every command writes through packer/files.py, so one command shows both."""
    shutil.copytree(project, tmp_path / "p", symlinks=True)
    monkeypatch.chdir(tmp_path / "p")
    private = write(Path("gate.md"), "old\n")
    private.chmod(0o600)
    kept = write(Path("notes/real.md"), "old\n")
    os.symlink("notes/real.md", "linked.md")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["gate", "--markdown", "gate.md"]) == 0
        assert main(["gate", "--markdown", "linked.md"]) == 0
    assert private.stat().st_mode & 0o777 == 0o600 and "PASSED" in private.read_text("utf-8")
    assert Path("linked.md").is_symlink() and os.readlink("linked.md") == "notes/real.md"
    assert "PASSED" in kept.read_text("utf-8")
    assert not list(Path(".").rglob("*.tmp"))
