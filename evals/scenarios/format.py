"""Golden scenarios: the format (a scenario and its turns), reading the compiled
JSONL mirror, and judging a pack against a turn's expectations.

A scenario file (``scenarios/*.yaml``, schema ``evals/schemas/scenarios.v1.json``)
holds scenarios: a request without a strategy, gold ``relevant`` ids, optional
gold ``answers``, and ``expect``ations per strategy (or ``"*"``). A conversation
scenario has ``turns`` instead: each appends items and asks a new prompt, so
prefix stability across turns can be measured. A replay is a conversation whose
turns carry times ``t``: each step appends items and its prompt is its newest
item's text; a ``probe`` turn asks a question of the state reached without
advancing it. A replay's packs are priced as one chain under prompt-cache profiles.

:mod:`packproof.evals.scenarios.compile` turns the YAML sources into the mirror.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from packproof.packer.errors import InputError
from packproof.packer.jsonio import dumps, loads
from packproof.packer.pipeline import PackResult, assemble
from packproof.packer.render import reasons_by_id
from packproof.packer.request import parse_request
from packproof.packer.strategies import build_strategy

__all__ = [
    "SCENARIOS_SCHEMA_ID",
    "Scenario",
    "Turn",
    "expectation_failures",
    "kept_reasons",
    "load_compiled",
    "pack_turn",
    "parse_compiled",
]

SCENARIOS_SCHEMA_ID: Final = "packproof.scenarios.v1"
ALL: Final = "*"


@dataclass(frozen=True)
class Turn:
    """One packing situation: a normalised request (no strategy), the gold
    evidence and the expectations per strategy name or ``"*"``, and the gold
    answers to its prompt (alternatives, any one correct; none if unknown)."""

    request: dict[str, Any]
    relevant: tuple[str, ...]
    expect: Mapping[str, Mapping[str, Any]]
    tags: tuple[str, ...] = ()  # this turn's own tags (e.g. a question's category)
    # A replay step's time in seconds (None outside replays), and whether it is a
    # probe: packed and measured from the state reached, without advancing it.
    t: float | None = None
    probe: bool = False
    answers: tuple[str, ...] = ()

    def expectations(self, strategy: str) -> list[Mapping[str, Any]]:
        """The expectations that apply to ``strategy``: ``"*"``'s and its own (both
        must hold; neither overrides the other). ``"*"`` itself gives only ``"*"``'s."""
        return [self.expect[key] for key in dict.fromkeys((ALL, strategy)) if key in self.expect]


@dataclass(frozen=True)
class Scenario:
    id: str
    why: str
    tags: tuple[str, ...]
    turns: tuple[Turn, ...]
    file: str
    line: int
    # The compact form's item list, which every turn's items are a prefix of
    # (so the runner parses it once); None when turns list their own items.
    shared_items: list[Any] | None = field(default=None, compare=False, repr=False)

    @property
    def replay(self) -> bool:
        """A replay: a conversation whose turns are timed steps (and probes),
        priced under prompt-cache profiles as one chain (docs/scenarios.md)."""
        return bool(self.turns) and all(t.t is not None for t in self.turns)

    def content(self) -> dict[str, Any]:
        """The normalised content, which the sha256 covers (not the source).

        A conversation whose turns each see a prefix of the last turn's items is
        written compactly: the items once, at the scenario level, and each turn's
        request without them but with ``items_upto`` (how many it sees). A long
        conversation then costs its items once, not once per turn."""
        last = self.turns[-1].request["items"] if self.turns else []
        compact = len(self.turns) > 1 and all(
            t.request["items"] == last[: len(t.request["items"])] for t in self.turns
        )
        turns = []
        for t in self.turns:
            request = t.request
            if compact:
                request = {k: v for k, v in request.items() if k != "items"}
                request["items_upto"] = len(t.request["items"])
            turn: dict[str, Any] = {
                "request": request,
                "relevant": list(t.relevant),
                "expect": {k: dict(v) for k, v in t.expect.items()},
            }
            if t.tags:
                turn["tags"] = list(t.tags)
            if t.t is not None:
                turn["t"] = t.t
            if t.probe:
                turn["probe"] = True
            if t.answers:  # only when given, so mirrors without answers keep their bytes
                turn["answers"] = list(t.answers)
            turns.append(turn)
        out: dict[str, Any] = {
            "id": self.id,
            "why": self.why,
            "tags": list(self.tags),
            "turns": turns,
        }
        if compact:
            out["items"] = last
        return out

    @property
    def sha256(self) -> str:
        return hashlib.sha256(dumps(self.content()).encode("utf-8")).hexdigest()

    def to_json(self) -> dict[str, Any]:
        return {
            **self.content(),
            "source": {"file": self.file, "line": self.line},
            "sha256": self.sha256,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Scenario:
        shared = obj.get("items")
        turns = []
        for t in obj["turns"]:
            request = t["request"]
            if shared is not None:  # the compact form: rebuild each turn's items
                request = {k: v for k, v in request.items() if k != "items_upto"}
                request["items"] = shared[: t["request"]["items_upto"]]
            turns.append(
                Turn(
                    request,
                    tuple(t["relevant"]),
                    t["expect"],
                    tuple(t.get("tags", ())),
                    t.get("t"),
                    t.get("probe", False),
                    tuple(t.get("answers", ())),
                )
            )
        return cls(
            id=obj["id"],
            why=obj["why"],
            tags=tuple(obj["tags"]),
            turns=tuple(turns),
            file=obj["source"]["file"],
            line=obj["source"]["line"],
            shared_items=shared,
        )


_ID: Final = re.compile(r"[a-z0-9][a-z0-9._-]*")  # the scenario id pattern of the schema


def load_compiled(path: Path) -> list[Scenario]:
    """Scenarios from a compiled JSONL file, checked as a hand edit could break it:
    each line a scenario object with a valid, unique id and at least one turn,
    whose sha256 still matches its content. A bad line is an error naming it."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise InputError(
            "", f"cannot read compiled scenarios: {exc.strerror}", source=str(path)
        ) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"byte {exc.start}", "not UTF-8 text", source=str(path)) from None
    return parse_compiled(text, path)


def parse_compiled(text: str, path: Path) -> list[Scenario]:
    """Scenarios from compiled JSONL ``text`` (:func:`load_compiled`'s checks;
    errors name ``path``)."""
    out = []
    seen: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        obj = loads(line, source=f"{path}:{n}")
        where = f"line {n}"
        if not isinstance(obj, dict):
            raise InputError(
                where,
                "not a compiled scenario",
                expected="a JSON object",
                found=obj,
                source=str(path),
            )
        try:
            scenario = Scenario.from_json(obj)
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            raise InputError(
                where, f"not a compiled scenario (bad or missing {exc})", source=str(path)
            ) from None
        if not isinstance(scenario.id, str) or not _ID.fullmatch(scenario.id):
            raise InputError(
                where,
                "invalid scenario id",
                expected=_ID.pattern,
                found=scenario.id,
                source=str(path),
            )
        if scenario.id in seen:
            raise InputError(
                where,
                f"duplicate scenario id {scenario.id!r} (first on line {seen[scenario.id]})",
                source=str(path),
            )
        seen[scenario.id] = n
        if not scenario.turns:
            raise InputError(where, f"scenario {scenario.id!r} has no turns", source=str(path))
        if obj.get("sha256") != scenario.sha256:
            raise InputError(
                where,
                f"scenario {scenario.id!r} does not match its sha256 (edited by hand, or "
                "stale): recompile it with packproof scenarios compile",
                source=str(path),
            )
        out.append(scenario)
    if not out:
        raise InputError("", "no scenarios in this compiled suite", source=str(path))
    return out


# ---------------------------------------------------------------- expectations


def pack_turn(turn: Turn, strategy: str | Mapping[str, Any]) -> PackResult:
    """Pack one turn's request with a strategy name or spec."""
    spec = build_strategy(strategy, {}).spec() if isinstance(strategy, str) else dict(strategy)
    return assemble(parse_request({**turn.request, "strategy": spec}))


DRILL_ITEMS: Final = 64  # a request this small keeps every candidate's reasons


def kept_reasons(turn: Turn, result: PackResult) -> dict[str, list[str]]:
    """The trace's decision reasons a report's drill-down shows, by id: every
    candidate's in a request of at most ``DRILL_ITEMS`` items, else the gold
    evidence's and those of the ids the turn's expectations name."""
    if len(result.items) <= DRILL_ITEMS:
        return reasons_by_id(result)
    named = [
        ref
        for exp in turn.expect.values()
        for key in ("selected", "order", "must_include", "must_exclude", "reasons")
        for ref in exp.get(key, ())
    ]
    return reasons_by_id(result, [*turn.relevant, *named])


def expectation_failures(turn: Turn, strategy: str, result: PackResult) -> list[str]:
    """Every unmet expectation of ``turn`` for ``strategy``, one readable line each."""
    selected = result.selected_ids
    kept = set(selected)
    actual = reasons_by_id(result)
    failures = []
    for exp in turn.expectations(strategy):
        if "selected" in exp and selected != exp["selected"]:
            failures.append(f"selected {selected}, expected {exp['selected']}")
        if "order" in exp:
            order = [result.items.ids[i] for i in result.order]
            if order != exp["order"]:
                failures.append(f"pack order {order}, expected {exp['order']}")
        missing = [i for i in exp.get("must_include", []) if i not in kept]
        if missing:
            failures.append(f"must_include not packed: {missing}")
        present = [i for i in exp.get("must_exclude", []) if i in kept]
        if present:
            failures.append(f"must_exclude packed: {present}")
        if "mode" in exp and result.mode != exp["mode"]:
            failures.append(f"mode {result.mode}, expected {exp['mode']}")
        for ref, codes in sorted(exp.get("reasons", {}).items()):
            lacking = [c for c in codes if c not in actual[ref]]
            if lacking:
                failures.append(f"{ref}: reasons {actual[ref]} lack {lacking}")
    return failures
