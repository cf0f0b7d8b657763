"""Strict JSON in, canonical JSON out.

In: duplicate keys, ``NaN``/``Infinity`` and invalid text are errors with a
line and column. Out: sorted keys, compact separators, UTF-8 text, floats rounded
to a fixed 9 decimals (and ``-0.0`` written as ``0.0``) so that the same pack is
the same bytes on every machine. Rounding is numpy's ``round`` for scalars and
arrays alike, so a renderer may round whole arrays up front (:func:`json_floats`)
and ask :func:`dumps` to skip the walk (``prepared=True``).

The bytes are those of ``json.dumps(value, sort_keys=True, ensure_ascii=False,
allow_nan=False)`` with the separators above: that encoder is the reference.
orjson writes the same bytes several times faster (a 100k-item pack's trace is
30-40 MB), except for floats in (0, 1e-4), which it writes ``0.00005`` or
``5e-9`` where ``json`` writes ``5e-05`` and ``5e-09``. Those are marked
:class:`ReprFloat` and written by ``float.__repr__``, as ``json`` does. What
orjson cannot write as ``json`` would (an indent other than 2, lone surrogates,
integers beyond 64 bits, non-string keys) goes to the reference encoder, which
also raises what it always raised; an installed orjson whose float format
disagrees on a fixed sample is not used at all (tests compare both encoders).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np
import orjson

from .errors import InputError

__all__ = [
    "FLOAT_DECIMALS",
    "ReprFloat",
    "canonical",
    "canonical_array",
    "dumpb",
    "dumps",
    "json_floats",
    "loads",
    "mark_float_list",
    "mark_floats",
    "prepare",
    "round_float",
    "round_floats",
    "significant",
]

FLOAT_DECIMALS = 9


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) < len(pairs):  # a key repeats: name the first one that does
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# a \\uD800-\\uDFFF escape that is not half of a surrogate pair
_LONE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_surrogate(value: Any) -> bool:
    """Whether any string in ``value`` holds a lone surrogate. orjson refuses to
    encode one, in C; only when it refuses (that, or an integer beyond 64 bits,
    or nesting beyond its limit) are the strings walked."""
    try:
        orjson.dumps(value)
    except TypeError:
        pass
    else:
        return False
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if _SURROGATE.search(node):
                return True
        elif isinstance(node, dict):
            stack.extend(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _at(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    return f"line {line} column {pos - (text.rfind(chr(10), 0, pos) + 1) + 1}"


def loads(text: str | bytes, *, source: str | None = None) -> Any:
    """Parse JSON strictly; errors are :class:`InputError` naming line and column.

    Beyond the JSON grammar it refuses what no output could carry: a lone
    surrogate escape (``"\\ud800"``: not Unicode text, and not writable as UTF-8)
    and nesting deeper than the parser's recursion allows."""
    # Escapes, looked for in the bytes where given (much faster than in a str).
    escapes = b"\\u" in text if isinstance(text, bytes) else "\\u" in text
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"byte {exc.start}",
                "not UTF-8 text",
                expected="UTF-8",
                found="invalid bytes",
                source=source,
            ) from None
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_reject_constant)
    except RecursionError:
        raise InputError("/", "JSON nested too deeply for the parser", source=source) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}", source=source
        ) from None
    except _DuplicateKey as exc:
        raise InputError(
            "/", f"duplicate key {exc.key!r} in a JSON object", source=source
        ) from None
    except ValueError as exc:
        raise InputError("/", f"invalid JSON: {exc}", source=source) from None
    # The value first: the regex scan of a large text is the slower test.
    lone = _LONE_ESCAPE.search(text) if escapes and _has_surrogate(value) else None
    if lone is not None:
        raise InputError(
            _at(text, lone.start()),
            "a lone surrogate escape is not Unicode text",
            expected="a surrogate pair or another code point",
            found=lone.group(),
            source=source,
        )
    return value


def round_floats(values: np.ndarray) -> np.ndarray:
    """Canonical floats of a whole array: rounded to FLOAT_DECIMALS, -0.0 made 0.0
    (NaN stays NaN)."""
    rounded: np.ndarray = np.round(values.astype(np.float64), FLOAT_DECIMALS) + 0.0
    return rounded


def canonical_array(values: Sequence[float]) -> list[float]:
    """:func:`canonical` of many floats at once."""
    array = np.asarray(values, dtype=np.float64)
    if not np.isfinite(array).all():
        bad = float(array[~np.isfinite(array)][0])
        raise ValueError(f"non-finite float {bad!r} cannot be written as JSON")
    out: list[float] = round_floats(array).tolist()
    return out


_SCALE = 10.0**FLOAT_DECIMALS


def round_float(value: float) -> float:
    """One float as :func:`round_floats` rounds it, without numpy: ``np.round``
    scales by 10**decimals, rounds half to even and scales back, each step an
    IEEE operation that Python's float arithmetic and ``round`` perform alike
    (property-tested bit for bit). Beyond about 1.8e299 the scaled value
    overflows (numpy would give inf): such a float is already whole, and is kept."""
    scaled = value * _SCALE
    if not math.isfinite(scaled):
        return value + 0.0
    return round(scaled) / _SCALE + 0.0


def canonical(value: Any) -> Any:
    """Round floats as :func:`round_floats` does; containers are copied."""
    return _walk(value, _plain)


def _plain(value: float) -> float:
    return value


# values the walk returns as they are, told by exact type (a subclass takes the
# walk's own checks): most of a record, passed over without a call each
_LEAVES: Final = frozenset({str, int, bool, type(None)})


def _walk(value: Any, mark: Callable[[float], float]) -> Any:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"non-finite float {value!r} cannot be written as JSON")
        return mark(round_float(value))
    if isinstance(value, dict):
        return {k: v if type(v) in _LEAVES else _walk(v, mark) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [v if type(v) in _LEAVES else _walk(v, mark) for v in value]
    return value


def prepare(value: Any) -> Any:
    """A copy of ``value`` fit for ``dumps(prepared=True)``: floats rounded as
    :func:`canonical` rounds them and marked as :func:`mark_floats` marks them
    (the walk :func:`dumps` does otherwise)."""
    return _walk(value, _mark)


def significant(value: Any, digits: int = 10) -> Any:
    """Floats rounded to ``digits`` significant digits (for statistics such as
    p-values, which fixed decimals would flatten to 0); containers are copied."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"non-finite float {value!r} cannot be written as JSON")
        return float(f"{value:.{digits}g}") + 0.0
    if isinstance(value, dict):
        return {k: significant(v, digits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [significant(v, digits) for v in value]
    return value


# ---------------------------------------------------------------- the encoders

# orjson writes a float as float.__repr__ does, except in (0, 1e-4).
_REPR_BELOW: Final = 1e-4


class ReprFloat(float):
    """A float that the fast encoder writes with ``float.__repr__`` (as ``json``
    does), because orjson would write it otherwise: 0 < |x| < 1e-4. A float in
    every other respect; :func:`json_floats` and the walk of :func:`dumps` make them."""

    __slots__ = ()


def _mark(value: float) -> float:
    # Non-finite floats too: orjson would write null, json raises (and so will we).
    if value == 0.0 or _REPR_BELOW <= abs(value) < math.inf:
        return value
    return ReprFloat(value)


def mark_floats(value: Any) -> Any:
    """A copy of ``value`` fit to be part of a ``dumps(prepared=True)`` value:
    floats kept as they are (not rounded), the few orjson would write otherwise
    than ``json`` marked :class:`ReprFloat`."""
    if isinstance(value, float):
        return _mark(value)
    if isinstance(value, dict):
        return {k: mark_floats(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mark_floats(v) for v in value]
    return value


def mark_float_list(values: list[float]) -> list[float]:
    """A list of canonical floats (each already :func:`round_float`'s) fit for
    ``dumps(prepared=True)``, vectorised: the list itself when none needs a mark
    (the common case: a column of costs), else a copy with :func:`mark_floats`'
    marks. A non-finite float raises, as :func:`dumps` does."""
    array = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(array)
    if not finite.all():
        bad = values[int(np.flatnonzero(~finite)[0])]
        raise ValueError(f"non-finite float {bad!r} cannot be written as JSON")
    plain = (array == 0) | (np.abs(array) >= _REPR_BELOW)
    if plain.all():
        return values
    out = list(values)
    for i in np.flatnonzero(~plain).tolist():
        out[i] = _mark(float(out[i]))
    return out


def json_floats(values: np.ndarray) -> list[float | None]:
    """A float array as canonical JSON numbers, ready for ``dumps(prepared=True)``:
    rounded as :func:`round_floats`, NaN as None (null), the few floats orjson
    would write otherwise than ``json`` marked :class:`ReprFloat` (found vectorised).

    0.0 and 1.0, which fill most columns of a large pack (unscored items, unit
    weights), are one object each: a 100k-item trace then allocates, writes and
    frees hundreds of thousands fewer floats."""
    rounded = round_floats(values)
    out = np.full(len(rounded), 0.0, dtype=object)
    out[rounded == 1.0] = 1.0
    rest = np.flatnonzero((rounded != 0.0) & (rounded != 1.0))  # NaN among them
    if len(rest):
        out[rest] = _numbers(rounded[rest])
    listed: list[float | None] = out.tolist()
    return listed


def _numbers(rounded: np.ndarray) -> list[float | None]:
    out: list[float | None] = rounded.tolist()
    magnitude = np.abs(rounded)
    plain = (rounded == 0) | ((magnitude >= _REPR_BELOW) & (magnitude < np.inf))
    for i in np.flatnonzero(~plain).tolist():
        out[i] = None if math.isnan(rounded[i]) else ReprFloat(rounded[i])
    return out


def _fragment(value: Any) -> orjson.Fragment:
    """orjson's hook for what it does not write itself: float subclasses (ReprFloat,
    numpy's float64) as ``json`` writes them; anything else is the reference's."""
    if isinstance(value, float) and math.isfinite(value):
        return orjson.Fragment(float.__repr__(value).encode("ascii"))
    raise TypeError(type(value).__name__)


_OPTIONS: Final = {None: orjson.OPT_SORT_KEYS, 2: orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2}


def _orjson_agrees() -> bool:
    """Whether the installed orjson writes this sample as ``json`` does: floats
    at the edges of both formats, escapes, non-ASCII text, an empty container
    under indent. If not, every value goes to the reference encoder."""
    floats = [0.0, 1.0, -2.5, 0.1, 1 / 3, 1e-4, 0.000123456789, 123456.789, 1e15, 1e16]
    floats += [1.5e17, 1e22, 2.0**53 + 2, 1.7976931348623157e308, ReprFloat(5e-05)]
    sample = {"f": floats, "s": '"\\/\b\f\n\r\t\x00\x1f\x7f é\u2028😀', "e": [{}, []]}
    try:
        return all(
            orjson.dumps(sample, default=_fragment, option=option)
            == _reference(sample, indent).encode("utf-8")
            for indent, option in _OPTIONS.items()
        )
    except Exception:  # an orjson too old for this code: the reference it is
        return False


def _reference(value: Any, indent: int | None) -> str:
    separators = (",", ": ") if indent is not None else (",", ":")
    return json.dumps(
        value,
        sort_keys=True,
        ensure_ascii=False,
        separators=separators,
        indent=indent,
        allow_nan=False,
    )


_FAST: Final = _orjson_agrees()


def _fast(value: Any, indent: int | None) -> bytes | None:
    """orjson's bytes, or None where the reference encoder must decide."""
    option = _OPTIONS.get(indent) if _FAST else None
    if option is None:
        return None
    try:
        return orjson.dumps(value, default=_fragment, option=option)
    except TypeError:  # orjson.JSONEncodeError is one
        return None


def dumps(value: Any, *, indent: int | None = None, prepared: bool = False) -> str:
    """Canonical JSON text: sorted keys, fixed float formatting, no trailing newline.
    ``prepared=True`` promises every float is already canonical, and those in (0,
    1e-4) or non-finite are :class:`ReprFloat` (:func:`json_floats` and
    :func:`mark_floats` make them), and skips the walk."""
    if not prepared:
        value = _walk(value, _mark)
    fast = _fast(value, indent)
    return _reference(value, indent) if fast is None else fast.decode("utf-8")


def dumpb(value: Any, *, indent: int | None = None, prepared: bool = False) -> bytes:
    """:func:`dumps` as UTF-8 bytes, without the round trip through ``str``."""
    if not prepared:
        value = _walk(value, _mark)
    fast = _fast(value, indent)
    return _reference(value, indent).encode("utf-8") if fast is None else fast
