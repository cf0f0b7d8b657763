"""The strategy interface, parameters as values, and the one registry.

A strategy is a frozen dataclass whose fields are its parameters. It only scores
and orders the evictable candidates (:meth:`Strategy.rank`); the shared pipeline
reserves the tail and anchors, fills the budget and explains every decision. A
peer system's whole pack policy is a strategy that also provides
:meth:`Policy.decide` (:mod:`packproof.packer.policy`).
Its canonical spec ``{"name", "params"}`` lists every parameter (defaults filled)
and round-trips through :func:`parse_spec`, so a report column reproduces.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypeVar, runtime_checkable

import numpy as np

from ..checks import check_object, check_str
from ..errors import InputError, pointer

if TYPE_CHECKING:
    from ..model import Items
    from ..pipeline import Reserved
    from ..policy import PolicyDecision
    from ..request import Request

__all__ = [
    "REGISTRY",
    "ParamInfo",
    "Policy",
    "Ranking",
    "ScoringView",
    "Strategy",
    "StrategyBase",
    "build_strategy",
    "is_policy",
    "is_policy_name",
    "param",
    "parse_spec",
    "register",
    "strategy_from_json",
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


@runtime_checkable
class Policy(Protocol):
    """A strategy that decides the whole pack of ``req`` from packproof's
    reservation ``reserved`` (made once per request and shared by every strategy
    and budget), as a peer system's own pack policy does. Its decision depends
    on nothing but its parameters, the request and the reservation."""

    def decide(self, req: Request, reserved: Reserved) -> PolicyDecision: ...


def is_policy(strategy: object) -> bool:
    """Whether ``strategy`` decides the whole pack (:class:`Policy`). A strategy
    is a frozen dataclass, so its class decides: the (slow) protocol check is
    made once per class."""
    cls = type(strategy)
    known = _POLICY_CLASSES.get(cls)
    if known is None:
        known = _POLICY_CLASSES[cls] = isinstance(strategy, Policy)
    return known


_POLICY_CLASSES: dict[type, bool] = {}


def is_policy_name(name: str) -> bool:
    """Whether the registered strategy ``name`` decides the whole pack (False
    for a name not registered)."""
    cls = REGISTRY.get(name)
    return cls is not None and issubclass(cls, Policy)


ParamKind = Literal["number", "integer", "choice"]


@dataclass(frozen=True)
class ParamInfo:
    name: str
    default: Any
    doc: str
    kind: ParamKind
    minimum: float | None = None
    choices: tuple[str, ...] = ()

    def coerce(self, value: Any, where: str) -> Any:
        """Check one user-given value; numbers become floats (integers ints),
        explicit 0 stays 0."""
        if self.kind == "choice":
            if type(value) is not str or value not in self.choices:
                raise InputError(
                    where, "unknown value", expected="one of " + "|".join(self.choices), found=value
                )
            return value
        integer = self.kind == "integer"
        what = "an integer" if integer else "a number"
        if type(value) not in (int, float) or not math.isfinite(value):
            expected = "a finite integer" if integer else "a finite number"
            raise InputError(where, "wrong type", expected=expected, found=value)
        if integer and not float(value).is_integer():
            raise InputError(where, "wrong type", expected=what, found=value)
        if self.minimum is not None and value < self.minimum:
            raise InputError(
                where, "out of range", expected=f"{what} >= {_fmt(self.minimum)}", found=value
            )
        return int(value) if integer else float(value)

    def describe(self) -> str:
        domain = (
            "|".join(self.choices)
            if self.kind == "choice"
            else (f">= {_fmt(self.minimum)}" if self.minimum is not None else f"any {self.kind}")
        )
        return f"{self.name}={_fmt(self.default)} ({domain}): {self.doc}"


def param(
    default: Any,
    doc: str,
    *,
    minimum: float | None = None,
    choices: tuple[str, ...] = (),
    integer: bool = False,
) -> Any:
    """A strategy parameter: a dataclass field carrying its documentation."""
    kind: ParamKind = "choice" if choices else "integer" if integer else "number"
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


def strategy_from_json(raw: Any, where: str = "/strategy") -> StrategyBase:
    """A request's strategy: ``{"name": ..., "params": {...}}`` or a spec string
    such as ``bm25(k1=1.5)``, every part checked."""
    if type(raw) is str:
        name, params = parse_spec(raw, where)
        return build_strategy(name, params, where)
    spec = check_object(raw, where, frozenset({"name", "params"}))
    if "name" not in spec:
        raise InputError(where, "missing required field 'name'")
    name = check_str(spec["name"], where + "/name", nonempty=True)
    params = check_object(spec.get("params", {}), where + "/params")
    return build_strategy(name, params, where)
