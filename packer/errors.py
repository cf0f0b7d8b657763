"""Errors for people: one line naming where (file, line, JSON pointer), what was
expected and what was found. The CLI prints ``str(error)`` and exits 2."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["InputError", "MissingExtraError", "RunError", "pointer", "require"]


def pointer(*parts: str | int) -> str:
    """RFC 6901 JSON pointer from path parts: ``pointer("items", 3, "id") == "/items/3/id"``."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


class InputError(ValueError):
    """Bad input. ``where`` is a JSON pointer (or ``line:col``); ``source`` a file name."""

    def __init__(
        self,
        where: str,
        message: str,
        *,
        expected: str | None = None,
        found: object = None,
        source: str | None = None,
    ) -> None:
        self.where = where
        self.message = message
        self.expected = expected
        self.found = found
        self.source = source
        super().__init__(str(self))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle by state, so the error crosses a process pool or a Dask worker
        whole (the default would call ``cls(str(self))`` and fail to rebuild)."""
        return (_rebuild, (type(self), dict(self.__dict__)))

    def with_source(self, source: str) -> InputError:
        return InputError(
            self.where, self.message, expected=self.expected, found=self.found, source=source
        )

    def __str__(self) -> str:
        head = ": ".join(p for p in (self.source, self.where) if p)
        text = f"{head}: {self.message}" if head else self.message
        if self.expected is not None:
            text += f" (expected {self.expected}, found {_show(self.found)})"
        return text


def _rebuild(cls: type[InputError], state: dict[str, Any]) -> InputError:
    error = cls.__new__(cls)
    error.__dict__.update(state)
    ValueError.__init__(error, str(error))
    return error


class RunError(RuntimeError):
    """A run that could not finish through no fault of its input (a worker
    process died): one line saying what happened and what is kept. Not bad
    input and not a bug: the CLI prints it and exits 1, as for a failed run."""


class MissingExtraError(InputError):
    """An optional dependency is not installed: bad set-up, said in one line that
    names the extra to install (exit 2), never an internal error."""

    def __init__(self, what: str, extra: str, module: str) -> None:
        super().__init__(
            "",
            f"{what} needs the {extra} extra ({module} is not installed): "
            f"pip install 'packproof[{extra}]'",
        )


def require(module: str, extra: str, what: str) -> ModuleType:
    """Import an optional dependency, or raise :class:`MissingExtraError`."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(what, extra, module) from None


def _show(value: object) -> str:
    """A short, single-line rendering of a found value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        shown = shown.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates
        return '"' + shown.replace("\n", "\\n") + '"'
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return f"an array of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
