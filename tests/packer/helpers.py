"""Small builders for test requests."""

from __future__ import annotations

from typing import Any

from packproof.packer import PackResult, pack


def msg(
    item_id: str, text: str = "", role: str = "user", tokens: int | None = None, **extra: Any
) -> dict[str, Any]:
    item: dict[str, Any] = {"id": item_id, "text": text, "role": role, **extra}
    if tokens is not None:
        item["tokens"] = tokens
    return item


def run(
    items: list[dict[str, Any]],
    budget: int,
    strategy: str = "chronological",
    params: dict[str, Any] | None = None,
    **request: Any,
) -> PackResult:
    spec = {"name": strategy, "params": params or {}}
    return pack({"items": items, "budget_tokens": budget, "strategy": spec, **request})


def reasons(result: PackResult) -> dict[str, list[str]]:
    trace = result.to_dict()["trace"]
    return {c["id"]: c["decision"]["reason"] for c in trace["candidates"]}
