"""Cache-aware packing: options every strategy shares, like the fresh tail.

A provider's prompt cache reuses a prompt's prefix only where it matches the
previous prompt exactly (REFERENCE.md section 5), so a pack that re-selects its
items at every turn pays for the whole prompt again. With ``cache_aware`` set,
a request may carry the previous pack (its recordRefs in order) and the seconds
since it was sent, and the pack is assembled in two parts:

- the **stable part** keeps the previous pack as an unchanged prefix and appends
  what arrived since (and any protected item it lacks), while that fits under
  the high-water mark (the budget less the recall share). Only when it would
  not fit is it **compacted**: re-selected by the strategy down to the
  low-water mark (``low_water`` x budget), so the prefix breaks only then. When
  the previous pack is older than ``ttl_s`` the cache is gone anyway and the
  stable part is re-selected the same way at no extra cost (lossless-claw PR
  #385's idea). The first pack of a conversation is selected the same way,
  keeping everything when everything fits under the high-water mark.
- the **recall block** (``recall_share`` x budget tokens) holds the strategy's
  top-ranked candidates (within its first ``recall_depth``) that the stable part
  lacks, placed after the stable part (only the prompt's end changes; the next
  pack keeps it in its prefix) or first (as lossless-claw PR #765 does, which
  changes the prefix: issue #1169). With ``carry_recall`` (the default) the
  block is part of the pack the next request gives back, so it joins the next
  stable part; without it the next request gives the block back apart
  (``recall_refs``) and the pack re-decides it after the unchanged stable part:
  recomputed or, between refreshes (``recall_refresh``), kept as it was, so a
  block placed first stays a cached prefix.

The pack suggests where a caller puts its cache breakpoints: after the part
that the next step keeps (the stable part, or the recall block placed first),
and at the end of the pack.

This module holds the options and the previous pack as a request gives them;
:mod:`.cacheassembly` assembles the pack. Packing stays a pure function of the
request. Requests without ``cache_aware`` are packed exactly as before (ordinal
order, the same bytes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Final

import numpy as np

from .checks import check_int, check_object, fail
from .errors import InputError, pointer
from .model import Items

__all__ = [
    "ACTIONS",
    "PLACEMENTS",
    "REFRESHES",
    "CacheAware",
    "PreviousPack",
    "check_previous_pack",
    "parse_cache_aware",
    "parse_previous_pack",
]

PLACEMENTS: Final = ("after", "first")
# When a recall block that is not carried forward is recomputed:
# at every step; every ``recall_every`` steps; only when the stable part is
# re-selected by a compaction; when the prompt's best candidate score reaches
# ``recall_gate``.
REFRESHES: Final = ("each", "every", "compaction", "gate")
# What the stable part did: kept the previous pack and appended; re-selected
# because it would overflow; re-selected because the cache had gone cold; the
# first pack (no previous pack given).
ACTIONS: Final = ("append", "compact", "cold", "first")
# Per item placement codes (PackResult.placement).
P_NONE, P_STABLE, P_RECALL = 0, 1, 2
PLACEMENT_NAMES: Final = (None, "stable", "recall")


@dataclass(frozen=True)
class CacheAware:
    """The shared cache-aware options (see the module docstring)."""

    low_water: float = 0.6
    recall_share: float = 0.0
    recall_depth: int = 20
    placement: str = "after"
    ttl_s: float = 300.0
    carry_recall: bool = True
    recall_refresh: str = "each"
    recall_every: int = 20
    recall_gate: float = 1.0

    def params(self) -> dict[str, Any]:
        """Every option by name (the canonical spec string lists them all)."""
        return {f.name: getattr(self, f.name) for f in sorted(fields(self), key=lambda f: f.name)}

    @property
    def extended(self) -> bool:
        """Whether a recall-block option (carrying and refreshing the recall
        block) differs from its default."""
        return any(getattr(self, k) != _DEFAULTS[k] for k in RECALL_OPTIONS)

    def to_json(self) -> dict[str, Any]:
        """The options as a request and a trace write them: the recall-block
        options only when one differs from its default, so requests and traces
        written before they existed keep their bytes (the golden packs)."""
        params = self.params()
        if not self.extended:
            for key in RECALL_OPTIONS:
                del params[key]
        return params


_OPTIONS: Final = frozenset(f.name for f in fields(CacheAware))
_DEFAULTS: Final = {f.name: f.default for f in fields(CacheAware)}
# The recall-block options, and the refresh policy that reads each parameter.
RECALL_OPTIONS: Final = ("carry_recall", "recall_every", "recall_gate", "recall_refresh")
_READ_BY: Final = {"recall_every": "every", "recall_gate": "gate"}
OPTION_DOCS: Final = {
    "low_water": "share of the budget a compaction re-selects the stable part down to (0 < x <= 1)",
    "recall_share": "share of the budget held for the recall block (0 <= x < 1; low_water + "
    "recall_share <= 1)",
    "recall_depth": "the recall block draws on the strategy's first N ranked candidates (N >= 1)",
    "placement": "where the recall block goes: after the stable part, or first",
    "ttl_s": "seconds after which the previous pack's cache is cold and the stable part is "
    "re-selected freely (0: never)",
    "carry_recall": "true: the recall block joins the next step's stable part; false: the next "
    "request gives it back apart (previous_pack.recall_refs) and it is re-decided",
    "recall_refresh": "when a recall block not carried forward is recomputed: each step, every "
    "recall_every steps, on compaction, or when the best score reaches recall_gate",
    "recall_every": "recall_refresh=every: the steps a recall block serves (N >= 1)",
    "recall_gate": "recall_refresh=gate: the strategy's best candidate score that recomputes "
    "the block (in the strategy's score units)",
}


def check_option(key: str, value: Any, where: str) -> Any:
    """One option's value, checked (numbers become floats, counts ints)."""
    choices = {"placement": PLACEMENTS, "recall_refresh": REFRESHES}.get(key)
    if choices is not None:
        if type(value) is not str or value not in choices:
            raise fail(where, "unknown value", "one of " + "|".join(choices), value)
        return value
    if key == "carry_recall":
        if type(value) is not bool:
            raise fail(where, "wrong type", "a boolean (true or false)", value)
        return value
    if type(value) not in (int, float) or not math.isfinite(value):
        raise fail(where, "wrong type", "a finite number", value)
    if key in ("recall_depth", "recall_every"):
        if value != int(value) or value < 1:
            raise fail(where, "out of range", "an integer >= 1", value)
        return int(value)
    if key == "recall_gate":
        return float(value)
    ranges = {
        "low_water": (value <= 0 or value > 1, "a number > 0 and <= 1"),
        "recall_share": (value < 0 or value >= 1, "a number >= 0 and < 1"),
        "ttl_s": (value < 0, "a number >= 0"),
    }
    bad, expected = ranges[key]
    if bad:
        raise fail(where, "out of range", expected, value)
    return float(value)


def build_cache_aware(values: Mapping[str, Any], where: str = "/cache_aware") -> CacheAware:
    """Options from user-given values, every one checked (unknown keys named)."""
    kwargs: dict[str, Any] = {}
    for key in sorted(values):
        at = where + pointer(key)
        if key not in _OPTIONS:
            raise fail(
                at, "unknown cache-aware option", "one of " + ", ".join(sorted(_OPTIONS)), key
            )
        kwargs[key] = check_option(key, values[key], at)
    options = CacheAware(**kwargs)
    if options.low_water + options.recall_share > 1:
        raise fail(
            where,
            "low_water + recall_share exceeds 1 (the stable part and the recall block share "
            "the budget)",
            "a sum <= 1",
            options.low_water + options.recall_share,
        )
    if options.carry_recall and options.recall_refresh != "each":
        raise fail(
            where + "/recall_refresh",
            "a recall block carried into the next stable part is recomputed at each step "
            "(give carry_recall=false to refresh it less often)",
            "each",
            options.recall_refresh,
        )
    for key, policy in _READ_BY.items():
        if getattr(options, key) != _DEFAULTS[key] and options.recall_refresh != policy:
            raise fail(
                where + pointer(key),
                f"only read by recall_refresh={policy}, and recall_refresh is "
                f"{options.recall_refresh}",
                f"{key} left out, or recall_refresh={policy}",
                getattr(options, key),
            )
    return options


def parse_cache_aware(raw: Any) -> CacheAware | None:
    """The request's ``cache_aware`` object (None when absent or null)."""
    if raw is None:
        return None
    return build_cache_aware(check_object(raw, "/cache_aware"))


@dataclass(frozen=True, eq=False)
class PreviousPack:
    """The previous pack as positions into the request's items, in pack order,
    and the seconds since it was sent (None: unknown, never cold). With
    ``carry_recall`` false, ``positions`` is its stable part and ``recall`` its
    recall block (in block order; None: not given), which was recomputed
    ``recall_age`` steps before that pack (0: for that pack; None: not given)."""

    positions: np.ndarray
    elapsed_s: float | None
    recall: np.ndarray | None = None
    recall_age: int | None = None

    def held(self) -> np.ndarray:
        """Every position the previous pack held: its stable part and recall block."""
        return (
            self.positions if self.recall is None else np.concatenate([self.positions, self.recall])
        )

    def sent(self, placement: str) -> np.ndarray:
        """The previous pack in the order it was sent, for the kept prefix."""
        if self.recall is None:
            return self.positions
        parts = (
            [self.recall, self.positions] if placement == "first" else [self.positions, self.recall]
        )
        return np.concatenate(parts)

    def to_json(self, items: Items) -> dict[str, Any]:
        out: dict[str, Any] = {
            "record_refs": [items.ids[i] for i in self.positions.tolist()],
            "elapsed_s": self.elapsed_s,
        }
        if self.recall is not None:  # written only when given: older requests keep their bytes
            out["recall_refs"] = [items.ids[i] for i in self.recall.tolist()]
        if self.recall_age is not None:
            out["recall_age"] = self.recall_age
        return out


def _refs(obj: Mapping[str, Any], key: str, items: Items, taken: Mapping[str, str]) -> np.ndarray:
    """``previous_pack[key]`` as positions: every ref one of the request's items,
    once, and none already named by another list of ``taken`` (ref -> pointer)."""
    refs = obj[key]
    if type(refs) is not list:
        raise fail(pointer("previous_pack", key), "wrong type", "an array of item ids", refs)
    position = items.position
    out = np.empty(len(refs), dtype=np.int64)
    first: dict[str, int] = {}
    for k, ref in enumerate(refs):
        where = pointer("previous_pack", key, k)
        if type(ref) is not str:
            raise fail(where, "wrong type", "an item id (string)", ref)
        if ref in first:
            raise InputError(
                where,
                f"repeated id {ref!r} in the previous pack (first at "
                f"{pointer('previous_pack', key, first[ref])})",
            )
        if ref in taken:
            raise InputError(
                where,
                f"id {ref!r} is also at {taken[ref]}: an item is in the stable part or in the "
                "recall block, not both",
            )
        at = position.get(ref)
        if at is None:
            raise fail(where, "unknown id (not one of the request's items)", "an item id", ref)
        first[ref] = k
        out[k] = at
    out.flags.writeable = False
    return out


def parse_previous_pack(raw: Any, items: Items) -> PreviousPack | None:
    """The request's ``previous_pack``: every recordRef must name one of the
    request's items, once (in ``record_refs`` and ``recall_refs`` together);
    ``elapsed_s`` is a finite number >= 0 or null; ``recall_age`` an integer
    >= 0, given only with ``recall_refs``."""
    if raw is None:
        return None
    obj = check_object(
        raw,
        "/previous_pack",
        frozenset({"record_refs", "elapsed_s", "recall_refs", "recall_age"}),
    )
    if "record_refs" not in obj:
        raise InputError("/previous_pack", "missing required field 'record_refs'")
    out = _refs(obj, "record_refs", items, {})
    recall = None
    if "recall_refs" in obj:
        stable = {
            items.ids[i]: pointer("previous_pack", "record_refs", k)
            for k, i in enumerate(out.tolist())
        }
        recall = _refs(obj, "recall_refs", items, stable)
    age = obj.get("recall_age")
    if "recall_age" in obj:
        if recall is None:
            raise InputError(
                "/previous_pack/recall_age",
                "recall_age is the age of the previous recall block: give recall_refs too",
            )
        age = check_int(age, "/previous_pack/recall_age", 0)
    elapsed = obj.get("elapsed_s")
    if elapsed is not None:
        if type(elapsed) not in (int, float) or not math.isfinite(elapsed):
            raise fail("/previous_pack/elapsed_s", "wrong type", "a finite number or null", elapsed)
        if elapsed < 0:
            raise fail("/previous_pack/elapsed_s", "out of range", "a number >= 0", elapsed)
        elapsed = float(elapsed)
    return PreviousPack(out, elapsed, recall, age)


def check_previous_pack(options: CacheAware, previous: PreviousPack) -> None:
    """A previous pack that the options can read: its recall block given apart
    only when it is not carried forward, and with its age when the refresh
    policy counts steps."""
    if previous.recall is not None and options.carry_recall:
        raise InputError(
            "/previous_pack/recall_refs",
            "with carry_recall (the default) the recall block is part of record_refs: give "
            "cache_aware.carry_recall false, or drop recall_refs",
        )
    if (
        previous.recall is not None
        and previous.recall_age is None
        and options.recall_refresh == "every"
    ):
        raise InputError(
            "/previous_pack",
            "missing field 'recall_age': recall_refresh=every counts the steps since the recall "
            "block was recomputed",
        )
