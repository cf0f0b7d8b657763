"""matplotlib where its home folders cannot be written: ``packproof eval`` run
as a user whose home is read-only prints packproof's output and nothing of
matplotlib's, and draws its plots; :func:`configure` keeps a folder the user
set and refuses a folder under its name that is not only this user's."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from packproof.evals.report.plots import configdir

SCENARIOS = """\
schema: packproof.scenarios.v1
scenarios:
  - id: vault
    why: The code is said once; a pack that keeps it holds the answer.
    request:
      budget_tokens: 20
      prompt: what is the vault code
      items:
        - [m1, user, the vault code is 4417]
        - [m2, assistant, noted]
    relevant: [m1]
"""


def read_only_home(tmp: Path) -> Path:
    """A home folder nobody can write matplotlib's folders in: read-only, and
    (for root, whom permissions do not stop) ``.config`` and ``.cache`` are files."""
    home = tmp / "home"
    home.mkdir()
    for name in (".config", ".cache"):
        (home / name).write_text("")
    home.chmod(0o555)
    return home


def test_eval_with_a_read_only_home_is_quiet_and_draws_its_plots(tmp_path: Path) -> None:
    work, temp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    temp.mkdir()
    (work / "mine.yaml").write_text(SCENARIOS, "utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")
    }
    env.update(HOME=str(read_only_home(tmp_path)), TMPDIR=str(temp))
    run = subprocess.run(
        [sys.executable, "-m", "packproof", "eval", "mine.yaml", "--quiet", "--jobs", "1"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""  # matplotlib said nothing
    assert run.stdout.startswith("eval starter-")
    (latest,) = (work / "reports" / "starter").glob("starter-*")
    assert (latest / "recall_vs_budget.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    # matplotlib's folder: private to this user, kept for the next run's font cache
    (folder,) = temp.glob("packproof-matplotlib-*")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert list(folder.glob("fontlist-*.json"))


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A process that has not imported matplotlib, with a read-only home and its
    own temporary folder."""
    monkeypatch.delitem(sys.modules, "matplotlib", raising=False)
    for name in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, "")  # so that what configure() sets is undone too
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(read_only_home(tmp_path)))
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return temp


def test_an_unwritable_home_gets_a_private_folder_kept_between_runs(fresh: Path) -> None:
    configdir.configure()
    folder = Path(os.environ["MPLCONFIGDIR"])
    assert folder.parent == fresh and stat.S_IMODE(folder.stat().st_mode) == 0o700
    os.environ.pop("MPLCONFIGDIR")
    configdir.configure()
    assert os.environ["MPLCONFIGDIR"] == str(folder)  # the same one: its font cache is kept


def test_a_folder_under_that_name_open_to_others_is_not_used(fresh: Path) -> None:
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    planted = fresh / f"packproof-matplotlib-{uid}"
    planted.mkdir()
    planted.chmod(0o777)
    configdir.configure()
    folder = Path(os.environ["MPLCONFIGDIR"])
    assert folder != planted and folder.parent == fresh
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_a_folder_the_user_set_or_a_writable_home_is_left_alone(
    fresh: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "mine"))
    configdir.configure()
    assert os.environ["MPLCONFIGDIR"] == str(tmp_path / "mine")
    monkeypatch.delenv("MPLCONFIGDIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    configdir.configure()
    assert "MPLCONFIGDIR" not in os.environ
    assert (tmp_path / "config" / "matplotlib").is_dir()
