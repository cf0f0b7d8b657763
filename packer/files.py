"""Writing outputs: checked before any work, written whole, never over an input.

One rule for every command that writes a file:

- **Checked first** (:func:`check_targets`, before the command does its work and
  before its first byte is written): each target is a regular file or absent; the
  folder it goes in is a folder (or can be made, for a file packproof makes folders
  for); it is none of the files the command reads, compared by file identity
  (device and inode), so a symbolic or hard link to an input is that input; and no
  two targets are one file. A directory, a FIFO or a device (``/dev/null``) is
  refused rather than replaced by a regular file.
- **Written whole** (:func:`write_files`, :func:`write_atomic`): each file through
  a temporary file beside it and a rename, so a failure (a full disk, an
  interrupt) never leaves a half-written file or a stray temporary one. A command
  that writes several files writes all of them or none: a failure puts back the
  files it replaced, and removes the files and folders it made.
- **Written as the user keeps it**: a replaced file keeps its permission bits (a
  0600 file stays 0600; a new one gets 0666 less the umask), and a target that
  is a symbolic link is written through: the file it points to is replaced
  (through a temporary file beside that file) and the link stays. A link to a
  missing file is refused (it would make a file wherever it points), and in
  ``create`` mode counts as a file that exists.
- **Appended in one write** (:func:`append_file`), for a file the environment
  names (GitHub's job summary): its folder must exist, and a failed write is cut
  back to the file's previous length.

What a command reads is the command's to say (its inputs, the defaults it falls
back to and the files it derives from them): paths, or :class:`Input` values
that also say what each is, so that a refusal names the input a target would
have replaced.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal, NamedTuple, NoReturn, TypeAlias

from .errors import InputError

__all__ = [
    "Input",
    "Inputs",
    "Target",
    "append_file",
    "check_target",
    "check_targets",
    "write_atomic",
    "write_files",
]

Mode: TypeAlias = Literal["replace", "create", "append"]


class Input(NamedTuple):
    """A file a command reads, and so never writes; ``what`` names it in errors,
    e.g. ``Input(path, "the baseline's cells")``."""

    path: Path
    what: str = "this command's input"


# the files a command reads: paths (each "this command's input") or Input values
Inputs: TypeAlias = Iterable[Path | Input]
# a file system without hard links: create mode claims the name instead (_place)
_NO_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK}


class Target(NamedTuple):
    """A file a command writes. ``mode``: ``replace`` it (its folders are made),
    ``create`` it (never over a file, even one that appears meanwhile) or
    ``append`` to it (its folder must exist). ``name``: how errors name it
    (default: the path), e.g. ``GITHUB_STEP_SUMMARY=...``."""

    path: Path
    mode: Mode = "replace"
    name: str | None = None

    @property
    def source(self) -> str:
        return self.name or str(self.path)


def _refuse(target: Target, message: str) -> NoReturn:
    raise InputError("", message, source=target.source)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _check_folder(target: Target) -> None:
    """The folder ``target`` goes in: the nearest existing one must be a folder
    this process may write in; an appended file's own folder must exist."""
    parent = target.path.parent
    for folder in (parent,) if target.mode == "append" else (parent, *parent.parents):
        try:
            mode = folder.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            if target.mode == "append":
                _refuse(target, f"cannot append: no folder {str(folder)!r} (it is not made)")
            continue
        except OSError as exc:
            _refuse(target, f"cannot write: {exc.strerror}: {str(folder)!r}")
        if not stat.S_ISDIR(mode):
            _refuse(target, f"cannot write: {os.strerror(errno.ENOTDIR)}: {str(folder)!r}")
        if not os.access(folder, os.W_OK | os.X_OK):
            _refuse(target, f"cannot write: {os.strerror(errno.EACCES)}: {str(folder)!r}")
        return


def _check_one(target: Target) -> os.stat_result | None:
    """``target``'s kind and folder (the folder of the file a symbolic link points
    to: it is written there); its status when it exists."""
    try:
        st = target.path.stat()
    except (FileNotFoundError, NotADirectoryError):
        st = None
        if target.path.is_symlink():  # a link to nothing: it is there, yet no file is
            link = os.readlink(target.path)
            if target.mode == "create":
                _refuse(
                    target,
                    f"already exists (a symbolic link to {link!r}, which is missing); "
                    "packproof writes nothing over a file here",
                )
            _refuse(
                target,
                f"is a symbolic link to {link!r}, which is missing: packproof writes through "
                "a link only to a file that exists; remove the link or write elsewhere",
            )
    except OSError as exc:
        _refuse(target, f"cannot write: {exc.strerror}")
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            _refuse(target, "is a directory; give a file to write")
        if not stat.S_ISREG(st.st_mode):
            _refuse(
                target,
                "not a regular file; packproof writes regular files only "
                "(it would replace this one)",
            )
        if target.mode == "create":
            _refuse(target, "already exists; packproof writes nothing over a file here")
        if target.mode == "append" and not os.access(target.path, os.W_OK):
            _refuse(target, f"cannot append: {os.strerror(errno.EACCES)}")
    _check_folder(target._replace(path=_through_link(target.path)))
    return st


def _through_link(path: Path) -> Path:
    """Where ``path``'s content is written: the file it points to when it is a
    symbolic link (so the link stays a link), else ``path`` itself."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def check_targets(targets: Iterable[Path | Target], inputs: Inputs = ()) -> None:
    """Refuse, with one line, the first target packproof must not write: see the
    module docstring. ``inputs``: every file the command reads."""
    read: dict[tuple[int, int], Input] = {}
    for item in inputs:
        source = item if isinstance(item, Input) else Input(item)
        ident = _identity(source.path)
        if ident is not None:
            read.setdefault(ident, source)  # the first naming of a file names it
    seen: dict[object, Target] = {}
    for given in targets:
        target = given if isinstance(given, Target) else Target(given)
        st = _check_one(target)
        key: object = os.path.realpath(target.path)  # two new files: by where they go
        if st is not None:
            key = (st.st_dev, st.st_ino)
            if key in read:
                path, what = read[key]
                named = "" if path == target.path else f" {str(path)!r}"
                _refuse(target, f"is {what}{named}; write elsewhere")
        if key in seen:
            _refuse(
                target,
                f"is also {seen[key].source!r}, which this command writes too; write elsewhere",
            )
        seen[key] = target


def check_target(
    path: Path, inputs: Inputs = (), *, mode: Mode = "replace", name: str | None = None
) -> None:
    """:func:`check_targets` for one target."""
    check_targets([Target(path, mode, name)], inputs)


def _make_folders(folder: Path, made: list[Path]) -> None:
    """Make ``folder`` and its missing parents, noting each one made in ``made``."""
    missing = []
    for f in (folder, *folder.parents):
        if f.is_dir():
            break
        missing.append(f)
    for f in reversed(missing):
        try:
            f.mkdir()
        except FileExistsError:
            continue  # made meanwhile, by someone else: not ours to remove
        made.append(f)


def _stage(path: Path, content: str | bytes) -> str:
    """``content`` in a temporary file beside ``path``; its name."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content.encode("utf-8") if isinstance(content, str) else content)
        try:  # a file replaced keeps its permissions (a 0600 file stays 0600)
            mode = stat.S_IMODE(os.stat(path).st_mode) & 0o777
        except (FileNotFoundError, NotADirectoryError):
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask  # mkstemp's 0600 is for secrets; new output is not
        os.chmod(tmp, mode)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def _place(tmp: str, path: Path, mode: Mode) -> None:
    """Put the staged ``tmp`` at ``path``: a rename, or (``create``) a hard link,
    which fails on a file that appeared since the check instead of replacing it."""
    if mode == "replace":
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # claim the name
        try:
            os.replace(tmp, path)
        except BaseException:
            path.unlink(missing_ok=True)  # our empty claim, not a user's file
            raise
    else:
        os.unlink(tmp)


def _undo(placed: list[tuple[Path, bytes | None]], staged: Iterable[str], made: list[Path]) -> None:
    """Put back what ``placed`` replaced (``None``: remove what it made), drop the
    temporary files and the folders made. Best effort: the first error is the one
    the user is told."""
    for path, before in reversed(placed):
        with contextlib.suppress(OSError):
            if before is None:
                path.unlink(missing_ok=True)
            else:
                os.replace(_stage(path, before), path)
    for tmp in staged:
        Path(tmp).unlink(missing_ok=True)
    for folder in reversed(made):
        with contextlib.suppress(OSError):
            folder.rmdir()


def write_files(
    contents: Mapping[Path, str | bytes],
    *,
    inputs: Inputs = (),
    mode: Literal["replace", "create"] = "replace",
) -> list[Path]:
    """Write every file of ``contents`` (text as UTF-8), all or none: checked
    first (:func:`check_targets`), each staged in a temporary file beside it, then
    each put in place; a failure undoes what was done and is one line. ``create``:
    never over an existing file. Returns the paths written, in order."""
    check_targets([Target(p, mode) for p in contents], inputs)
    made: list[Path] = []
    staged: dict[Path, str] = {}
    placed: list[tuple[Path, bytes | None]] = []
    at: Path | None = None
    # where each is written: through a symbolic link, to the file it points to
    real = {at: _through_link(at) if mode == "replace" else at for at in contents}
    try:
        for at, content in contents.items():
            _make_folders(real[at].parent, made)
            staged[at] = _stage(real[at], content)
        for at in list(staged):
            # what a replaced file held, to put back should a later one fail
            # (a single file has no later one)
            keep = mode == "replace" and len(contents) > 1 and real[at].is_file()
            before = real[at].read_bytes() if keep else None
            _place(staged[at], real[at], mode)
            del staged[at]
            placed.append((real[at], before))
    except BaseException as exc:
        _undo(placed, staged.values(), made)
        where = str(at) if at is not None else ""
        if isinstance(exc, FileExistsError):
            raise InputError(
                "", "appeared while writing; packproof wrote nothing over it", source=where
            ) from None
        if isinstance(exc, OSError):
            raise InputError("", f"cannot write: {exc.strerror}", source=where) from None
        raise
    return list(contents)


def write_atomic(
    path: Path,
    content: str | bytes,
    *,
    inputs: Inputs = (),
    mode: Literal["replace", "create"] = "replace",
) -> None:
    """Write one file through a temporary file and a rename: :func:`write_files`."""
    write_files({path: content}, inputs=inputs, mode=mode)


def append_file(
    path: Path,
    text: str,
    *,
    separator: str = "",
    inputs: Inputs = (),
    name: str | None = None,
) -> None:
    """Append ``text`` (UTF-8) to ``path`` in one write, ``separator`` first when
    the file already holds something; the file is made when absent, not its
    folder. A failed write is cut back to the file's previous length."""
    target = Target(path, "append", name)
    check_targets([target], inputs)
    try:
        # O_NONBLOCK: a FIFO put there since the check fails instead of waiting
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o666)
    except OSError as exc:
        _refuse(target, f"cannot append: {exc.strerror}")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            _refuse(target, "not a regular file; packproof appends to regular files only")
        data = ((separator if st.st_size else "") + text).encode("utf-8")
        try:
            while data:
                data = data[os.write(fd, data) :]
        except BaseException:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, st.st_size)  # the file as it was: no part of the text
            raise
    except OSError as exc:
        _refuse(target, f"cannot append: {exc.strerror}")
    finally:
        os.close(fd)
