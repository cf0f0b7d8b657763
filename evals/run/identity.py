"""What a run is: the inputs its results are a function of, hashed into its id.

A run's folder is ``<config name>-<first 8 hex digits of the sha256 of its
identity>``. The identity is the manifest (config, suites, specs, named
packers, budgets, counters, statistics settings, filters, ``--packer``) and
the fingerprints below, without the fields that only say where it ran: the
git commit, the Python version and the platform. packproof's figures do not
depend on those (the same inputs give the same cells on any machine; the
committed baseline is gated against runs on other machines), and a commit
says nothing of an uncommitted edit, which a fingerprint does.

Fingerprints (sha256 of the bytes, recorded in the manifest so that two
manifests show which input differed):

- ``packproof_sha256``: packproof's own library and harness (``packer/`` and
  ``evals/``: code and data), so an edited strategy or metric is a new run,
  committed or not;
- an external packer's ``files``: each argument of its command (or the value
  of ``--flag=VALUE``) that names an existing regular file inside the working
  folder (where the command runs) or the config's folder, and the module file
  of ``-m MODULE`` found in the working folder, keyed by the argument as
  written;
- a Python function packer's ``source_sha256``: its source
  (:func:`inspect.getsource`), or its code object where no source is
  available.

Not fingerprinted: files a packer reads or imports without naming them on its
command line, files outside those folders (an interpreter, a shared model),
and the helpers a function packer calls.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import CodeType
from typing import Any, Final

from packproof.packer.errors import InputError
from packproof.packer.jsonio import dumps

__all__ = ["PROVENANCE", "command_files", "function_sha256", "packproof_sha256", "run_id"]

# Manifest fields that say where a run ran, not what it ran: not in its id.
PROVENANCE: Final = ("git_commit", "python", "platform")
_MODULE: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_SHIPPED: Final = (".py", ".json", ".yaml", ".txt")  # what packproof's packages hold


def run_id(name: str, manifest: dict[str, Any]) -> str:
    """``<name>-<8 hex>``: the hash of ``manifest`` without :data:`PROVENANCE`."""
    identity = {k: v for k, v in manifest.items() if k not in PROVENANCE}
    return f"{name}-{hashlib.sha256(dumps(identity).encode('utf-8')).hexdigest()[:8]}"


def _file_sha256(path: Path, where: str) -> str:
    try:
        with path.open("rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError as exc:
        raise InputError(
            where, f"cannot read {str(path)!r} to fingerprint it: {exc.strerror}"
        ) from None


def _inside(path: Path, folders: Iterable[Path]) -> bool:
    return any(path.is_relative_to(folder) for folder in folders)


def _module_file(module: str, cwd: Path) -> tuple[str, Path] | None:
    """The file ``python -m module`` runs from the working folder (the first
    entry of its ``sys.path``), relative to it: ``pkg/mod.py`` or a package's
    ``pkg/mod/__main__.py``."""
    if not _MODULE.match(module):
        return None
    base = Path(*module.split("."))
    for rel in (base.with_suffix(".py"), base / "__main__.py"):
        if (cwd / rel).is_file():
            return rel.as_posix(), cwd / rel
    return None


def command_files(
    argv: Sequence[str], folders: Sequence[Path], where: str, cwd: Path | None = None
) -> dict[str, str]:
    """The sha256 of each file ``argv`` names (see the module docstring), by
    the argument as written; ``cwd`` (default: this process's) is where the
    command runs, and with ``folders`` where a named file must lie."""
    cwd = (cwd or Path.cwd()).resolve()
    roots = [cwd, *(f.resolve() for f in folders)]
    named: dict[str, Path] = {}
    for i, arg in enumerate(argv):
        if i and argv[i - 1] == "-m":
            found = _module_file(arg, cwd)
            if found is not None:
                named[found[0]] = found[1]
            continue
        value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if not value or (i == 0 and "/" not in value):
            continue  # the program, found on PATH: not a file of the project
        path = cwd / value
        if path.is_file() and _inside(path.resolve(), roots):
            named[value] = path
    return {key: _file_sha256(path, where) for key, path in sorted(named.items())}


def _code_text(code: CodeType) -> str:
    """A code object as stable text: its bytecode, names and constants (nested
    code objects recursed into, sets sorted), not its memory layout."""

    def const(value: Any) -> str:
        if isinstance(value, CodeType):
            return _code_text(value)
        if isinstance(value, tuple):
            return "(" + ",".join(map(const, value)) + ")"
        if isinstance(value, frozenset):
            return "{" + ",".join(sorted(map(const, value))) + "}"
        return repr(value)

    return "|".join(
        [
            code.co_code.hex(),
            ",".join(code.co_names),
            ",".join(code.co_varnames),
            const(code.co_consts),
        ]
    )


def function_sha256(function: Callable[..., Any]) -> str:
    """The sha256 of a function's source (of its class's, for a callable
    object), or of its code object where the source is not available (a
    function typed at an interactive prompt)."""
    if isinstance(function, functools.partial):  # its function and its bound arguments
        inner = function_sha256(function.func)
        text = f"{inner}|{function.args!r}|{sorted(function.keywords.items())!r}"
        return hashlib.sha256(text.encode("utf-8")).hexdigest()
    for target in (function, type(function)):
        try:
            source = inspect.getsource(target)
        except (OSError, TypeError):
            continue
        return hashlib.sha256(source.encode("utf-8")).hexdigest()
    call = next(
        (vars(k)["__call__"] for k in type(function).__mro__ if "__call__" in vars(k)), None
    )
    code = getattr(function, "__code__", None) or getattr(call, "__code__", None)
    text = _code_text(code) if isinstance(code, CodeType) else repr(function)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@functools.cache  # once per process: the code this process runs was read when it started
def packproof_sha256() -> str:
    """The sha256 of packproof's library and harness: every shipped file of
    ``packproof.packer`` and ``packproof.evals``, by path within the package."""
    import packproof.evals
    import packproof.packer

    digest = hashlib.sha256()
    for package in (packproof.packer, packproof.evals):
        root = Path(package.__file__ or "").parent
        files = sorted(
            p
            for p in root.rglob("*")
            if p.suffix in _SHIPPED
            and p.is_file()
            and not any(part.startswith((".", "__pycache__")) for part in p.relative_to(root).parts)
        )
        for path in files:
            rel = f"{package.__name__}/{path.relative_to(root).as_posix()}"
            digest.update(f"{rel}\0{_file_sha256(path, rel)}\n".encode())
    return digest.hexdigest()
