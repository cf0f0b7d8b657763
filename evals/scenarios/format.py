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

from packproof.evals.scenarios.rules import (
    ALL,
    AtLine,
    FirstItems,
    check_compiled,
    check_references,
    check_replay,
    first_positions,
)
from packproof.packer.errors import InputError
from packproof.packer.jsonio import dumps, loads
from packproof.packer.pipeline import PackResult, assemble
from packproof.packer.render import reasons_by_id
from packproof.packer.request import parse_request
from packproof.packer.strategies import StrategyBase, build_strategy, is_policy_name

__all__ = [
    "SCENARIOS_SCHEMA_ID",
    "Scenario",
    "Turn",
    "expectation_failures",
    "expectation_key",
    "kept_reasons",
    "load_compiled",
    "pack_turn",
    "parse_compiled",
    "read_compiled",
]

SCENARIOS_SCHEMA_ID: Final = "packproof.scenarios.v1"


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
    # A replay step imported from a provider's records: the usage billed for the
    # call (cached, input, output, written, written_1h); None when not imported.
    usage: Mapping[str, int] | None = None

    def expectations(self, strategy: str) -> list[Mapping[str, Any]]:
        """The expectations that apply to ``strategy`` (a name, or a spec's label:
        :func:`expectation_key`): ``"*"``'s and its own (both must hold; neither
        overrides the other). ``"*"`` itself gives only ``"*"``'s. A strategy
        that decides the whole pack (``openclaw-mem``: packer/policy.py) has its
        own only: ``"*"``'s pin the shared pipeline (the fresh tail and anchors
        always kept, full fit, ...), which it does not use."""
        keys = (strategy,) if is_policy_name(strategy.partition("(")[0]) else (ALL, strategy)
        return [self.expect[key] for key in dict.fromkeys(keys) if key in self.expect]


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
            if t.usage is not None:  # only when given, as answers
                turn["usage"] = dict(t.usage)
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
                    t.get("usage"),
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


def read_compiled(path: Path) -> str:
    """A compiled mirror's text; one :class:`InputError` when it cannot be read
    (a directory, a missing file) or is not UTF-8 (naming the line)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(
            "", f"cannot read compiled scenarios: {exc.strerror}", source=str(path)
        ) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            f"line {line}", f"not UTF-8 text (byte {exc.start})", source=str(path)
        ) from None


def load_compiled(path: Path) -> list[Scenario]:
    """Scenarios from a compiled JSONL file, checked as strictly as compiling
    checks the YAML (:func:`parse_compiled`). A bad line is an error naming it."""
    return parse_compiled(read_compiled(path), path)


def parse_compiled(text: str, path: Path) -> list[Scenario]:
    """Scenarios from compiled JSONL ``text``, each line checked as a hand edit or
    another tool could break it, before anything runs: a scenario object with a
    valid, unique id and at least one turn; the shape of
    ``scenarios.v1.json#/$defs/compiled``; what compiling checks beyond it
    (:mod:`~packproof.evals.scenarios.rules`); and a sha256 that still matches its content
    (which a tool that writes suites can recompute: it proves no more than
    the shape). Each request is checked by the packer when its cell runs.
    Errors name ``path``, the line and the JSON pointer."""
    out = []
    seen: dict[str, int] = {}
    # lines end at "\n" only: a JSON string holds U+2028 or U+0085 unescaped, which
    # str.splitlines() would take for line ends
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        obj = loads(line, source=f"{path}:{n}")
        at = AtLine(str(path), n)
        if not isinstance(obj, dict):
            raise at.error("/", "not a compiled scenario", expected="a JSON object", found=obj)
        sid = obj.get("id")
        if not isinstance(sid, str) or not _ID.fullmatch(sid):
            raise at.error("/id", "invalid scenario id", expected=_ID.pattern, found=sid)
        if sid in seen:
            raise at.error("/id", f"duplicate scenario id {sid!r} (first on line {seen[sid]})")
        seen[sid] = n
        if obj.get("turns") == []:
            raise at.error("/turns", f"scenario {sid!r} has no turns")
        counts = check_compiled(obj, at)
        scenario = Scenario.from_json(obj)
        if any(t.t is not None for t in scenario.turns):
            check_replay(scenario.turns, counts, at)
        position = first_positions(obj["items"]) if "items" in obj else None
        for k, (turn, count) in enumerate(zip(scenario.turns, counts, strict=True)):
            ids = None if position is None else FirstItems(position, count)
            check_references(turn, f"/turns/{k}", at, ids)
        if obj["sha256"] != scenario.sha256:
            raise at.error(
                "",
                f"scenario {sid!r} does not match its sha256 (edited by hand, or "
                "stale): recompile it with packproof scenarios compile",
            )
        out.append(scenario)
    if not out:
        raise InputError("", "no scenarios in this compiled suite", source=str(path))
    return out


# ---------------------------------------------------------------- expectations


def expectation_key(strategy: StrategyBase, *, cache_aware: bool = False) -> str:
    """Whose expectations a spec is held to besides ``"*"``'s: those keyed by its
    label, which is its name at the defaults (``bm25``) and the spec with the
    parameters that differ otherwise (``openclaw-mem(profile=relevance)``), as
    written for that parameterisation; a cache-aware pack only ``"*"``'s."""
    return ALL if cache_aware else strategy.label()


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
