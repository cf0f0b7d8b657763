"""Which turns of a conversation see a prefix of one item list, so that the
runner parses that list once and gives each turn a window of the table.

A compiled suite says so itself (its compact form: ``Scenario.shared_items``). A
scenario built in memory (a benchmark's replay) lists each turn's items; when
they are prefixes of the longest list, the runner shares that one the same way,
and a turn whose list is not such a prefix is parsed alone, as before."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from packproof.evals.scenarios.format import Scenario
from packproof.packer.errors import InputError
from packproof.packer.model import Items

__all__ = ["longest_items", "pack_pairs", "prefix_of", "shared_table"]


def shared_table(
    scenario: Scenario,
    shared: list[Any],
    counter: str,
    derived: bool,
    parse: Callable[[Any, str], Items],
) -> Items | None:
    """``shared`` parsed once (``parse``: ``parse_items``), or None when its
    order is not the ordinal order (a prefix of it is then not a prefix of the
    table), or when a list ``derived`` by :func:`longest_items` does not parse
    (each turn is then parsed alone, with its own errors). A compiled list that
    does not parse is the scenario's error."""
    try:
        parsed = parse(shared, counter)
    except InputError as exc:
        if not derived:
            raise exc.with_source(f"scenario {scenario.id} ({scenario.file})") from None
        return None
    return parsed if parsed.ids == [it["id"] for it in shared] else None


def longest_items(scenario: Scenario, turns: Sequence[int]) -> list[Any] | None:
    """The longest item list of the turns (the first of the longest), if a list
    of objects (anything else is left to each turn's own parse to refuse)."""
    lists = [scenario.turns[k].request.get("items") for k in turns]
    longest = max(lists, key=lambda v: len(v) if type(v) is list else -1, default=None)
    if type(longest) is not list or not all(type(it) is dict for it in longest):
        return None
    return longest


def prefix_of(items: Any, shared: list[Any]) -> bool:
    """Whether ``items`` is a list equal to a prefix of ``shared`` (a replay's
    steps usually hold the same item objects: list equality tests identity first)."""
    if type(items) is not list or len(items) > len(shared):
        return False
    return items == (shared if len(items) == len(shared) else shared[: len(items)])


def pack_pairs(items: Items, order: list[int]) -> list[tuple[str, int]]:
    """``(id, tokens)`` of the packed items, in pack order (``order``: positions).
    The ids of a window (a replay step) are read from its table's, which spares
    copying the step's whole id list."""
    return list(zip(items.ids_at(order), items.tokens[order].tolist(), strict=True))
