"""Writing outputs: a target is checked before anything is written (its kind,
its folder, never an input, by file identity, never another target); several
files are written all or none; an append is whole or not at all."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

from packproof.packer.errors import InputError
from packproof.packer.files import Input, Target, append_file, check_targets, write_files


def files_under(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_a_link_to_an_input_is_that_input_whatever_its_name(tmp_path: Path) -> None:
    cells = tmp_path / "run" / "metrics.csv.gz"
    cells.parent.mkdir()
    cells.write_bytes(b"cells")
    (tmp_path / "soft.md").symlink_to(cells)
    os.link(cells, tmp_path / "hard.md")
    for name in ("soft.md", "hard.md", "run/../run/metrics.csv.gz"):
        with pytest.raises(InputError, match="is the baseline's cells") as caught:
            check_targets([tmp_path / name], [Input(cells, "the baseline's cells")])
        assert str(caught.value).startswith(str(tmp_path / name))
    check_targets([tmp_path / "other.md"], [Input(cells, "the baseline's cells")])  # no error


def test_two_targets_that_are_one_file_are_refused_even_before_either_exists(
    tmp_path: Path,
) -> None:
    job = Target(tmp_path / "job.md", "append", "GITHUB_STEP_SUMMARY=job.md")
    with pytest.raises(InputError, match=r"is also 'GITHUB_STEP_SUMMARY=job\.md'"):
        check_targets([job, tmp_path / "sub" / ".." / "job.md"])
    (tmp_path / "job.md").write_text("earlier\n")
    (tmp_path / "link.md").symlink_to(tmp_path / "job.md")
    with pytest.raises(InputError, match="which this command writes too"):
        check_targets([job, tmp_path / "link.md"])


@pytest.mark.parametrize(
    ("make", "mode", "says"),
    [
        (lambda t: (t / "afile").write_text("x"), "replace", "Not a directory: "),
        (lambda t: None, "append", "cannot append: no folder "),
        (lambda t: (t / "afile").mkdir(), "append", "cannot append: no folder "),
    ],
    ids=["under-a-file", "append-folder-missing", "append-folder-not-made"],
)
def test_a_target_whose_folder_cannot_hold_it_is_refused(
    make: Any, mode: Any, says: str, tmp_path: Path
) -> None:
    make(tmp_path)
    with pytest.raises(InputError, match=says):
        check_targets([Target(tmp_path / "afile" / "x" / "out.md", mode)])
    assert not (tmp_path / "afile" / "x").exists()


def test_a_failure_midway_puts_back_what_was_replaced_and_removes_what_was_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "old.txt").write_text("before\n")
    before = files_under(tmp_path)
    real = os.replace

    def full_disk(src: Any, dst: Any) -> None:
        if Path(dst).name == "last.txt":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(src, dst)

    monkeypatch.setattr(os, "replace", full_disk)
    contents = {
        tmp_path / "old.txt": "after\n",
        tmp_path / "new" / "deep" / "made.txt": "made\n",
        tmp_path / "last.txt": "never\n",
    }
    with pytest.raises(InputError, match=r"last\.txt: cannot write: No space left on device"):
        write_files(contents)
    assert files_under(tmp_path) == before
    assert not (tmp_path / "new").exists()  # the folders it made, gone too


def test_an_interrupt_midway_leaves_nothing_of_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.replace

    def interrupted(src: Any, dst: Any) -> None:
        if Path(dst).name == "b.txt":
            raise KeyboardInterrupt
        real(src, dst)

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_files({tmp_path / "a.txt": "a", tmp_path / "b.txt": "b"})
    assert list(tmp_path.iterdir()) == []


def test_create_writes_nothing_over_a_file_that_appears_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.link

    def racing(src: Any, dst: Any) -> None:
        Path(dst).write_text("theirs\n")
        real(src, dst)

    monkeypatch.setattr(os, "link", racing)
    with pytest.raises(InputError, match="appeared while writing"):
        write_files({tmp_path / "a.yaml": "ours\n"}, mode="create")
    assert files_under(tmp_path) == {"a.yaml": b"theirs\n"}


def test_an_append_is_separated_from_what_the_file_held_and_makes_the_file(
    tmp_path: Path,
) -> None:
    job = tmp_path / "job.md"
    append_file(job, "first\n", separator="\n")
    append_file(job, "second\n", separator="\n")
    assert job.read_text() == "first\n\nsecond\n"


def test_an_append_that_fails_midway_is_cut_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = tmp_path / "job.md"
    job.write_text("earlier\n")
    real = os.write

    def short_then_full(fd: int, data: Any) -> int:
        if len(data) > 3:
            return real(fd, bytes(data[:3]))  # part of it, then the disk is full
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", short_then_full)
    with pytest.raises(InputError, match="cannot append: No space left on device"):
        append_file(job, "the verdict\n", separator="\n", name="GITHUB_STEP_SUMMARY=job.md")
    assert job.read_text() == "earlier\n"
