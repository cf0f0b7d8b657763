"""Writing outputs: atomically, only as regular files, never over an input.

Every file packproof writes goes through :func:`write_atomic`: through a temporary
file beside the target and a rename, so a failure (a full disk, an interrupt)
never leaves a half-written file or a stray temporary one. A target that is a
directory, a FIFO or a device (``/dev/null``) is refused rather than replaced by a
regular file, and so is a target that is one of the command's own inputs.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .errors import InputError

__all__ = ["check_target", "write_atomic"]


def check_target(path: Path, inputs: Iterable[Path] = ()) -> None:
    """Refuse, with one line, a target packproof must not write."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError("", f"cannot write: {exc.strerror}", source=str(path)) from None
    if stat.S_ISDIR(mode):
        raise InputError("", "is a directory; give a file to write", source=str(path))
    if not stat.S_ISREG(mode):
        raise InputError(
            "",
            "not a regular file; packproof writes regular files only (it would replace this one)",
            source=str(path),
        )
    for given in inputs:
        try:
            same = path.samefile(given)
        except OSError:
            continue
        if same:
            raise InputError(
                "", f"is this command's input {str(given)!r}; write elsewhere", source=str(path)
            )


def write_atomic(path: Path, content: str | bytes, *, inputs: Iterable[Path] = ()) -> None:
    """Write ``content`` (text as UTF-8) to ``path`` through a temporary file and a
    rename; errors are one line and leave no temporary file behind."""
    check_target(path, inputs)
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(content.encode("utf-8") if isinstance(content, str) else content)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 is for secrets; this is output
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise InputError("", f"cannot write: {exc.strerror}", source=str(path)) from None
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
