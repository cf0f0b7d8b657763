"""The harness's JSON Schemas (``evals/schemas/*.json``), loaded once each."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator

__all__ = ["schema_text", "validator"]


def schema_text(filename: str) -> str:
    """The text of a shipped harness schema, e.g. ``"scenarios.v1.json"``."""
    return resources.files("packproof.evals").joinpath("schemas", filename).read_text("utf-8")


@cache
def validator(filename: str) -> Draft202012Validator:
    """A (cached) draft 2020-12 validator for a shipped harness schema."""
    loaded: Any = json.loads(schema_text(filename))
    return Draft202012Validator(loaded)
