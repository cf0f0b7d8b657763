"""The pack request (``ctxpack.request.v1``): validation and normalisation.

Items are held column-wise (lists and numpy arrays in ordinal order): packing
100k items is then a few vectorised passes instead of 100k objects. Validation
is done here, per column, so every error names the JSON pointer of the first bad
value; ``packer/schemas/request.v1.json`` is the on-disk contract and a property
test checks that it accepts exactly what this module accepts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from .errors import InputError, pointer
from .model import IMPORTANCE, KINDS, ROLES, SUMMARY, TRUST, TRUST_POLICIES, FreshTail, Items
from .strategies import Strategy, build_strategy, parse_spec
from .tokens import COUNTERS, MissingExtraError, count_tokens, summary_envelope

__all__ = ["DEFAULT_TS", "REQUEST_SCHEMA_ID", "Request", "parse_request"]

REQUEST_SCHEMA_ID: Final = "ctxpack.request.v1"
DEFAULT_TS: Final = "1970-01-01T00:00:00Z"

_ITEM_FIELDS: Final = frozenset(
    [
        "id",
        "text",
        "ordinal",
        "role",
        "kind",
        "tokens",
        "trust",
        "importance",
        "anchored",
        "category",
        "turn",
        "mentions",
        "references",
        "last_mention_turn",
        "url",
    ]
)
_REQUEST_FIELDS: Final = frozenset(
    [
        "schema",
        "items",
        "prompt",
        "budget_tokens",
        "max_items",
        "fresh_tail",
        "current_turn",
        "token_counter",
        "trust_policy",
        "strategy",
        "ts",
        "scope",
        "category_caps",
    ]
)
_INT64_MAX: Final = 2**62  # headroom so sums of counts never overflow int64


@dataclass(frozen=True, eq=False)
class Request:
    items: Items
    prompt: str | None
    budget_tokens: int
    max_items: int | None
    fresh_tail: FreshTail
    current_turn: int
    token_counter: str
    trust_policy: str
    strategy: Strategy
    ts: str
    scope: str | None
    category_caps: Mapping[str, int]


# ---------------------------------------------------------------- validation


def _fail(where: str, message: str, expected: str, found: object) -> InputError:
    return InputError(where, message, expected=expected, found=found)


def _check_int(value: Any, where: str, minimum: int | None = None) -> int:
    """An integer (JSON Schema sense: 3.0 is 3), never a boolean."""
    if type(value) is float and value.is_integer():
        value = int(value)
    if type(value) is not int:
        raise _fail(where, "wrong type", "an integer", value)
    if minimum is not None and value < minimum:
        raise _fail(where, "out of range", f"an integer >= {minimum}", value)
    if abs(value) > _INT64_MAX:
        raise _fail(where, "out of range", f"an integer of magnitude <= {_INT64_MAX}", value)
    return value


def _check_str(value: Any, where: str, *, nullable: bool = False, nonempty: bool = False) -> Any:
    if value is None and nullable:
        return None
    if type(value) is not str:
        raise _fail(where, "wrong type", "a string" + (" or null" if nullable else ""), value)
    if nonempty and not value:
        raise _fail(where, "empty string", "a non-empty string", value)
    return value


def _check_choice(value: Any, where: str, choices: Sequence[str]) -> str:
    if type(value) is not str or value not in choices:
        raise _fail(where, "unknown value", "one of " + "|".join(choices), value)
    return value


def _check_object(value: Any, where: str, allowed: frozenset[str] | None = None) -> dict[str, Any]:
    if type(value) is not dict:
        raise _fail(where, "wrong type", "an object", value)
    if allowed is not None:
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise _fail(
                pointer_join(where, unknown[0]),
                "unknown field",
                "one of " + ", ".join(sorted(allowed)),
                unknown[0],
            )
    return value


def pointer_join(base: str, *parts: str | int) -> str:
    return (base if base != "/" else "") + pointer(*parts)


def _column(
    items: list[dict[str, Any]],
    key: str,
    check: Callable[[Any, str], Any],
    default: Any,
    fast: Callable[[list[Any]], bool],
) -> list[Any]:
    """One field of every item, defaulted and checked. ``fast(values)`` is a
    whole-column test that, when true, proves every value passes ``check``; the
    per-value loop then only runs to name the first bad value."""
    values = [it.get(key, default) for it in items]
    if fast(values):
        return values
    return [v if v is default else check(v, pointer("items", i, key)) for i, v in enumerate(values)]


def _types_within(*types: type) -> Callable[[list[Any]], bool]:
    allowed = frozenset(types)
    return lambda values: set(map(type, values)) <= allowed


def _codes(
    items: list[dict[str, Any]], key: str, choices: Sequence[str], default: str, present: set[str]
) -> np.ndarray:
    if key not in present:
        return np.full(len(items), choices.index(default), dtype=np.int8)
    values = [it.get(key, default) for it in items]
    lookup = {c: i for i, c in enumerate(choices)}
    try:
        return np.fromiter((lookup[v] for v in values), dtype=np.int8, count=len(values))
    except (KeyError, TypeError):
        for i, v in enumerate(values):
            _check_choice(v, pointer("items", i, key), choices)
        raise AssertionError("unreachable") from None


def _int_column(
    items: list[dict[str, Any]], key: str, minimum: int | None, default: Any, present: set[str]
) -> list[Any]:
    if key not in present:
        return [default] * len(items)
    lo = -_INT64_MAX if minimum is None else minimum

    def fast(values: list[Any]) -> bool:
        given = [v for v in values if v is not default]
        return not given or (
            set(map(type, given)) == {int} and min(given) >= lo and max(given) <= _INT64_MAX
        )

    return _column(items, key, lambda v, w: _check_int(v, w, minimum), default, fast)


_MISSING: Final = object()


def _parse_items(raw: Any, counter: str) -> Items:
    if type(raw) is not list:
        raise _fail("/items", "wrong type", "an array", raw)
    n = len(raw)
    for i, it in enumerate(raw):
        if type(it) is not dict:
            raise _fail(pointer("items", i), "wrong type", "an object", it)
    present: set[str] = set().union(*raw) if raw else set()
    unknown = present - _ITEM_FIELDS
    if unknown:
        first = next(i for i, it in enumerate(raw) if set(it) - _ITEM_FIELDS)
        key = sorted(set(raw[first]) - _ITEM_FIELDS)[0]
        raise _fail(
            pointer("items", first, key),
            "unknown field",
            "one of " + ", ".join(sorted(_ITEM_FIELDS)),
            key,
        )

    # Required fields.
    for key in ("id", "text"):
        missing_at = next((i for i, it in enumerate(raw) if key not in it), None)
        if missing_at is not None:
            raise InputError(pointer("items", missing_at), f"missing required field '{key}'")
    ids = _column(
        raw,
        "id",
        lambda v, w: _check_str(v, w, nonempty=True),
        _MISSING,
        lambda vs: set(map(type, vs)) == {str} and all(vs),
    )
    texts = _column(raw, "text", _check_str, _MISSING, _types_within(str))
    _refuse_duplicates(ids, "id")
    ordinal_list = _defaulted(_int_column(raw, "ordinal", None, _MISSING, present), range(n))
    _refuse_duplicates(ordinal_list, "ordinal")
    ordinals = np.array(ordinal_list, dtype=np.int64)

    roles = _codes(raw, "role", ROLES, "user", present)
    kinds = _codes(raw, "kind", KINDS, "message", present)
    trust = _codes(raw, "trust", TRUST, "unknown", present)
    importance = _codes(raw, "importance", IMPORTANCE, "unknown", present)

    if "anchored" in present:

        def check_bool(v: Any, where: str) -> bool:
            if type(v) is not bool:
                raise _fail(where, "wrong type", "a boolean", v)
            return v

        anchored = np.array(
            _column(raw, "anchored", check_bool, False, _types_within(bool)), dtype=bool
        )
    else:
        anchored = np.zeros(n, dtype=bool)

    def opt_str(key: str) -> list[str | None]:
        if key not in present:
            return [None] * n
        return _column(
            raw,
            key,
            lambda v, w: _check_str(v, w, nullable=True),
            None,
            _types_within(str, type(None)),
        )

    categories = opt_str("category")
    urls = opt_str("url")

    # Defaults chain: turn <- ordinal, last_mention_turn <- turn.
    turn_list = _defaulted(_int_column(raw, "turn", None, _MISSING, present), ordinal_list)
    turns = np.array(turn_list, dtype=np.int64)
    mentions = np.array(_int_column(raw, "mentions", 0, 0, present), dtype=np.int64)
    references = np.array(_int_column(raw, "references", 0, 0, present), dtype=np.int64)
    last_mention = np.array(
        _defaulted(_int_column(raw, "last_mention_turn", None, _MISSING, present), turn_list),
        dtype=np.int64,
    )

    given = _int_column(raw, "tokens", 0, _MISSING, present)
    tokens = _resolve_tokens(ids, texts, kinds, given, counter)

    order = np.argsort(ordinals, kind="stable")
    items = Items(
        ids=ids,
        texts=texts,
        ordinals=ordinals,
        roles=roles,
        kinds=kinds,
        tokens=tokens,
        trust=trust,
        importance=importance,
        anchored=anchored,
        categories=categories,
        turns=turns,
        mentions=mentions,
        references=references,
        last_mention_turns=last_mention,
        urls=urls,
    )
    if n and not bool(np.all(order[:-1] < order[1:])):
        items = items.take(order, subset=False)
    return items


def _defaulted(values: list[Any], defaults: Sequence[Any]) -> list[Any]:
    """``values`` with each missing entry taken from ``defaults`` at its position."""
    return [d if v is _MISSING else v for v, d in zip(values, defaults, strict=True)]


def _refuse_duplicates(values: Sequence[Any], key: str) -> None:
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


def _resolve_tokens(
    ids: list[str], texts: list[str], kinds: np.ndarray, given: list[Any], counter: str
) -> np.ndarray:
    """Given counts win; the rest are counted, summaries in their XML envelope."""
    out = np.array([0 if g is _MISSING else g for g in given], dtype=np.int64)
    missing = [i for i, g in enumerate(given) if g is _MISSING]
    if missing:
        summary = (kinds == SUMMARY).tolist()
        to_count = [summary_envelope(ids[i], texts[i]) if summary[i] else texts[i] for i in missing]
        out[missing] = count_tokens(to_count, counter)
    return out


def parse_request(obj: Any, *, source: str | None = None) -> Request:
    """Validate and normalise a request object (already JSON-decoded)."""
    try:
        return _parse_request(obj)
    except InputError as exc:
        if source:
            raise exc.with_source(source) from None
        raise
    except MissingExtraError as exc:
        raise InputError("/token_counter", str(exc), source=source) from None


def _parse_request(obj: Any) -> Request:
    req = _check_object(obj, "/", _REQUEST_FIELDS)
    if "schema" in req and req["schema"] != REQUEST_SCHEMA_ID:
        raise _fail("/schema", "unsupported request schema", REQUEST_SCHEMA_ID, req["schema"])
    for key in ("items", "budget_tokens"):
        if key not in req:
            raise InputError("/", f"missing required field '{key}'")

    counter = _check_choice(req.get("token_counter", "lcm"), "/token_counter", COUNTERS)
    budget = _check_int(req["budget_tokens"], "/budget_tokens", 1)
    max_items = req.get("max_items")
    if max_items is not None:
        max_items = _check_int(max_items, "/max_items", 1)
    prompt = _check_str(req.get("prompt"), "/prompt", nullable=True)
    trust_policy = _check_choice(req.get("trust_policy", "off"), "/trust_policy", TRUST_POLICIES)
    ts = _check_str(req.get("ts", DEFAULT_TS), "/ts")
    scope = _check_str(req.get("scope"), "/scope", nullable=True)

    tail_raw = _check_object(
        req.get("fresh_tail", {}), "/fresh_tail", frozenset({"count", "max_tokens"})
    )
    tail_max = tail_raw.get("max_tokens")
    fresh_tail = FreshTail(
        count=_check_int(tail_raw.get("count", 0), "/fresh_tail/count", 0),
        max_tokens=None if tail_max is None else _check_int(tail_max, "/fresh_tail/max_tokens", 0),
    )

    caps_raw = _check_object(req.get("category_caps", {}), "/category_caps")
    caps = {k: _check_int(v, pointer("category_caps", k), 0) for k, v in sorted(caps_raw.items())}

    strategy = _parse_strategy(req.get("strategy", {"name": "chronological"}))
    items = _parse_items(req["items"], counter)

    current_turn = req.get("current_turn")
    if current_turn is None:
        current_turn = int(items.turns.max()) if len(items) else 0
    else:
        current_turn = _check_int(current_turn, "/current_turn")

    return Request(
        items=items,
        prompt=prompt,
        budget_tokens=budget,
        max_items=max_items,
        fresh_tail=fresh_tail,
        current_turn=current_turn,
        token_counter=counter,
        trust_policy=trust_policy,
        strategy=strategy,
        ts=ts,
        scope=scope,
        category_caps=caps,
    )


def _parse_strategy(raw: Any) -> Strategy:
    """``{"name": ..., "params": {...}}`` or a spec string such as ``bm25(k1=1.5)``."""
    if type(raw) is str:
        name, params = parse_spec(raw, "/strategy")
        return build_strategy(name, params, "/strategy")
    spec = _check_object(raw, "/strategy", frozenset({"name", "params"}))
    if "name" not in spec:
        raise InputError("/strategy", "missing required field 'name'")
    name = _check_str(spec["name"], "/strategy/name", nonempty=True)
    params = _check_object(spec.get("params", {}), "/strategy/params")
    return build_strategy(name, params, "/strategy")
