"""Strict JSON in, canonical JSON out.

In: duplicate keys, ``NaN``/``Infinity`` and invalid text are errors with a
line and column. Out: sorted keys, compact separators, UTF-8 text, floats rounded
to a fixed 9 decimals (and ``-0.0`` written as ``0.0``) so that the same pack is
the same bytes on every machine. Rounding is numpy's ``round`` for scalars and
arrays alike, so a renderer may round whole arrays up front (:func:`round_floats`)
and ask :func:`dumps` to skip the walk (``prepared=True``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import InputError

__all__ = [
    "FLOAT_DECIMALS",
    "canonical",
    "canonical_array",
    "dumps",
    "loads",
    "round_float",
    "round_floats",
    "significant",
]

FLOAT_DECIMALS = 9


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
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
    """Whether any string in ``value`` holds a lone surrogate (an iterative walk)."""
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
    lone = _LONE_ESCAPE.search(text) if "\\u" in text else None
    if lone is not None and _has_surrogate(value):
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
        bad = array[~np.isfinite(array)][0]
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
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"non-finite float {value!r} cannot be written as JSON")
        return round_float(value)
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    return value


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


def dumps(value: Any, *, indent: int | None = None, prepared: bool = False) -> str:
    """Canonical JSON text: sorted keys, fixed float formatting, no trailing newline.
    ``prepared=True`` promises every float is already canonical and skips the walk."""
    separators = (",", ": ") if indent is not None else (",", ":")
    return json.dumps(
        value if prepared else canonical(value),
        sort_keys=True,
        ensure_ascii=False,
        separators=separators,
        indent=indent,
        allow_nan=False,
    )
