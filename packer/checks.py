"""Validation of JSON values, column-wise: every check names the JSON pointer of
the first bad value. The request reads its items as columns (one list per field),
so 100k items are checked in a few whole-column passes (``checked_column``'s fast test)
and only a failing column is walked value by value to name the culprit."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, Final

import numpy as np

from .errors import InputError, pointer

__all__ = [
    "INT64_MAX",
    "MISSING",
    "check_choice",
    "check_int",
    "check_object",
    "check_str",
    "checked_column",
    "codes",
    "fail",
    "int_array",
    "nullable_str_column",
    "pointer_join",
    "read_columns",
    "refuse_duplicates",
    "types_within",
]

INT64_MAX: Final = 2**62  # headroom so sums of counts never overflow int64


def fail(where: str, message: str, expected: str, found: object) -> InputError:
    return InputError(where, message, expected=expected, found=found)


def check_int(value: Any, where: str, minimum: int | None = None) -> int:
    """An integer (JSON Schema sense: 3.0 is 3), never a boolean."""
    if type(value) is float and value.is_integer():
        value = int(value)
    if type(value) is not int:
        raise fail(where, "wrong type", "an integer", value)
    if minimum is not None and value < minimum:
        raise fail(where, "out of range", f"an integer >= {minimum}", value)
    if abs(value) > INT64_MAX:
        raise fail(where, "out of range", f"an integer of magnitude <= {INT64_MAX}", value)
    return value


def check_str(value: Any, where: str, *, nullable: bool = False, nonempty: bool = False) -> Any:
    if value is None and nullable:
        return None
    if type(value) is not str:
        raise fail(where, "wrong type", "a string" + (" or null" if nullable else ""), value)
    if nonempty and not value:
        raise fail(where, "empty string", "a non-empty string", value)
    return value


def check_choice(value: Any, where: str, choices: Sequence[str]) -> str:
    if type(value) is not str or value not in choices:
        raise fail(where, "unknown value", "one of " + "|".join(choices), value)
    return value


def check_object(value: Any, where: str, allowed: frozenset[str] | None = None) -> dict[str, Any]:
    if type(value) is not dict:
        raise fail(where, "wrong type", "an object", value)
    if allowed is not None:
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise fail(
                pointer_join(where, unknown[0]),
                "unknown field",
                "one of " + ", ".join(sorted(allowed)),
                unknown[0],
            )
    return value


def pointer_join(base: str, *parts: str | int) -> str:
    return (base if base != "/" else "") + pointer(*parts)


MISSING: Final = object()


def read_columns(items: list[dict[str, Any]], keys: list[str]) -> dict[str, list[Any]]:
    """``key -> [value of every item]`` (``MISSING`` where an item lacks the key),
    reading the item dicts once: they do not stay in the CPU cache at 100k items."""
    if not keys:
        return {}
    try:
        rows = map(itemgetter(*keys), items)
        if len(keys) == 1:
            return {keys[0]: list(rows)}
        return dict(zip(keys, map(list, zip(*rows, strict=True)), strict=True))
    except KeyError:  # items differ in their keys
        return {key: [it.get(key, MISSING) for it in items] for key in keys}


def checked_column(
    values: list[Any],
    key: str,
    check: Callable[[Any, str], Any],
    fast: Callable[[list[Any]], bool],
) -> list[Any]:
    """``values`` of field ``key``, checked. ``fast(values)`` is a whole-column test
    that, when true, proves every present value passes ``check``; the per-value
    loop then only runs to name the first bad value."""
    if fast(values):
        return values
    return [v if v is MISSING else check(v, pointer("items", i, key)) for i, v in enumerate(values)]


def nullable_str_column(values: list[Any] | None, key: str, n: int) -> list[str | None]:
    """The ``n`` values of an optional string field (absent or null: None), checked."""
    if values is None:
        return [None] * n
    checked = checked_column(
        values,
        key,
        lambda v, w: check_str(v, w, nullable=True),
        types_within(str, type(None)),
    )
    return [None if v is MISSING else v for v in checked]


def types_within(*types: type) -> Callable[[list[Any]], bool]:
    allowed = frozenset((*types, type(MISSING)))
    return lambda values: set(map(type, values)) <= allowed


def codes(
    values: list[Any] | None, key: str, choices: Sequence[str], default: str, n: int
) -> np.ndarray:
    """Int8 codes of a closed-set field (its index in ``choices``)."""
    if values is None:
        return np.full(n, choices.index(default), dtype=np.int8)
    lookup: dict[Any, int] = {c: i for i, c in enumerate(choices)}
    lookup[MISSING] = choices.index(default)
    try:
        return np.fromiter(map(lookup.__getitem__, values), dtype=np.int8, count=n)
    except (KeyError, TypeError):
        for i, v in enumerate(values):
            if v is not MISSING:
                check_choice(v, pointer("items", i, key), choices)
        raise AssertionError("unreachable") from None


def int_array(
    values: list[Any] | None, key: str, minimum: int | None, default: np.ndarray
) -> np.ndarray:
    """A checked integer field as int64; absent values are taken from ``default``."""
    if values is None:
        return default.copy()
    lo = -INT64_MAX if minimum is None else minimum

    def fast(vs: list[Any]) -> bool:
        given = [v for v in vs if v is not MISSING] if MISSING in vs else vs
        return not given or (
            set(map(type, given)) == {int} and min(given) >= lo and max(given) <= INT64_MAX
        )

    checked = checked_column(values, key, lambda v, w: check_int(v, w, minimum), fast)
    if MISSING not in checked:
        return np.array(checked, dtype=np.int64)
    out = default.copy()
    given = [i for i, v in enumerate(checked) if v is not MISSING]
    out[given] = [checked[i] for i in given]
    return out


def refuse_duplicates(values: Sequence[Any], key: str) -> None:
    if len(set(values)) == len(values):
        return
    first: dict[Any, int] = {}
    for i, value in enumerate(values):
        if value in first:
            raise InputError(
                pointer("items", i, key),
                f"duplicate {key} {value!r} (first at {pointer('items', first[value], key)})",
            )
        first[value] = i
