"""The harness's JSON Schemas (``evals/schemas/*.json``): the files a user writes for
the harness (eval config, gates, search space, cache profiles, scenarios) and the
summary an eval writes, by the name ``packproof schema NAME`` takes; loaded once each.

jsonschema is imported when a validator is first built: the command line lists
these names when it starts, and ``packproof pack`` must not pay for jsonschema.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

__all__ = ["ABOUT", "SCHEMAS", "schema_text", "validator"]

# Name (as `packproof schema NAME` takes it) -> file in evals/schemas/.
SCHEMAS: Final = {
    "config": "eval-config.v1.json",
    "gates": "gates.v1.json",
    "space": "space.v1.json",
    "cache-profiles": "cache-profiles.v1.json",
    "scenarios": "scenarios.v1.json",
    "summary": "eval-summary.v1.json",
}
# Name -> what it describes, one line (`packproof schema` lists them).
ABOUT: Final = {
    "config": "an eval config, e.g. packproof.yaml: `packproof eval --config FILE`",
    "gates": "regression gates, e.g. gates.yaml: `packproof gate --gates FILE`",
    "space": "a search space: `packproof tune --space FILE`",
    "cache-profiles": "prompt-cache profiles: `packproof cache simulate --profiles FILE`, "
    "a config's cache.custom_profiles",
    "scenarios": "a scenario file, e.g. scenarios/example.yaml: `packproof scenarios compile`",
    "summary": "an eval run's summary.json, the file `packproof gate` reads",
}


def schema_text(filename: str) -> str:
    """The text of a shipped harness schema, e.g. ``"scenarios.v1.json"``."""
    return resources.files("packproof.evals").joinpath("schemas", filename).read_text("utf-8")


@cache
def validator(filename: str) -> Draft202012Validator:
    """A (cached) draft 2020-12 validator for a shipped harness schema."""
    from jsonschema import Draft202012Validator

    loaded: Any = json.loads(schema_text(filename))
    return Draft202012Validator(loaded)
