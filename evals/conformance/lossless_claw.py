"""lossless-claw's real ``ContextAssembler`` (commit 4214b48), by its recorded outputs.

Each case (``../shared/data/lossless-claw/assembler-cases.jsonl.gz``) holds a packproof
request (``token_counter: lcm``, no strategy) and what the assembler selected for it,
as ids in pack order and a mode, with prompt-aware eviction off (``chronological``)
and on (``bm25lite``). packproof must select the same ids in the same order and the
same mode. The token counts and scored texts the assembler recorded
(``lossless_claw``) only explain a difference: they are never fed back.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from packproof.evals.conformance.cases import Difference, Peer, register
from packproof.packer import pack
from packproof.packer.errors import InputError, pointer

__all__ = ["LCM_MODE", "PEER"]

# lossless-claw's name for each of packproof's modes.
LCM_MODE: Final = {
    "full-fit": "full-fit",
    "chronological": "chronological",
    "ranked": "prompt-aware",
}
STRATEGIES: Final = ("chronological", "bm25lite")


def _field(case: Mapping[str, Any], *path: str) -> Any:
    value: Any = case
    for depth, key in enumerate(path):
        if not isinstance(value, Mapping) or key not in value:
            raise InputError(
                pointer(*path[: depth + 1]), "missing", expected=f"a case's {key!r}", found=None
            )
        value = value[key]
    return value


def _pack(case: Mapping[str, Any], strategy: str) -> Any:
    request = _field(case, "request")
    if not isinstance(request, Mapping):
        raise InputError("/request", "not an object", expected="a request", found=request)
    try:
        return pack({**request, "strategy": strategy})
    except InputError as exc:
        where = "/request" + (exc.where if exc.where.startswith("/") else "")
        raise InputError(where, exc.message, expected=exc.expected, found=exc.found) from None


def check(case: Mapping[str, Any]) -> list[Difference]:
    """Selected ids (in pack order) and mode under each recorded strategy."""
    expected = _field(case, "expected")
    if not isinstance(expected, Mapping) or not expected:
        raise InputError(
            "/expected",
            "no recorded strategy",
            expected="an object keyed by " + " or ".join(STRATEGIES),
            found=expected,
        )
    out = []
    for strategy in sorted(expected):
        if strategy not in STRATEGIES:
            raise InputError(
                pointer("expected", strategy),
                "not a strategy lossless-claw has",
                expected=" or ".join(STRATEGIES),
                found=strategy,
            )
        selected = _field(case, "expected", strategy, "selected")
        mode = _field(case, "expected", strategy, "mode")
        result = _pack(case, strategy)
        if result.selected_ids != selected:
            out.append(Difference(f"{strategy}: selected", selected, result.selected_ids))
        if LCM_MODE[result.mode] != mode:
            out.append(Difference(f"{strategy}: mode", mode, LCM_MODE[result.mode]))
    return out


def diagnose(case: Mapping[str, Any]) -> str:
    """The items whose price differs from the assembler's: where a difference comes from."""
    recorded = (case.get("lossless_claw") or {}).get("tokens") or {}
    items = _pack(case, "chronological").request.items
    priced = [
        f"{ref} ours {int(items.tokens[i])}, theirs {recorded[ref]}"
        for i, ref in enumerate(items.ids)
        if ref in recorded and int(items.tokens[i]) != recorded[ref]
    ]
    return "token counts that differ: " + ("; ".join(priced) if priced else "none")


PEER: Final = register(
    Peer(
        name="lossless-claw",
        system="lossless-claw's ContextAssembler, commit 4214b48",
        default_file=Path("../shared/data/lossless-claw/assembler-cases.jsonl.gz"),
        check=check,
        diagnose=diagnose,
    )
)
