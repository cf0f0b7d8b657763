"""Named packers: a strategy entry of the eval config that is not one of
packproof's strategies but a team's own packer, run beside the built-in specs and
judged by the same metrics (docs/external-packers.md).

In the config, ``{name: mine, packer: "cmd:python mypacker.py"}``: a program
speaking the JSON-lines protocol (:mod:`packproof.evals.run.external`). From
Python, :func:`packproof.evaluate` passes a callable (request dict -> pack dict),
run in-process. Either way the packer gets the request a built-in spec would
get, with ``strategy`` (default ``chronological``) as the request's strategy:
that strategy's own pack of the request is the reference whose fresh tail,
anchors and budget the answer is judged under. Its cells are the name's: the
name is the spec, the label and the strategy of every record and report.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from packproof.evals.run.external import Failure, check_answer, external_packer, parse_packer
from packproof.evals.run.identity import command_files, function_sha256
from packproof.packer.cacheaware import CacheAware
from packproof.packer.errors import InputError
from packproof.packer.packspec import parse_pack_spec
from packproof.packer.strategies import REGISTRY, StrategyBase, build_strategy

__all__ = ["NAME", "Configured", "NamedPacker", "check_name", "named_packer", "python_packer"]

NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
DEFAULT_STRATEGY: Final = "chronological"

PackFunction = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class NamedPacker:
    """A named packer: a command (``cmd:...``) or, in-process, a function."""

    name: str
    source: str  # what the reports show: "cmd:python mypacker.py", or "python:mod.func"
    strategy: str = DEFAULT_STRATEGY  # canonical spec of the request's strategy
    timeout: float = 10.0  # a command's seconds per cell (a function is not timed out)
    command: tuple[str, ...] | None = None
    function: PackFunction | None = field(default=None, compare=False)

    def start(self) -> None:
        """Start the command now (bad input, one line, if it cannot start)."""
        if self.command is not None:
            external_packer(list(self.command), self.timeout)

    def call(self, request: dict[str, Any]) -> tuple[Failure | None, Any]:
        """One request: (None, pack) or (failure class, message), as an
        external packer's (``CRASH`` when the function raises)."""
        if self.command is not None:
            return external_packer(list(self.command), self.timeout).call(request)
        assert self.function is not None
        try:
            answer = self.function(_copy(request))
        except Exception as exc:  # the user's code: its failure is a cell's, not the run's
            return "CRASH", f"{type(exc).__name__}: {exc}"
        if not isinstance(answer, dict):
            return "PARSE_ERROR", f"the packer returned {type(answer).__name__}, not a dict"
        return check_answer(request, dict(answer))

    def describe(self) -> dict[str, Any]:
        """What the reports record of it."""
        return {"packer": self.source, "strategy": self.strategy}

    def fingerprint(self, folders: Sequence[Path]) -> dict[str, Any]:
        """What the manifest records of it, so that the run's id changes with
        it: :meth:`describe`, and the sha256 of the files its command names
        (``files``) or of the function's source (``source_sha256``);
        :mod:`~packproof.evals.run.identity`."""
        if self.command is not None:
            where = f"packer {self.name}"
            return {**self.describe(), "files": command_files(self.command, folders, where)}
        assert self.function is not None
        return {**self.describe(), "source_sha256": function_sha256(self.function)}


def _copy(value: Any) -> Any:
    """A deep copy of a JSON value (a packer may mutate what it is given)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def check_name(name: Any, where: str) -> str:
    """A packer's name: a short identifier that is not a built-in strategy's."""
    if not isinstance(name, str) or not NAME.match(name):
        raise InputError(
            where, "not a packer name", expected="letters, digits, '.', '_', '-'", found=name
        )
    if name in REGISTRY:
        raise InputError(
            where, "a built-in strategy's name; name your packer otherwise", found=name
        )
    return name


def named_packer(entry: Mapping[str, Any], where: str) -> NamedPacker:
    """A config entry ``{name, packer, strategy?, timeout?}`` (schema-checked)."""
    name = check_name(entry["name"], f"{where}/name")
    try:
        argv = parse_packer(entry["packer"])
    except InputError as exc:
        raise InputError(
            f"{where}/packer", exc.message, expected=exc.expected, found=exc.found
        ) from None
    strategy = _strategy(entry.get("strategy", DEFAULT_STRATEGY), f"{where}/strategy")
    return NamedPacker(
        name=name,
        source=entry["packer"],
        strategy=strategy,
        timeout=float(entry.get("timeout", 10.0)),
        command=tuple(argv),
    )


def python_packer(
    function: PackFunction, name: str | None = None, strategy: str = DEFAULT_STRATEGY
) -> NamedPacker:
    """A callable (request dict -> pack dict) as a named packer run in-process;
    its name defaults to the function's ``__name__``."""
    if not callable(function):
        raise InputError("packer", "not callable", expected="a function", found=repr(function))
    chosen = name if name is not None else getattr(function, "__name__", "packer")
    qualified = f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', '?')}"
    return NamedPacker(
        name=check_name(chosen, "name"),
        source=f"python:{qualified}",
        strategy=_strategy(strategy, "strategy"),
        function=function,
    )


def _strategy(text: Any, where: str) -> str:
    if not isinstance(text, str):
        raise InputError(where, "not a strategy spec", expected="a spec string", found=text)
    return parse_pack_spec(text, where).spec_string()


@dataclass(frozen=True)
class Configured:
    """A configured spec, built once per task."""

    spec: str
    name: str
    strategy: StrategyBase
    cache: CacheAware | None
    is_default: bool  # its named expectations apply (they were written for the defaults)
    external: NamedPacker | None = None  # where its packs come from, if not from packproof

    @classmethod
    def of(
        cls,
        spec: str,
        packers: Mapping[str, NamedPacker],
        command: Sequence[str] | None = None,
        timeout: float = 10.0,
    ) -> Configured:
        """A spec as configured: a named packer (its name is its strategy, and
        the expectations written for that name apply), or a built-in spec,
        packed by packproof or, with ``command``, by that external program."""
        if spec in packers:
            named = packers[spec]
            parsed = parse_pack_spec(named.strategy)
            return cls(spec, spec, parsed.strategy, parsed.cache, True, named)
        parsed = parse_pack_spec(spec)
        strategy = parsed.strategy
        default = parsed.cache is None and strategy == build_strategy(strategy.name, {})
        external = None
        if command is not None:
            source = "cmd:" + shlex.join(command)
            external = NamedPacker(strategy.name, source, spec, timeout, tuple(command))
        return cls(spec, strategy.name, strategy, parsed.cache, default, external)
