"""The harness's JSON Schemas (``evals/schemas/*.json``): the files a user writes for
the harness (eval config, gates, search space, cache profiles, scenarios) and the
summary an eval writes, by the name ``packproof schema NAME`` takes; loaded once each.

jsonschema is imported when a validator is first built: the command line lists
these names when it starts, and ``packproof pack`` must not pay for jsonschema.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

__all__ = ["ABOUT", "SCHEMAS", "best_error", "schema_text", "validator", "violation"]

_MAX_MESSAGE: Final = 160
_YAML_TEXT: Final = {  # what YAML made of an unquoted scalar where text belongs
    bool: "a boolean (YAML reads an unquoted yes, no, on, off, true or false as one)",
    int: "a number",
    float: "a number",
    type(None): "null (YAML reads an empty value or ~ as null)",
}

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


def best_error(errors: Iterable[ValidationError]) -> ValidationError | None:
    """The violation to report: jsonschema's ``best_match``, except that an
    ``anyOf``/``oneOf`` whose value has the shape of one branch only (an array of
    4 where one branch takes 3 items and another 4, an object where the others
    are arrays) is explained by that branch's own errors, not by the deepest
    error of a branch the value was never meant for (``/items/0/3: true is not a
    string``, not ``/items/0/2: 5 is not a string`` from the 3-item form)."""
    from jsonschema.exceptions import relevance

    best = max(errors, key=relevance, default=None)
    while best is not None and best.context:
        branches: dict[Any, list[ValidationError]] = {}
        for sub in best.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        # a branch fits when none of its errors is about the value itself
        # (its type, its length, a missing key): only about what it holds
        fitting = [errs for errs in branches.values() if all(e.relative_path for e in errs)]
        if len(fitting) == 1:
            return best_error(fitting[0])
        smallest = heapq.nsmallest(2, best.context, key=relevance)  # as best_match descends
        if len(smallest) == 2 and relevance(smallest[0]) == relevance(smallest[1]):
            return best
        best = smallest[0]
    return best


def violation(err: ValidationError, *, yaml: bool = False) -> tuple[str, dict[str, Any]]:
    """A violation as one line: (message, detail for
    :class:`~packproof.packer.errors.InputError`: expected and found). A long
    value in the message is shortened (what is wrong with it stays in the line).
    With ``yaml``, text that YAML read as another type (``yes`` as a boolean,
    ``5`` as a number) is said to be so, with the fix: quote it."""
    types: Any = err.validator_value if err.validator == "type" else None
    wanted = [types] if isinstance(types, str) else list(types or [])
    made = _YAML_TEXT.get(type(err.instance))
    if yaml and made is not None and "string" in wanted and len(wanted) == 1:
        return (
            f"text expected, but YAML read {made}: quote it",
            {"expected": "a string", "found": err.instance},
        )
    message = " ".join(str(err.message).split())
    try:
        shown = repr(err.instance)
    except ValueError:  # an integer too long to print
        shown = ""
    if len(shown) > 48 and shown in message:
        message = message.replace(shown, f"{shown[:40]}...{shown[-1]} ({len(shown)} characters)")
    if len(message) > _MAX_MESSAGE:
        message = message[: _MAX_MESSAGE - 3] + "..."
    return message, {}
