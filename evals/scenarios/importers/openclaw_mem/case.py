"""A native openclaw-mem case's ``input`` as a packproof request (``packproof.request.v1``).

The input is what openclaw-mem's ``pack`` reads (``../shared/data/openclaw-mem/README.md``):
its argv, its ``OPENCLAW_MEM_*`` settings, the clock, standard input, the rows of its
``observations`` table and the ranked id lists its searches returned. The request
holds every row as a ``memory`` item ``obs:N`` (ordinal N) carrying what openclaw-mem
derives from the row (:mod:`.records`, :mod:`.synthesis`), the tail lines as ``message``
items ``tail:1..n`` after every record, the search lists as ``retrieval``, and the
strategy ``openclaw-mem`` with the parameters the argv and settings give. Only
``input`` is read: a case's ``expected`` and ``diagnostics`` never are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NamedTuple

from packproof.packer.checks import INT64_MAX
from packproof.packer.errors import InputError, pointer

from .options import Options, Settings, parse_args, parse_env, strategy_params
from .records import (
    importance_score,
    item_text,
    lifecycle_state,
    pack_importance,
    parse_detail,
    superseded_ids,
    trust_tier,
    used_count,
)
from .synthesis import CARD_TOOL, card_sources, is_fresh
from .tail import tail_lines

__all__ = ["LANES", "STRATEGY", "Derived", "case_request", "derive"]

STRATEGY: Final = "openclaw-mem"
LANES: Final = ("fts", "vector", "vector_en")
_TEXT_FIELDS: Final = ("ts", "kind", "tool_name", "summary", "summary_en", "lang", "detail_json")


class Derived(NamedTuple):
    """A case's request (a JSON object), and the options and settings read to make it."""

    request: dict[str, Any]
    options: Options
    settings: Settings


def _field(obj: Mapping[str, Any], key: str, where: str, kind: type | tuple[type, ...]) -> Any:
    if key not in obj:
        raise InputError(where, f"missing required field '{key}'")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        expected = (
            kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        )
        raise InputError(where + pointer(key), "wrong type", expected=expected, found=value)
    return value


def _rows(raw: Any) -> dict[int, dict[str, Any]]:
    """The observation rows by id: objects with an integer ``id`` no other row has and
    text fields that are strings or null."""
    where = "/input/observations"
    if not isinstance(raw, list):
        raise InputError(where, "wrong type", expected="an array of rows", found=raw)
    rows: dict[int, dict[str, Any]] = {}
    for k, row in enumerate(raw):
        at = f"{where}/{k}"
        if not isinstance(row, dict):
            raise InputError(at, "wrong type", expected="an observations row", found=row)
        ident = _field(row, "id", at, int)
        if ident in rows:
            raise InputError(f"{at}/id", f"row id {ident} is already a row's id")
        for key in _TEXT_FIELDS:
            value = row.get(key)
            if value is not None and not isinstance(value, str):
                raise InputError(
                    at + pointer(key), "wrong type", expected="a string or null", found=value
                )
        rows[ident] = row
    return rows


def _retrieval(raw: Any) -> dict[str, list[str]]:
    """The lanes' ranked ids as item ids, each id once per lane."""
    where = "/input/retrieval"
    if not isinstance(raw, dict):
        raise InputError(where, "wrong type", expected="an object of id lists", found=raw)
    out: dict[str, list[str]] = {}
    for lane in LANES:
        ids = raw.get(lane, [])
        at = where + pointer(lane)
        if not isinstance(ids, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in ids
        ):
            raise InputError(at, "wrong type", expected="an array of integer ids", found=ids)
        if len(set(ids)) != len(ids):
            raise InputError(at, "an id is listed twice", expected="each id once", found=ids)
        out[lane] = [f"obs:{i}" for i in ids]
    return out


def _record(
    row: Mapping[str, Any], rows: Mapping[int, Mapping[str, Any]], at: str
) -> dict[str, Any]:
    """One row as a request item."""
    detail = parse_detail(row.get("detail_json"))
    text = item_text(row, detail)
    item: dict[str, Any] = {
        "id": f"obs:{row['id']}",
        "text": text,
        "ordinal": row["id"],
        "kind": "memory",
        "trust": trust_tier(detail),
        "importance": pack_importance(detail),
        "importance_score": importance_score(detail),
        "lifecycle": lifecycle_state(detail),
        # a count past int64 is past the use boost's cap (1.3 from 19 uses) all the same
        "used_count": min(used_count(detail), INT64_MAX),
        "ts": row.get("ts"),
        "record_kind": row.get("kind"),
    }
    item = {k: v for k, v in item.items() if v is not None}  # null: the field's default
    if not text:
        item["tokens"] = 0  # openclaw-mem counts an empty text 0, not the estimate's 1
    superseded = superseded_ids(detail)
    if superseded:
        item["supersedes"] = [f"obs:{i}" for i in superseded]
    if row.get("tool_name") == CARD_TOOL:
        sources = card_sources(detail, f"{at}/detail_json")
        item["synthesis"] = {"sources": sources, "fresh": is_fresh(detail, sources, rows)}
    return item


def derive(case: Mapping[str, Any]) -> Derived:
    """The request of a case (:func:`case_request`), with its options and settings."""
    inp = _field(case, "input", "", dict)
    settings = parse_env(inp.get("env", {}))
    options = parse_args(inp.get("args"), settings)
    # no clock (a golden row): packproof's default ts, which only the composite profile reads
    now = _field(inp, "now", "/input", str) if "now" in inp else None
    rows = _rows(inp.get("observations"))
    content = None
    if options.tail_file is not None:
        if options.tail_file != "-":
            raise InputError(
                "/input/args",
                "--tail-file names a file the case does not hold",
                expected="--tail-file - with the case's stdin",
                found=options.tail_file,
            )
        content = _field(inp, "stdin", "/input", str)
    lines = tail_lines(options.tail_texts, content, options.tail_max_items)
    items = [_record(rows[i], rows, f"/input/observations/{k}") for k, i in enumerate(rows)]
    last = max(rows, default=0)
    items += [
        {"id": f"tail:{k}", "text": line, "ordinal": last + k, "kind": "message", "role": "user"}
        for k, line in enumerate(lines, 1)
    ]
    request = {
        "schema": "packproof.request.v1",
        "prompt": options.query,
        "budget_tokens": options.budget,
        "max_items": options.limit,
        "token_counter": "chars4",
        "trust_policy": "off" if options.trust_policy == "off" else "exclude_quarantined",
        **({"ts": now} if now is not None else {}),
        "fresh_tail": {"count": len(lines)},
        "retrieval": _retrieval(inp.get("retrieval", {})),
        "strategy": {"name": STRATEGY, "params": strategy_params(options, settings)},
        "items": items,
    }
    return Derived(request, options, settings)


def case_request(case: Mapping[str, Any]) -> dict[str, Any]:
    """A case's ``input`` as a packproof request (a JSON object, strategy included)."""
    return derive(case).request
