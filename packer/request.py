"""The pack request (``packproof.request.v1``): validation and normalisation.

Items are held column-wise (lists and numpy arrays in ordinal order): packing
100k items is then a few vectorised passes instead of 100k objects. Validation
is done here, per column, so every error names the JSON pointer of the first bad
value; ``packer/schemas/request.v1.json`` is the on-disk contract and a property
test checks that it accepts exactly what this module accepts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from .cacheaware import (
    CacheAware,
    PreviousPack,
    check_previous_pack,
    parse_cache_aware,
    parse_previous_pack,
)
from .checks import (
    INT64_MAX,
    MISSING,
    check_choice,
    check_int,
    check_object,
    check_str,
    checked_column,
    codes,
    fail,
    int_array,
    nullable_str_column,
    read_columns,
    refuse_duplicates,
    types_within,
)
from .errors import InputError, pointer
from .lcm import content_block_tokens, priced_texts
from .model import (
    IMPORTANCE,
    KINDS,
    ROLES,
    SUMMARY,
    TRUST,
    TRUST_POLICIES,
    FreshTail,
    Items,
    content_block_mask,
)
from .records import RECORD_FIELDS, Retrieval, parse_record_fields, parse_retrieval, record_json
from .strategies import Strategy, strategy_from_json
from .tokens import COUNTERS, count_tokens

__all__ = [
    "DEFAULT_TS",
    "REQUEST_SCHEMA_ID",
    "Request",
    "parse_items",
    "parse_request",
    "replaced",
    "request_to_json",
]

REQUEST_SCHEMA_ID: Final = "packproof.request.v1"
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
        *RECORD_FIELDS,
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
        "cache_aware",
        "previous_pack",
        "retrieval",
    ]
)


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
    # Cache-aware packing (packer/cacheaware.py); None: packed as before.
    cache_aware: CacheAware | None = None
    previous_pack: PreviousPack | None = None
    # What a memory store's searches returned (packer/records.py); None: not given.
    retrieval: Retrieval | None = None


def replaced(req: Request, **changes: Any) -> Request:
    """``dataclasses.replace(req, **changes)`` without its field introspection or the
    frozen ``__init__``'s setattr per field (Request has no ``__post_init__``)."""
    if not changes.keys() <= (names := Request.__dataclass_fields__.keys()):
        raise TypeError(f"Request has no field {sorted(changes.keys() - names)[0]!r}")
    new = object.__new__(Request)
    new.__dict__.update(req.__dict__, **changes)
    return new


def _parse_items(raw: Any, counter: str) -> Items:
    if type(raw) is not list:
        raise fail("/items", "wrong type", "an array", raw)
    n = len(raw)
    if not set(map(type, raw)) <= {dict}:
        i = next(i for i, it in enumerate(raw) if type(it) is not dict)
        raise fail(pointer("items", i), "wrong type", "an object", raw[i])
    present: set[str] = set().union(*raw) if raw else set()
    unknown = present - _ITEM_FIELDS
    if unknown:
        first = next(i for i, it in enumerate(raw) if set(it) - _ITEM_FIELDS)
        key = sorted(set(raw[first]) - _ITEM_FIELDS)[0]
        raise fail(
            pointer("items", first, key),
            "unknown field",
            "one of " + ", ".join(sorted(_ITEM_FIELDS)),
            key,
        )
    columns = read_columns(raw, sorted(present))
    for key in ("id", "text"):
        values = columns.get(key)
        if n and (values is None or MISSING in values):
            at = 0 if values is None else values.index(MISSING)
            raise InputError(pointer("items", at), f"missing required field '{key}'")

    ids = checked_column(
        columns.get("id", []),
        "id",
        lambda v, w: check_str(v, w, nonempty=True),
        lambda vs: set(map(type, vs)) <= {str} and all(vs),
    )
    texts = checked_column(columns.get("text", []), "text", check_str, types_within(str))
    refuse_duplicates(ids, "id")
    ordinals = int_array(columns.get("ordinal"), "ordinal", None, np.arange(n, dtype=np.int64))
    if "ordinal" in columns:
        refuse_duplicates(ordinals.tolist(), "ordinal")

    def flag(key: str) -> np.ndarray:
        values = columns.get(key)
        if values is None:
            return np.zeros(n, dtype=bool)

        def check(v: Any, where: str) -> bool:
            if type(v) is not bool:
                raise fail(where, "wrong type", "a boolean", v)
            return v

        checked = checked_column(values, key, check, types_within(bool))
        return np.array([v is True for v in checked], dtype=bool)

    # Defaults chain: turn <- ordinal, last_mention_turn <- turn.
    turns = int_array(columns.get("turn"), "turn", None, ordinals)
    zeros = np.zeros(n, dtype=np.int64)
    kinds = codes(columns.get("kind"), "kind", KINDS, "message", n)
    roles = codes(columns.get("role"), "role", ROLES, "user", n)
    items = Items(
        ids=ids,
        texts=texts,
        ordinals=ordinals,
        roles=roles,
        kinds=kinds,
        tokens=_resolve_tokens(ids, texts, roles, kinds, columns.get("tokens"), counter),
        trust=codes(columns.get("trust"), "trust", TRUST, "unknown", n),
        importance=codes(columns.get("importance"), "importance", IMPORTANCE, "unknown", n),
        anchored=flag("anchored"),
        categories=nullable_str_column(columns.get("category"), "category", n),
        turns=turns,
        mentions=int_array(columns.get("mentions"), "mentions", 0, zeros),
        references=int_array(columns.get("references"), "references", 0, zeros),
        last_mention_turns=int_array(
            columns.get("last_mention_turn"), "last_mention_turn", None, turns
        ),
        urls=nullable_str_column(columns.get("url"), "url", n),
        records=parse_record_fields(columns, n),
    )
    order = np.argsort(items.ordinals, kind="stable")
    if n and not bool(np.all(order[:-1] < order[1:])):
        items = items.take(order, subset=False)
    return items


def _resolve_tokens(
    ids: list[str],
    texts: list[str],
    roles: np.ndarray,
    kinds: np.ndarray,
    given: list[Any] | None,
    counter: str,
) -> np.ndarray:
    """Given counts win; the rest are counted on the text the item occupies in the
    prompt (:func:`packproof.packer.lcm.priced_texts`): summaries in their XML envelope and,
    under the ``lcm`` counter, assistant and tool messages as lossless-claw's JSON
    content blocks."""
    missing = np.full(len(texts), -1, dtype=np.int64)
    out = missing if given is None else int_array(given, "tokens", 0, missing)
    todo = np.flatnonzero(out < 0)
    if not len(todo):
        return out
    if len(todo) < len(texts):
        pick = todo.tolist()
        ids, texts = [ids[i] for i in pick], [texts[i] for i in pick]
    out[todo] = count_tokens(priced_texts(ids, texts, kinds[todo] == SUMMARY, None), counter)
    if counter == "lcm":  # assistant and tool messages: their JSON content blocks
        blocks = np.flatnonzero(content_block_mask(roles[todo], kinds[todo]))
        if len(blocks):
            out[todo[blocks]] = content_block_tokens([texts[i] for i in blocks.tolist()])
    return out


def parse_items(raw: Any, counter: str = "lcm") -> Items:
    """Validate and normalise a request's ``items`` array on its own."""
    return _parse_items(raw, counter)


def parse_request(obj: Any, *, source: str | None = None, items: Items | None = None) -> Request:
    """Validate and normalise a request object (already JSON-decoded).

    ``items``: the request's items already parsed with its token counter (from
    its ``items`` array, or as a prefix of a larger table taken from one parse,
    which shares term statistics); they are not parsed again."""
    try:
        return _parse_request(obj, items)
    except InputError as exc:
        if source:
            raise exc.with_source(source) from None
        raise


def _parse_request(obj: Any, parsed: Items | None = None) -> Request:
    req = check_object(obj, "/", _REQUEST_FIELDS)
    if "schema" in req and req["schema"] != REQUEST_SCHEMA_ID:
        raise fail("/schema", "unsupported request schema", REQUEST_SCHEMA_ID, req["schema"])
    for key in ("items", "budget_tokens"):
        if key not in req:
            raise InputError("/", f"missing required field '{key}'")

    counter = check_choice(req.get("token_counter", "lcm"), "/token_counter", COUNTERS)
    budget = _check_budget(req["budget_tokens"])
    max_items = req.get("max_items")
    if max_items is not None:
        max_items = check_int(max_items, "/max_items", 1)
    prompt = check_str(req.get("prompt"), "/prompt", nullable=True)
    trust_policy = check_choice(req.get("trust_policy", "off"), "/trust_policy", TRUST_POLICIES)
    ts = check_str(req.get("ts", DEFAULT_TS), "/ts")
    scope = check_str(req.get("scope"), "/scope", nullable=True)

    tail_raw = check_object(
        req.get("fresh_tail", {}), "/fresh_tail", frozenset({"count", "max_tokens"})
    )
    fresh_tail = FreshTail(
        # lossless-claw protects nothing when freshTailCount <= 0
        count=max(0, check_int(tail_raw.get("count", 0), "/fresh_tail/count")),
        max_tokens=_tail_cap(tail_raw.get("max_tokens")),
    )

    caps_raw = check_object(req.get("category_caps", {}), "/category_caps")
    caps = {k: check_int(v, pointer("category_caps", k), 0) for k, v in sorted(caps_raw.items())}

    strategy = strategy_from_json(req.get("strategy", {"name": "chronological"}))
    items = _parse_items(req["items"], counter) if parsed is None else parsed

    cache_aware = parse_cache_aware(req.get("cache_aware"))
    previous = parse_previous_pack(req.get("previous_pack"), items)
    if previous is not None and cache_aware is None:
        raise InputError(
            "/previous_pack",
            "a previous pack is only read by cache-aware packing: give cache_aware too "
            "(or drop previous_pack)",
        )
    if previous is not None and cache_aware is not None:
        check_previous_pack(cache_aware, previous)

    current_turn = req.get("current_turn")
    if current_turn is None:
        current_turn = int(items.turns.max()) if len(items) else 0
    else:
        current_turn = check_int(current_turn, "/current_turn")

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
        cache_aware=cache_aware,
        previous_pack=previous,
        retrieval=parse_retrieval(req.get("retrieval")),
    )


def _check_budget(value: Any) -> int:
    """A positive integer. lossless-claw accepts 0 (and keeps only the fresh tail),
    but ContextPack v1 requires ``budgetTokens > 0``, so packproof refuses it."""
    if value == 0 and type(value) in (int, float):
        raise fail(
            "/budget_tokens",
            "out of range (ContextPack v1 needs budgetTokens > 0; lossless-claw would "
            "accept 0 and keep only the fresh tail)",
            "an integer >= 1",
            value,
        )
    return check_int(value, "/budget_tokens", 1)


def _tail_cap(value: Any) -> int | None:
    """``fresh_tail.max_tokens`` as lossless-claw reads ``freshTailMaxTokens``: a
    negative or non-finite number means no cap, a fractional one is floored."""
    where = "/fresh_tail/max_tokens"
    if value is None:
        return None
    if type(value) not in (int, float):
        raise fail(where, "wrong type", "a number or null", value)
    if value < 0 or not math.isfinite(value) or value > INT64_MAX:
        return None  # no cap (a cap above any sum of counts caps nothing)
    return check_int(math.floor(value), where, 0)


def request_to_json(req: Request, *, with_strategy: bool = True) -> dict[str, Any]:
    """The normalised JSON form of a request: every default filled, token counts
    resolved (so another counter is never consulted), items in ordinal order.
    ``parse_request`` of the result gives back an equal request."""
    items = req.items
    out: dict[str, Any] = {
        "schema": REQUEST_SCHEMA_ID,
        "prompt": req.prompt,
        "budget_tokens": req.budget_tokens,
        "max_items": req.max_items,
        "fresh_tail": {"count": req.fresh_tail.count, "max_tokens": req.fresh_tail.max_tokens},
        "current_turn": req.current_turn,
        "token_counter": req.token_counter,
        "trust_policy": req.trust_policy,
        "ts": req.ts,
        "scope": req.scope,
        "category_caps": dict(req.category_caps),
        "items": [
            {
                "id": items.ids[i],
                "text": items.texts[i],
                "ordinal": int(items.ordinals[i]),
                "role": ROLES[items.roles[i]],
                "kind": KINDS[items.kinds[i]],
                "tokens": int(items.tokens[i]),
                "trust": TRUST[items.trust[i]],
                "importance": IMPORTANCE[items.importance[i]],
                "anchored": bool(items.anchored[i]),
                "category": items.categories[i],
                "turn": int(items.turns[i]),
                "mentions": int(items.mentions[i]),
                "references": int(items.references[i]),
                "last_mention_turn": int(items.last_mention_turns[i]),
                "url": items.urls[i],
            }
            for i in range(len(items))
        ],
    }
    if items.records is not None:  # written only when given: older requests keep their bytes
        for i, item in enumerate(out["items"]):
            item.update(record_json(items.records, i))
    if with_strategy:
        out["strategy"] = req.strategy.spec()
    if req.cache_aware is not None:
        out["cache_aware"] = req.cache_aware.to_json()
    if req.previous_pack is not None:
        out["previous_pack"] = req.previous_pack.to_json(items)
    if req.retrieval is not None:
        out["retrieval"] = req.retrieval.to_json()
    return out
