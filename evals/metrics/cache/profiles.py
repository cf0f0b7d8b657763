"""Cache profiles from YAML data: a mapping from name to the fields of
:class:`~packproof.evals.metrics.cache.model.Profile` (schema ``cache-profiles.v1.json``),
checked with errors naming the file, line and JSON pointer. Used for a profiles
file and for the ``cache.custom_profiles`` of an eval config alike."""

from __future__ import annotations

import math
from typing import Any

from packproof.evals.metrics.cache.model import Profile
from packproof.evals.scenarios.yamlsafe import LineMap
from packproof.evals.schemafiles import best_error, validator, violation
from packproof.packer.errors import pointer

__all__ = ["profiles_from"]


def profiles_from(data: Any, lines: LineMap, at: str = "") -> dict[str, Profile]:
    """name -> :class:`Profile`, in the mapping's order; ``at`` is the mapping's
    JSON pointer in its file (errors point below it)."""
    err = best_error(validator("cache-profiles.v1.json").iter_errors(data))
    if err is not None:
        where = at + pointer(*err.absolute_path)
        message, detail = violation(err, yaml=True)
        raise lines.error(where, f"schema violation: {message}", **detail)
    out = {}
    for name, fields in data.items():
        for key in ("read", "write", "ttl_s", "long_context_factor"):  # .nan and .inf too
            if key in fields and not math.isfinite(fields[key]):
                raise lines.error(
                    at + pointer(name, key),
                    "not a finite number",
                    expected="a number",
                    found=fields[key],
                )
        ints = {
            key: int(fields[key])
            for key in (
                "min_tokens",
                "granularity",
                "lookback",
                "max_breakpoints",
                "long_context_tokens",
                "miss_seed",
            )
            if key in fields
        }
        out[name] = Profile(**{**fields, **ints})  # the schema takes 1024.0 as an integer
    return out
