"""The JSON Schemas shipped in the package (draft 2020-12), and validation."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # imported when first used: `packproof pack` never validates
    from jsonschema import Draft202012Validator
    from referencing import Registry

__all__ = ["ABOUT", "SCHEMAS", "schema", "schema_text", "validate", "validator"]

# Name (as `packproof schema NAME` takes it) -> file in packer/schemas/.
SCHEMAS: Final = {
    "request": "request.v1.json",
    "pack": "context-pack.v1.json",
    "trace": "trace.v1.json",
}
# Name -> what it describes, one line (`packproof schema` lists them).
ABOUT: Final = {
    "request": "a pack request: `packproof pack REQUEST`, what an external packer reads",
    "pack": "the ContextPack v1 `packproof pack` writes and an external packer answers",
    "trace": "a pack's trace: why every candidate is in or out",
}


def schema_text(name: str) -> str:
    """A shipped schema's text, as shipped (``KeyError`` if unknown)."""
    return resources.files("packproof.packer").joinpath("schemas", SCHEMAS[name]).read_text("utf-8")


@cache
def schema(name: str) -> dict[str, Any]:
    """A shipped schema by name (``KeyError`` if unknown)."""
    loaded: dict[str, Any] = json.loads(schema_text(name))
    return loaded


@cache
def _registry() -> Registry:
    from referencing import Registry, Resource

    return Registry().with_resources(
        (schema(n)["$id"], Resource.from_contents(schema(n))) for n in SCHEMAS
    )


@cache
def validator(name: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema(name), registry=_registry())


def validate(name: str, instance: Any) -> list[str]:
    """Every violation of schema ``name`` as ``"/json/pointer: message"`` lines."""
    errors = sorted(validator(name).iter_errors(instance), key=lambda e: list(e.absolute_path))
    return ["/" + "/".join(str(p) for p in e.absolute_path) + ": " + e.message for e in errors]
