"""Where matplotlib keeps its config and font cache, settled before it is imported.

matplotlib uses ``$MPLCONFIGDIR``, else ``$XDG_CONFIG_HOME/matplotlib`` and
``$XDG_CACHE_HOME/matplotlib`` (``~/.config``, ``~/.cache``) on Linux and
``~/.matplotlib`` elsewhere (``matplotlib._get_config_or_cache_dir``). Where that
folder cannot be made or written (a CI user or a container whose home is
read-only, ``HOME=/nonexistent``), importing matplotlib logs two warnings to
stderr, above packproof's own output, makes a temporary folder and builds its
font cache in it again on every run.

:func:`ready` avoids both: when the user has not set ``MPLCONFIGDIR`` and
matplotlib's own folders are not writable, it points ``MPLCONFIGDIR`` at a
private folder of this user's in the temporary directory, kept between runs so
the font cache is built once; then it imports matplotlib with its logger quieted
to errors, since the font cache's first build logs a warning when it takes more
than a few seconds (``matplotlib.font_manager.FontManager``).
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

__all__ = ["configure", "ready"]


def _writable(folder: Path) -> bool:
    """What matplotlib checks of its folder: it can be made, and written to."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return folder.is_dir() and os.access(folder, os.W_OK)


def _defaults() -> list[Path]:
    """The folders matplotlib uses without ``MPLCONFIGDIR`` (RuntimeError: no home)."""
    home = Path.home()
    if sys.platform.startswith(("linux", "freebsd")):
        config = os.environ.get("XDG_CONFIG_HOME") or home / ".config"
        cache = os.environ.get("XDG_CACHE_HOME") or home / ".cache"
        return [Path(config) / "matplotlib", Path(cache) / "matplotlib"]
    return [home / ".matplotlib"]


def _private() -> Path | None:
    """A folder of this user's alone in the temporary directory: the same one
    every run, or a new one (removed at exit) when that name is not a folder
    only this user can use; None when the temporary directory is not writable."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    folder = Path(tempfile.gettempdir()) / f"packproof-matplotlib-{'user' if uid is None else uid}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        found = folder.lstat()  # a symlink planted under that name is not ours
        if (
            stat.S_ISDIR(found.st_mode)
            and (uid is None or found.st_uid == uid)
            and not found.st_mode & 0o077
            and os.access(folder, os.W_OK)
        ):
            return folder
        fresh = Path(tempfile.mkdtemp(prefix="packproof-matplotlib-"))
    except OSError:
        return None
    atexit.register(shutil.rmtree, fresh, ignore_errors=True)
    return fresh


def configure() -> None:
    """Set ``MPLCONFIGDIR`` to :func:`_private` when matplotlib's own folders are
    not writable. Nothing when the user set it (their choice, warnings and all)
    or matplotlib is already imported (it has chosen)."""
    if os.environ.get("MPLCONFIGDIR") or "matplotlib" in sys.modules:
        return
    try:
        if all(_writable(folder) for folder in _defaults()):
            return
    except RuntimeError:  # no home folder at all: Path.home() cannot tell one
        pass
    folder = _private()
    if folder is not None:
        os.environ["MPLCONFIGDIR"] = str(folder)


@functools.cache
def ready() -> None:
    """Configure, then import matplotlib's figure machinery (and so its font
    manager) without its warnings reaching stderr; once per process. Without
    matplotlib (the ``eval`` extra), nothing: the command that needs it says so."""
    configure()
    logger = logging.getLogger("matplotlib")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        import matplotlib.figure  # noqa: F401  (loads, or builds, the font cache)
    except ImportError:
        pass
    finally:
        logger.setLevel(level)
