"""Golden scenarios: YAML sources, validation, normalisation and the JSONL mirror.

A scenario file (``scenarios/*.yaml``, schema ``evals/schemas/scenarios.v1.json``)
holds scenarios: a request without a strategy, gold ``relevant`` ids, and
``expect``ations per strategy (or ``"*"``). A conversation scenario has ``turns``
instead: each appends items and asks a new prompt, so prefix stability across
turns can be measured.

Compiling normalises every turn's request with the packer's own normalisation
(defaults filled, token counts resolved with the declared counter), sorts keys,
adds the source file and line and a sha256 of the normalised content, and writes
``compiled/<file>.jsonl``, one scenario per line, byte-stable across runs and
machines. Errors name the file, the line and the JSON pointer; nothing is written
unless every file is valid.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ctxpack.evals.scenarios.yamlsafe import LineMap, load_yaml
from ctxpack.evals.schemafiles import validator
from ctxpack.packer.errors import InputError, pointer
from ctxpack.packer.jsonio import dumps, loads
from ctxpack.packer.pipeline import PackResult, assemble
from ctxpack.packer.render import reasons_by_id
from ctxpack.packer.request import parse_request, request_to_json
from ctxpack.packer.strategies import REGISTRY, build_strategy
from jsonschema.exceptions import best_match

__all__ = [
    "SCENARIOS_SCHEMA_ID",
    "Scenario",
    "Turn",
    "check_compiled",
    "compile_sources",
    "compiled_path",
    "expectation_failures",
    "load_compiled",
    "load_sources",
    "pack_turn",
    "write_compiled",
]

SCENARIOS_SCHEMA_ID: Final = "ctxpack.scenarios.v1"
ALL: Final = "*"


@dataclass(frozen=True)
class Turn:
    """One packing situation: a normalised request (no strategy), the gold
    evidence and the expectations per strategy name or ``"*"``."""

    request: dict[str, Any]
    relevant: tuple[str, ...]
    expect: Mapping[str, Mapping[str, Any]]
    tags: tuple[str, ...] = ()  # this turn's own tags (e.g. a question's category)

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
            turns.append(Turn(request, tuple(t["relevant"]), t["expect"], tuple(t.get("tags", ()))))
        return cls(
            id=obj["id"],
            why=obj["why"],
            tags=tuple(obj["tags"]),
            turns=tuple(turns),
            file=obj["source"]["file"],
            line=obj["source"]["line"],
            shared_items=shared,
        )


# ---------------------------------------------------------------- sources


def _expand_item(raw: Any, defaults: Mapping[str, Any]) -> Any:
    """A compact item ``[id, role, text]`` / ``[id, role, tokens, text]`` as an
    object, with the file's item defaults under it."""
    if isinstance(raw, list):
        if len(raw) == 3:
            raw = {"id": raw[0], "role": raw[1], "text": raw[2]}
        else:
            raw = {
                "id": raw[0],
                "role": raw[1],
                "text": raw[3],
                **({"tokens": raw[2]} if raw[2] is not None else {}),
            }
    return {**defaults, **raw} if isinstance(raw, dict) else raw


def _build_turns(
    sc: Mapping[str, Any], base: str, defaults: Mapping[str, Any], lines: LineMap
) -> tuple[Turn, ...]:
    """Each turn's request, normalised; errors are mapped to the source line."""
    item_defaults = defaults.get("item", {})
    request = {**defaults.get("request", {}), **sc["request"]}
    items = [_expand_item(it, item_defaults) for it in request.get("items", [])]
    origins = [f"{base}/request/items/{i}" for i in range(len(items))]
    steps = sc.get("turns") or [
        {
            "prompt": request.get("prompt"),
            "relevant": sc.get("relevant", []),
            "expect": sc.get("expect", {}),
        }
    ]
    turns = []
    for k, step in enumerate(steps):
        at = f"{base}/turns/{k}" if "turns" in sc else f"{base}/request"
        for i, it in enumerate(step.get("items", []) if "turns" in sc else []):
            items.append(_expand_item(it, item_defaults))
            origins.append(f"{at}/items/{i}")
        req = {**request, "items": items[:], "prompt": step.get("prompt")}
        try:
            normal = request_to_json(parse_request(req), with_strategy=False)
        except InputError as exc:
            raise lines.error(
                _origin(exc.where, base, origins),
                exc.message,
                expected=exc.expected,
                found=exc.found,
            ) from None
        turns.append(Turn(normal, tuple(step.get("relevant", [])), step.get("expect", {})))
        _check_references(turns[-1], at if "turns" in sc else base, lines)
    return tuple(turns)


def _origin(where: str, base: str, origins: Sequence[str]) -> str:
    """The source pointer of a request pointer (items may come from turns)."""
    parts = where.split("/")
    if (
        len(parts) >= 3
        and parts[1] == "items"
        and parts[2].isdigit()
        and int(parts[2]) < len(origins)
    ):
        return "/".join([origins[int(parts[2])], *parts[3:]])
    return f"{base}/request{where if where != '/' else ''}"


def _check_references(turn: Turn, at: str, lines: LineMap) -> None:
    """Expectations name registered strategies and existing item ids."""
    ids = {it["id"] for it in turn.request["items"]}
    for name in turn.relevant:
        if name not in ids:
            raise lines.error(
                f"{at}/relevant", f"relevant id {name!r} is not an item of the request"
            )
    for strategy, exp in turn.expect.items():
        where = f"{at}/expect{pointer(strategy)}"
        if strategy != ALL and strategy not in REGISTRY:
            raise lines.error(
                where,
                "expectation names an unknown strategy",
                expected="one of * " + " ".join(sorted(REGISTRY)),
                found=strategy,
            )
        named = [
            *exp.get("selected", []),
            *exp.get("must_include", []),
            *exp.get("must_exclude", []),
            *exp.get("reasons", {}),
        ]
        for ref in named:
            if ref not in ids:
                raise lines.error(where, f"expectation names id {ref!r}, which is not an item")


def _load_file(path: Path) -> list[Scenario]:
    data, lines = load_yaml(path)
    err = best_match(validator("scenarios.v1.json").iter_errors(data))
    if err is not None:
        where = "".join(
            "/" + str(p).replace("~", "~0").replace("/", "~1") for p in err.absolute_path
        )
        raise lines.error(where, _schema_message(err))
    defaults = data.get("defaults", {})
    out = []
    for s, sc in enumerate(data["scenarios"]):
        base = f"/scenarios/{s}"
        out.append(
            Scenario(
                id=sc["id"],
                why=sc["why"],
                tags=tuple(sc.get("tags", [])),
                turns=_build_turns(sc, base, defaults, lines),
                file=path.name,
                line=lines.line(base),
            )
        )
    return out


def _schema_message(err: Any) -> str:
    """jsonschema's message, shortened to one readable line."""
    if err.validator == "not" and err.validator_value == {}:
        return f"field not allowed here: {err.schema.get('description', '')}".rstrip(": ")
    message = " ".join(str(err.message).split())
    if len(message) > 160:
        message = message[:157] + "..."
    return f"schema violation: {message}"


def load_sources(paths: Iterable[Path]) -> dict[Path, list[Scenario]]:
    """Validate scenario files; ids must be unique across all of them."""
    loaded: dict[Path, list[Scenario]] = {}
    first: dict[str, tuple[str, int]] = {}
    for path in sorted(paths):
        scenarios = _load_file(path)
        for sc in scenarios:
            if sc.id in first:
                file, line = first[sc.id]
                raise InputError(
                    f"line {sc.line}",
                    f"duplicate scenario id {sc.id!r} (first at {file} line {line})",
                    source=str(path),
                )
            first[sc.id] = (str(path), sc.line)
        loaded[path] = scenarios
    return loaded


# ---------------------------------------------------------------- compiled mirror


def compiled_path(source: Path, out_dir: Path | None = None) -> Path:
    return (out_dir or source.parent / "compiled") / f"{source.stem}.jsonl"


def compile_sources(loaded: Mapping[Path, list[Scenario]]) -> dict[Path, str]:
    """The JSONL text of each source file's compiled mirror (nothing written)."""
    return {
        path: "".join(dumps(sc.to_json()) + "\n" for sc in scenarios)
        for path, scenarios in loaded.items()
    }


def write_compiled(texts: Mapping[Path, str], out_dir: Path | None = None) -> list[Path]:
    """Write every mirror atomically (each through a temporary file and a rename)."""
    from ctxpack.packer.files import write_atomic

    written = []
    for source, text in texts.items():
        target = compiled_path(source, out_dir)
        write_atomic(target, text)
        written.append(target)
    return written


def _lines_by_id(text: str) -> dict[str, str]:
    """Compiled lines by scenario id; an unreadable line is keyed by its number."""
    out = {}
    for n, line in enumerate(text.splitlines(), 1):
        try:
            key = str(json.loads(line)["id"])
        except (ValueError, KeyError, TypeError):
            key = f"<unreadable line {n}>"
        out[key] = line
    return out


def check_compiled(texts: Mapping[Path, str], out_dir: Path | None = None) -> list[str]:
    """What differs between the sources and the committed mirrors, one line each."""
    problems = []
    expected_files = {compiled_path(src, out_dir) for src in texts}
    for source, text in sorted(texts.items()):
        target = compiled_path(source, out_dir)
        if not target.exists():
            problems.append(f"{target}: missing (run: ctxpack scenarios compile)")
            continue
        current = target.read_text("utf-8")
        if current == text:
            continue
        old = _lines_by_id(current)
        new = _lines_by_id(text)
        differs = [f"changed {i}" for i in sorted(new.keys() & old.keys()) if new[i] != old[i]]
        differs += [f"new {i}" for i in sorted(new.keys() - old.keys())]
        differs += [f"removed {i}" for i in sorted(old.keys() - new.keys())]
        detail = ", ".join(differs) or "scenario order or formatting"
        problems.append(f"{target}: stale ({detail}); run: ctxpack scenarios compile")
    for directory in {p.parent for p in expected_files}:
        for stray in sorted(directory.glob("*.jsonl")):
            if stray not in expected_files:
                problems.append(f"{stray}: no source scenario file")
    return problems


def load_compiled(path: Path) -> list[Scenario]:
    """Scenarios from a compiled JSONL file; a bad line is an error naming it."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError("", f"cannot read compiled scenarios: {exc}", source=str(path)) from None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        obj = loads(line, source=f"{path}:{n}")
        try:
            out.append(Scenario.from_json(obj))
        except (KeyError, TypeError) as exc:
            raise InputError(
                f"line {n}", f"not a compiled scenario (missing {exc})", source=str(path)
            ) from None
    return out


# ---------------------------------------------------------------- expectations


def pack_turn(turn: Turn, strategy: str | Mapping[str, Any]) -> PackResult:
    """Pack one turn's request with a strategy name or spec."""
    spec = build_strategy(strategy, {}).spec() if isinstance(strategy, str) else dict(strategy)
    return assemble(parse_request({**turn.request, "strategy": spec}))


def expectation_failures(turn: Turn, strategy: str, result: PackResult) -> list[str]:
    """Every unmet expectation of ``turn`` for ``strategy``, one readable line each."""
    selected = result.selected_ids
    kept = set(selected)
    actual = reasons_by_id(result)
    failures = []
    for exp in turn.expectations(strategy):
        if "selected" in exp and selected != exp["selected"]:
            failures.append(f"selected {selected}, expected {exp['selected']}")
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
