"""The golden scenarios together exercise every strategy, reason code and request
field: a scenario set that quietly loses one fails here."""

from __future__ import annotations

from typing import Any

from packproof.evals.scenarios.yamlsafe import load_yaml
from packproof.packer.reasons import REASONS
from packproof.packer.schema import schema
from packproof.packer.strategies import REGISTRY
from tests.evals.scenarios.test_scenarios import ALL, SOURCES


def _written_fields() -> tuple[set[str], set[str]]:
    """Request and item fields written explicitly somewhere in the YAML sources."""
    request_fields: set[str] = set()
    item_fields: set[str] = set()

    def items_of(items: list[Any]) -> None:
        for it in items:
            if isinstance(it, list):
                item_fields.update(["id", "role", "text"] + (["tokens"] if len(it) == 4 else []))
            elif isinstance(it, dict):
                item_fields.update(it)

    for path in SOURCES:
        data, _ = load_yaml(path)
        defaults = data.get("defaults", {})
        request_fields.update(defaults.get("request", {}))
        item_fields.update(defaults.get("item", {}))
        for sc in data["scenarios"]:
            request_fields.update(sc["request"])
            items_of(sc["request"].get("items", []))
            for turn in sc.get("turns", []):
                request_fields.add("prompt")
                items_of(turn.get("items", []))
    return request_fields, item_fields


def test_every_strategy_has_an_expectation() -> None:
    named = {name for sc in ALL for turn in sc.turns for name in turn.expect}
    assert set(REGISTRY) <= named, sorted(set(REGISTRY) - named)


def test_every_reason_code_is_pinned_by_an_expectation() -> None:
    pinned = {
        code
        for sc in ALL
        for turn in sc.turns
        for exp in turn.expect.values()
        for codes in exp.get("reasons", {}).values()
        for code in codes
    }
    assert set(REASONS) <= pinned, sorted(set(REASONS) - pinned)


def test_every_request_field_is_written_in_some_scenario() -> None:
    request_fields, item_fields = _written_fields()
    properties = schema("request")["properties"]
    wanted_request = set(properties) - {"strategy"}  # strategies come from the registry
    wanted_items = set(properties["items"]["items"]["properties"])
    assert wanted_request <= request_fields, sorted(wanted_request - request_fields)
    assert wanted_items <= item_fields, sorted(wanted_items - item_fields)


def test_at_least_sixty_scenarios_each_with_a_why() -> None:
    assert len(ALL) >= 60, len(ALL)
    assert all(len(sc.why) >= 10 for sc in ALL)


def test_the_scenario_schemas_reason_enums_are_the_code_list() -> None:
    """An expectation's reasons are checked against the same list the trace has."""
    import json

    from packproof.evals.schemafiles import schema_text

    enums: list[list[str]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "enum" in node and "within_budget" in node["enum"]:
                enums.append(node["enum"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(schema_text("scenarios.v1.json")))
    assert enums and all(enum == list(REASONS) for enum in enums)
