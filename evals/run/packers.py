"""Named packers: a strategy entry of the eval config that is not one of
packproof's strategies but a team's own packer, run beside the built-in specs and
judged by the same metrics (docs/external-packers.md).

In the config, ``{name: mine, packer: "cmd:python mypacker.py"}``: a program
speaking the JSON-lines protocol (:mod:`packproof.evals.run.external`). From
Python, :func:`packproof.evaluate` passes a callable (request dict -> pack dict),
run in-process, or with a timeout in a forked child that is killed when a call
overruns it. Either way the packer gets the request a built-in spec would
get, with ``strategy`` (default ``chronological``) as the request's strategy:
that strategy's own pack of the request is the reference whose fresh tail,
anchors and budget the answer is judged under. Its cells are the name's: the
name is the spec, the label and the strategy of every record and report.
"""

from __future__ import annotations

import importlib
import pickle
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from packproof.evals.run.executors import ships
from packproof.evals.run.external import (
    ExternalPacker,
    Failure,
    PackFunction,
    call_function,
    check_timeout,
    close_packers,
    external_packer,
    function_packer,
    parse_packer,
)
from packproof.evals.run.identity import command_files, function_sha256
from packproof.evals.run.judge import check_answer
from packproof.packer.cacheaware import CacheAware
from packproof.packer.errors import InputError
from packproof.packer.packspec import parse_pack_spec
from packproof.packer.strategies import REGISTRY, StrategyBase, build_strategy

__all__ = [
    "NAME",
    "Configured",
    "NamedPacker",
    "PackFunction",
    "check_name",
    "check_shippable",
    "command_packer",
    "named_packer",
    "python_packer",
    "start_packers",
]

# Matched whole (re.fullmatch): "$" would let a name end in a newline.
NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
DEFAULT_STRATEGY: Final = "chronological"
DEFAULT_TIMEOUT_S: Final = 10.0


@dataclass(frozen=True)
class NamedPacker:
    """A named packer: a command (``cmd:...``) or, in-process, a function."""

    name: str
    source: str  # what the reports show: "cmd:python mypacker.py", or "python:mod.func"
    strategy: str = DEFAULT_STRATEGY  # canonical spec of the request's strategy
    # Seconds per cell: a command's always; a function's only when given, and
    # then it runs in a forked child that is killed when it overruns.
    timeout: float | None = DEFAULT_TIMEOUT_S
    command: tuple[str, ...] | None = None
    function: PackFunction | None = field(default=None, compare=False)
    digest: str = ""  # a function's source sha256 (what its run id hashes)
    # What an error names it by: the config entry's line and pointer, and the file.
    where: str = "packer"
    origin: str | None = field(default=None, compare=False)

    def start(self) -> None:
        """Start the command now (bad input, one line naming the entry, if it
        cannot start); a function has nothing to start."""
        if self.command is not None:
            self._process()

    def _process(self) -> ExternalPacker:
        assert self.command is not None and self.timeout is not None
        return external_packer(list(self.command), self.timeout, self.where, self.origin)

    def call(self, request: dict[str, Any]) -> tuple[Failure | None, Any]:
        """One request: (None, pack) or (failure class, message), as an
        external packer's (``CRASH`` when the function raises)."""
        if self.command is not None:
            return self._process().call(request)
        assert self.function is not None
        if self.timeout is not None:
            server = function_packer(self.name, self.digest, self.function, self.timeout)
            return server.call(request)
        failure, answer = call_function(self.function, request)
        if failure is not None:
            return failure, answer
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
        return {**self.describe(), "source_sha256": self.digest}


def check_name(name: Any, where: str) -> str:
    """A packer's name: a short identifier that is not a built-in strategy's
    (no whitespace around it, no control character in it)."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise InputError(
            where,
            "not a packer name",
            expected="letters, digits, '.', '_', '-'",
            found=name,
        )
    if name in REGISTRY:
        raise InputError(
            where, "a built-in strategy's name; name your packer otherwise", found=name
        )
    return name


def named_packer(
    entry: Mapping[str, Any],
    where: str,
    at: tuple[str | None, str] | None = None,
) -> NamedPacker:
    """A config entry ``{name, packer, strategy?, timeout?}`` (schema-checked);
    ``at`` is the entry's file and its line and pointer, which a command that
    cannot start is reported at."""
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
        timeout=check_timeout(entry.get("timeout", DEFAULT_TIMEOUT_S), f"{where}/timeout"),
        command=tuple(argv),
        where=f"{at[1]}: packer" if at is not None else f"{where}/packer",
        origin=at[0] if at is not None else None,
    )


def command_packer(
    spec: str, name: str, strategy: str = DEFAULT_STRATEGY, timeout: float | None = None
) -> NamedPacker:
    """``cmd:COMMAND`` given from Python (:func:`packproof.evaluate`): errors
    name the argument at fault (``packer``, ``name``, ``strategy``, ``timeout``)."""
    if not isinstance(spec, str):
        raise InputError("packer", "not a packer", expected="cmd:COMMAND", found=spec)
    try:
        argv = parse_packer(spec)
    except InputError as exc:
        raise InputError("packer", exc.message, expected=exc.expected, found=exc.found) from None
    return NamedPacker(
        name=check_name(name, "name"),
        source=spec,
        strategy=_strategy(strategy, "strategy"),
        timeout=DEFAULT_TIMEOUT_S if timeout is None else check_timeout(timeout, "timeout"),
        command=tuple(argv),
    )


def python_packer(
    function: PackFunction,
    name: str | None = None,
    strategy: str = DEFAULT_STRATEGY,
    timeout: float | None = None,
) -> NamedPacker:
    """A callable (request dict -> pack dict) as a named packer, its name
    defaulting to the function's ``__name__``: called in-process, or with a
    ``timeout`` in a forked child that is killed when a call overruns it."""
    if not callable(function):
        raise InputError("packer", "not callable", expected="a function", found=repr(function))
    chosen = name if name is not None else getattr(function, "__name__", "packer")
    qualified = f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', '?')}"
    return NamedPacker(
        name=check_name(chosen, "name"),
        source=f"python:{qualified}",
        strategy=_strategy(strategy, "strategy"),
        timeout=None if timeout is None else check_timeout(timeout, "timeout"),
        function=function,
        digest=function_sha256(function),
    )


def start_packers(
    packers: Mapping[str, NamedPacker],
    command: Sequence[str] | None,
    timeout: float,
    executor: str,
    jobs: int,
) -> None:
    """Check, before the run touches its folder, that every function packer
    reaches the executor's workers (:func:`check_shippable`) and every packer
    command starts: one that cannot is bad input, in one line naming its
    config entry (or ``--packer``). Where the cells run in pool workers, which
    start their own, the ones started here are ended again at once: they would
    idle through the run."""
    check_shippable(packers, executor, jobs)
    if command is not None:
        external_packer(list(command), timeout)
    for named in packers.values():
        named.start()
    if ships(executor, jobs):
        close_packers()


def check_shippable(packers: Mapping[str, NamedPacker], executor: str, jobs: int) -> None:
    """A function packer reaches a pool's workers pickled: one that does not
    pickle (a lambda, a function defined in a function) is refused before the
    run starts, in one line, instead of failing it half-way."""
    if not ships(executor, jobs):
        return
    for named in packers.values():
        if named.function is None:
            continue
        try:
            if executor == "dask":  # Dask ships a function with cloudpickle: a lambda by value
                importlib.import_module("cloudpickle").dumps(named.function)
            else:
                pickle.dumps(named.function)
        except Exception as exc:  # whatever pickling raises, the answer is the same
            raise InputError(
                "packer",
                f"{named.source} does not pickle ({type(exc).__name__}), and the "
                f"{executor!r} executor sends it to its worker processes",
                expected="a module-level function, or executor='serial'",
                found=named.name,
            ) from None


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
        timeout: float = DEFAULT_TIMEOUT_S,
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
            external = NamedPacker(
                strategy.name, source, spec, timeout, tuple(command), where="--packer"
            )
        return cls(spec, strategy.name, strategy, parsed.cache, default, external)
