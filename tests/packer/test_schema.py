"""The shipped schemas: openclaw-mem's ContextPack v1 rules, kept in step with the code."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from packproof.packer.reasons import REASONS
from packproof.packer.schema import SCHEMAS, schema, validate

from .helpers import msg, run


def good_pack() -> dict[str, Any]:
    return run(
        [msg("a", "hello", tokens=1), msg("b", "world", tokens=1)], 10, "bm25", prompt="hello"
    ).to_dict()


def test_our_packs_validate() -> None:
    assert validate("pack", good_pack()) == []


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["schema"], "openclaw-mem.context-pack.v99"),  # unknown version: never read as v1
        (["meta", "budgetTokens"], 0),
        (["meta", "maxItems"], -1),
        (["meta", "budgetTokens"], 1.5),
        (["items", 0, "citations", "recordRef"], ""),
        (["items", 0, "layer"], "L9"),
        (["trace", "candidates", 0, "decision", "reason"], ["made_up_reason"]),
        (["trace", "output", "coverage", "citationMissingCount"], 1),
    ],
)
def test_contract_violations_are_rejected(path: list[str | int], value: Any) -> None:
    pack = good_pack()
    node: Any = pack
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    assert validate("pack", pack) != []


@pytest.mark.parametrize("field", ["schema", "meta", "bundle_text", "items", "notes"])
def test_missing_top_level_fields_are_errors(field: str) -> None:
    pack = copy.deepcopy(good_pack())
    del pack[field]
    assert validate("pack", pack) != []


def test_additive_fields_are_allowed() -> None:
    pack = good_pack()
    pack["extension"] = {"anything": True}
    assert validate("pack", pack) == []


def test_trace_reason_enum_is_the_code_list() -> None:
    enum = schema("trace")["properties"]["candidates"]["items"]["properties"]["decision"][
        "properties"
    ]["reason"]["items"]["enum"]
    assert enum == list(REASONS)


def test_every_schema_is_draft_2020_12_with_an_id() -> None:
    for name in SCHEMAS:
        s = schema(name)
        assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert s["$id"].startswith("urn:packproof:schema:")
