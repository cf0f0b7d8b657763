"""The strategy interface, parameters as values, and the one registry.

A strategy is a frozen dataclass whose fields are its parameters. It only scores
and orders the evictable candidates (:meth:`Strategy.rank`); the shared pipeline
reserves the tail and anchors, fills the budget and explains every decision.
Its canonical spec ``{"name", "params"}`` lists every parameter (defaults filled)
and round-trips through :func:`parse_spec`, so a report column reproduces.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypeVar

import numpy as np

from ..errors import InputError, pointer

if TYPE_CHECKING:
    from ..model import Items

__all__ = [
    "REGISTRY",
    "ParamInfo",
    "Ranking",
    "ScoringView",
    "Strategy",
    "StrategyBase",
    "build_strategy",
    "param",
    "parse_spec",
    "register",
]

NO_SEARCHABLE_TERMS = "prompt_has_no_searchable_terms"


@dataclass(frozen=True, eq=False)
class ScoringView:
    """What a strategy sees: the evictable candidates in ordinal order, the prompt
    and the current turn."""

    items: Items
    prompt: str | None
    current_turn: int


@dataclass(frozen=True, eq=False)
class Ranking:
    """A strategy's verdict. ``scores is None`` asks for lossless-claw's
    chronological fill (newest first, stop at the first misfit); otherwise the
    candidates are filled greedily by score descending, newer first on ties,
    skipping what does not fit. ``components`` are per-candidate arrays shown in
    the trace; ``terms`` the analysed prompt terms."""

    scores: np.ndarray | None
    components: Mapping[str, np.ndarray] = field(default_factory=dict)
    terms: tuple[str, ...] = ()
    fallback: str | None = None


class Strategy(Protocol):
    name: ClassVar[str]
    formula: ClassVar[str]

    def rank(self, view: ScoringView) -> Ranking: ...

    def params(self) -> dict[str, Any]: ...

    def spec(self) -> dict[str, Any]: ...

    def spec_string(self) -> str: ...


ParamKind = Literal["number", "choice"]


@dataclass(frozen=True)
class ParamInfo:
    name: str
    default: Any
    doc: str
    kind: ParamKind
    minimum: float | None = None
    choices: tuple[str, ...] = ()

    def coerce(self, value: Any, where: str) -> Any:
        """Check one user-given value; numbers become floats, explicit 0 stays 0."""
        if self.kind == "choice":
            if type(value) is not str or value not in self.choices:
                raise InputError(
                    where, "unknown value", expected="one of " + "|".join(self.choices), found=value
                )
            return value
        if type(value) not in (int, float) or not math.isfinite(value):
            raise InputError(where, "wrong type", expected="a finite number", found=value)
        if self.minimum is not None and value < self.minimum:
            raise InputError(
                where, "out of range", expected=f"a number >= {_fmt(self.minimum)}", found=value
            )
        return float(value)

    def describe(self) -> str:
        domain = (
            "|".join(self.choices)
            if self.kind == "choice"
            else (f">= {_fmt(self.minimum)}" if self.minimum is not None else "any number")
        )
        return f"{self.name}={_fmt(self.default)} ({domain}): {self.doc}"


def param(
    default: Any, doc: str, *, minimum: float | None = None, choices: tuple[str, ...] = ()
) -> Any:
    """A strategy parameter: a dataclass field carrying its documentation."""
    kind: ParamKind = "choice" if choices else "number"
    return field(
        default=default, metadata={"doc": doc, "kind": kind, "minimum": minimum, "choices": choices}
    )


def _fmt(value: Any) -> str:
    """Canonical text of a parameter value: integral floats without ``.0``."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)


@dataclass(frozen=True)
class StrategyBase:
    """Shared behaviour of every registered strategy (spec, parameters, help)."""

    name: ClassVar[str] = ""
    formula: ClassVar[str] = ""

    def rank(self, view: ScoringView) -> Ranking:
        raise NotImplementedError

    @classmethod
    def param_info(cls) -> list[ParamInfo]:
        out = []
        for f in fields(cls):
            meta = f.metadata
            default = f.default if f.default is not MISSING else None
            out.append(
                ParamInfo(
                    f.name, default, meta["doc"], meta["kind"], meta["minimum"], meta["choices"]
                )
            )
        return sorted(out, key=lambda p: p.name)

    def params(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in sorted(fields(self), key=lambda f: f.name)}

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "params": self.params()}

    def label(self) -> str:
        """A short display name: the spec string without default-valued parameters."""
        defaults = {p.name: p.default for p in self.param_info()}
        changed = {k: v for k, v in self.params().items() if v != defaults[k]}
        if not changed:
            return self.name
        return self.name + "(" + ",".join(f"{k}={_fmt(v)}" for k, v in changed.items()) + ")"

    def spec_string(self) -> str:
        params = self.params()
        if not params:
            return self.name
        return self.name + "(" + ",".join(f"{k}={_fmt(v)}" for k, v in params.items()) + ")"


S = TypeVar("S", bound=type[StrategyBase])

REGISTRY: dict[str, type[StrategyBase]] = {}


def register(cls: S) -> S:
    """Class decorator adding a strategy to :data:`REGISTRY`; names are unique."""
    if not cls.name or cls.name in REGISTRY:
        raise ValueError(f"strategy name {cls.name!r} is empty or already registered")
    REGISTRY[cls.name] = cls
    return cls


def build_strategy(name: str, params: Mapping[str, Any], where: str = "/strategy") -> StrategyBase:
    """A strategy instance from a name and user-given parameters, all checked."""
    cls = REGISTRY.get(name)
    if cls is None:
        raise InputError(
            where + "/name",
            "unknown strategy",
            expected="one of " + "|".join(sorted(REGISTRY)),
            found=name,
        )
    info = {p.name: p for p in cls.param_info()}
    kwargs: dict[str, Any] = {}
    for key in sorted(params):
        spec = info.get(key)
        at = where + "/params" + pointer(key)
        if spec is None:
            known = ", ".join(info) or "none"
            raise InputError(
                at,
                f"unknown parameter for strategy '{name}'",
                expected=f"one of: {known}",
                found=key,
            )
        kwargs[key] = spec.coerce(params[key], at)
    return cls(**kwargs)


_SPEC = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


def parse_value(text: str) -> Any:
    """A parameter value from text: JSON when it parses (numbers), else the string."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser
        return text


def parse_spec(text: str, where: str = "/strategy") -> tuple[str, dict[str, Any]]:
    """``"bm25(k1=1.5,b=0.7)"`` -> ``("bm25", {"k1": 1.5, "b": 0.7})``."""
    match = _SPEC.match(text)
    if match is None:
        raise InputError(
            where, "malformed strategy spec", expected="name or name(key=value,...)", found=text
        )
    name, body = match.group(1), match.group(2)
    params: dict[str, Any] = {}
    for part in (body or "").split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise InputError(
                where, "malformed strategy parameter", expected="key=value", found=part.strip()
            )
        if key.strip() in params:
            raise InputError(
                where, f"parameter {key.strip()!r} given twice", expected="each once", found=text
            )
        params[key.strip()] = parse_value(value.strip())
    return name, params
