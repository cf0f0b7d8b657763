"""What a scenario must be beyond its schema, checked alike where it is compiled
from YAML (compile.py) and where a compiled mirror is read back (format.py): a
mirror may be edited by hand or written by another tool, whose sha256 proves no
more than that the tool hashed what it wrote.

- a compiled line has the shape of ``scenarios.v1.json#/$defs/compiled``, and
  a compact scenario's turns see a prefix of its items (``items_upto``);
- a replay's turns all have a finite time ``t``, in time order; a step adds
  items and asks its newest item's text, a probe adds none and asks a prompt;
- relevant and expected ids are items of the turn's request, and expectations
  name registered strategies, or specs of one with valid parameters written as
  the spec's label (``openclaw-mem(profile=relevance)``: the parameters that
  differ from the defaults, sorted, as the eval's cells name them).

Each request itself is checked by the packer when its cell runs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Container, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from packproof.evals.scenarios.yamlsafe import LineMap
from packproof.evals.schemafiles import schema_text
from packproof.packer.errors import InputError, pointer
from packproof.packer.strategies import REGISTRY, build_strategy, parse_spec

if TYPE_CHECKING:
    from packproof.evals.scenarios.format import Turn

__all__ = [
    "ALL",
    "AtLine",
    "FirstItems",
    "check_compiled",
    "check_references",
    "check_replay",
    "first_positions",
]

ALL: Final = "*"  # an expectation for every strategy


class AtLine(LineMap):
    """Errors of one line of a compiled file: ``line N /pointer``."""

    def __init__(self, source: str, number: int) -> None:
        super().__init__(source)
        self.number = number

    def error(self, where: str, message: str, **detail: Any) -> InputError:
        return InputError(
            f"line {self.number} {where}".rstrip(), message, source=self.source, **detail
        )


@cache
def _compiled_validator() -> Any:
    """The validator of one compiled line: ``$defs/compiled`` with its references
    (into the source schema's definitions) put in place once, as jsonschema
    resolving them at every turn of a long replay took most of the reading."""
    from jsonschema import Draft202012Validator

    root = json.loads(schema_text("scenarios.v1.json"))

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                target = root
                for part in ref[2:].split("/"):
                    target = target[part]
                return inline(target)
            return {k: inline(v) for k, v in node.items()}
        return [inline(v) for v in node] if isinstance(node, list) else node

    return Draft202012Validator(inline(root["$defs"]["compiled"]))


def check_compiled(obj: dict[str, Any], at: LineMap) -> list[int]:
    """Check a compiled line's shape and its compact form; return how many
    items each turn sees."""
    from jsonschema.exceptions import best_match

    err = best_match(_compiled_validator().iter_errors(obj))
    if err is not None:
        message = " ".join(str(err.message).split())
        raise at.error(
            pointer(*err.absolute_path) or "/", f"not a compiled scenario: {message[:160]}"
        )
    shared = obj.get("items")
    counts = []
    for k, turn in enumerate(obj["turns"]):
        request, here = turn["request"], f"/turns/{k}/request"
        if shared is None:
            if "items" not in request:
                raise at.error(here, "a turn's request needs its items", expected="items")
            counts.append(len(request["items"]))
            continue
        upto = request.get("items_upto")
        if "items" in request or not isinstance(upto, int) or upto > len(shared):
            raise at.error(
                f"{here}/items_upto",
                "not a count of the scenario's items (its compact form)",
                expected=f"an integer in [0, {len(shared)}] and no items",
                found=upto,
            )
        counts.append(upto)
    return counts


def check_replay(turns: Sequence[Turn], counts: Sequence[int], at: LineMap) -> None:
    """A replay's turns (some turn has a time), each seeing ``counts`` items."""
    last_t, seen = 0.0, 0
    for k, (turn, count) in enumerate(zip(turns, counts, strict=True)):
        here = f"/turns/{k}"
        if turn.t is None:
            raise at.error(
                here, "a replay step needs its time t (seconds), as the other steps have"
            )
        if not math.isfinite(turn.t) or turn.t < last_t:
            raise at.error(
                f"{here}/t",
                "replay steps out of time order",
                expected=f"a finite t >= {last_t:g}",
                found=turn.t,
            )
        last_t, added, seen = turn.t, count - seen, count
        prompt, items = turn.request.get("prompt"), turn.request["items"]
        if turn.probe:
            if added or prompt is None:
                raise at.error(
                    here,
                    "a probe does not advance the conversation: it adds no items and asks a prompt",
                    expected="no new item and a prompt",
                    found=f"{added} new items and prompt {prompt!r}",
                )
            continue
        newest = items[-1].get("text") if items and isinstance(items[-1], dict) else None
        if added < 1 or prompt != newest:
            raise at.error(
                here,
                "a replay step appends items and asks its newest item's text",
                expected="a new item and its text as the prompt",
                found=f"{added} new items and prompt {prompt!r}",
            )


class FirstItems:
    """The ids of a list's first ``count`` items (a compact scenario's turn), by
    where each id first comes: one dict for all the turns of a scenario."""

    def __init__(self, position: Mapping[Any, int], count: int) -> None:
        self.position, self.count = position, count

    def __contains__(self, ref: object) -> bool:
        return self.position.get(ref, self.count) < self.count


def first_positions(items: Sequence[Any]) -> dict[Any, int]:
    """Each item id's first position in ``items``."""
    position: dict[Any, int] = {}
    for i, it in enumerate(items):
        if isinstance(it, dict):
            position.setdefault(it.get("id"), i)
    return position


def _check_spec_key(key: str, where: str, lines: LineMap) -> None:
    """An expectation keyed by a spec: a registered strategy's, with valid
    parameters, written as its label (so that one parameterisation has one key)."""
    try:
        name, params = parse_spec(key, where)
        if name not in REGISTRY:
            raise lines.error(
                where,
                "expectation names an unknown strategy",
                expected="one of * " + " ".join(sorted(REGISTRY)),
                found=name,
            )
        label = build_strategy(name, params, where).label()
    except InputError as exc:
        raise lines.error(where, exc.message, expected=exc.expected, found=exc.found) from None
    if label != key:
        raise lines.error(
            where,
            "an expectation's spec is written as its label (the parameters that differ "
            "from the defaults, sorted)",
            expected=label,
            found=key,
        )


def check_references(
    turn: Turn, at: str, lines: LineMap, ids: Container[Any] | None = None
) -> None:
    """A turn's relevant ids and the ids its expectations name are items of its
    request (``ids``, when given, holds them), and its expectations name
    registered strategies (errors at ``at``)."""
    if ids is None:
        ids = {it.get("id") for it in turn.request["items"] if isinstance(it, dict)}
    for name in turn.relevant:
        if name not in ids:
            raise lines.error(
                f"{at}/relevant", f"relevant id {name!r} is not an item of the request"
            )
    for strategy, exp in turn.expect.items():
        where = f"{at}/expect{pointer(strategy)}"
        if strategy != ALL and strategy not in REGISTRY:
            _check_spec_key(strategy, where, lines)
        named = [
            *exp.get("selected", []),
            *exp.get("must_include", []),
            *exp.get("must_exclude", []),
            *exp.get("reasons", {}),
        ]
        for ref in named:
            if ref not in ids:
                raise lines.error(where, f"expectation names id {ref!r}, which is not an item")
