"""Compiling golden scenarios: YAML sources to the byte-stable JSONL mirror.

Compiling validates each file (schema first, then unique ids, registered
strategies, existing item ids, and every request checked by the packer, with
pointers mapped back to YAML lines), normalises every turn's request with the
packer's own normalisation (defaults filled, token counts resolved with the
declared counter), sorts keys, adds the source file and line and a sha256 of the
normalised content, and writes ``compiled/<file>.jsonl``, one scenario per line,
byte-stable across runs and machines. Errors name the file, the line and the JSON
pointer; nothing is written unless every file is valid.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from packproof.evals.scenarios.format import Scenario, Turn, read_compiled
from packproof.evals.scenarios.rules import check_references
from packproof.evals.scenarios.yamlsafe import LineMap, load_yaml
from packproof.evals.schemafiles import best_error, validator, violation
from packproof.packer.errors import InputError
from packproof.packer.files import check_targets, write_files
from packproof.packer.jsonio import dumps
from packproof.packer.request import parse_request, request_to_json

__all__ = [
    "check_compiled",
    "compile_sources",
    "compiled_path",
    "load_sources",
    "write_compiled",
]


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
            "answers": sc.get("answers", []),
        }
    ]
    turns = []
    replay = any("t" in step for step in steps)
    last_t = 0.0
    for k, step in enumerate(steps):
        at = f"{base}/turns/{k}" if "turns" in sc else f"{base}/request"
        new_items = step.get("items", []) if "turns" in sc else []
        for i, it in enumerate(new_items):
            items.append(_expand_item(it, item_defaults))
            origins.append(f"{at}/items/{i}")
        prompt = step.get("prompt")
        if replay:
            _check_step(step, at, last_t, len(new_items), lines)
            last_t = step["t"]
            if not step.get("probe") and isinstance(items[-1], dict):
                prompt = items[-1].get("text")  # a step's prompt is its newest item's text
        req = {**request, "items": items[:], "prompt": prompt}
        try:
            normal = request_to_json(parse_request(req), with_strategy=False)
        except InputError as exc:
            raise lines.error(
                _origin(exc.where, base, origins),
                exc.message,
                expected=exc.expected,
                found=exc.found,
            ) from None
        if replay and normal["fresh_tail"]["count"] < 1:
            raise lines.error(
                f"{base}/request",
                "a replay needs a fresh tail, so that each step's newest item is packed",
                expected="fresh_tail.count >= 1",
                found=normal["fresh_tail"]["count"],
            )
        turns.append(
            Turn(
                normal,
                tuple(step.get("relevant", [])),
                step.get("expect", {}),
                t=step["t"] if replay else None,
                probe=bool(step.get("probe", False)),
                # a number becomes its text (2022: "2022"), as in the LoCoMo importer
                answers=tuple(str(a) for a in step.get("answers", [])),
            )
        )
        check_references(turns[-1], at if "turns" in sc else base, lines)
    return tuple(turns)


def _check_step(
    step: Mapping[str, Any], at: str, last_t: float, new_items: int, lines: LineMap
) -> None:
    """A replay's step: timed, in time order; a probe asks a question and adds
    nothing, any other step adds items and takes its newest item's text as prompt."""
    if "t" not in step:
        raise lines.error(at, "a replay step needs its time t (seconds), as the other steps have")
    if not math.isfinite(step["t"]):
        raise lines.error(f"{at}/t", "not a finite time", expected="seconds >= 0", found=step["t"])
    if step["t"] < last_t:
        raise lines.error(
            f"{at}/t",
            "replay steps out of time order",
            expected=f"t >= {last_t:g}",
            found=step["t"],
        )
    if step.get("probe"):
        if new_items:
            raise lines.error(
                f"{at}/items",
                "a probe does not advance the conversation: it adds no items",
                expected="no items",
                found=f"{new_items} items",
            )
        if step.get("prompt") is None:
            raise lines.error(at, "a probe needs its prompt (the question it asks)")
        return
    if not new_items:
        raise lines.error(
            at,
            "a replay step with no items: each step appends the items it sends",
            expected="at least one item",
            found="none",
        )
    if "prompt" in step:
        raise lines.error(
            f"{at}/prompt",
            "a replay step's prompt is its newest item's text: omit prompt (probes ask one)",
        )


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


def _load_file(path: Path) -> list[Scenario]:
    data, lines = load_yaml(path)
    err = best_error(validator("scenarios.v1.json").iter_errors(data))
    if err is not None:
        where = "".join(
            "/" + str(p).replace("~", "~0").replace("/", "~1") for p in err.absolute_path
        )
        if err.validator == "not" and err.validator_value == {}:
            raise lines.error(where, _schema_message(err))
        message, detail = violation(err, yaml=True)
        raise lines.error(where, f"schema violation: {message}", **detail)
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
    """Write every mirror, all or none, each through a temporary file and a
    rename (every target checked before the first is written)."""
    targets = [compiled_path(source, out_dir) for source in texts]
    sources = list(texts)
    check_targets(targets, sources)  # two sources of one name into one folder among it
    return write_files(dict(zip(targets, texts.values(), strict=True)), inputs=sources)


def _lines_by_id(text: str) -> dict[str, str]:
    """Compiled lines by scenario id; an unreadable line is keyed by its number."""
    out = {}
    for n, line in enumerate(text.split("\n"), 1):  # not splitlines: U+2028 in a string
        if not line.strip():
            continue
        try:
            key = str(json.loads(line)["id"])
        except (ValueError, KeyError, TypeError, RecursionError):
            key = f"<unreadable line {n}>"
        out[key] = line
    return out


def stale_detail(current: str, text: str, most: int = 0) -> str:
    """How a compiled mirror's ``current`` text differs from ``text`` (what its
    source compiles to): the scenarios changed, new and removed; the first
    ``most`` of them when ``most`` > 0."""
    old = _lines_by_id(current)
    new = _lines_by_id(text)
    differs = [f"changed {i}" for i in sorted(new.keys() & old.keys()) if new[i] != old[i]]
    differs += [f"new {i}" for i in sorted(new.keys() - old.keys())]
    differs += [f"removed {i}" for i in sorted(old.keys() - new.keys())]
    if most and len(differs) > most:
        differs = [*differs[:most], f"{len(differs) - most} more"]
    return ", ".join(differs) or "scenario order or formatting"


def check_compiled(texts: Mapping[Path, str], out_dir: Path | None = None) -> list[str]:
    """What differs between the sources and the committed mirrors, one line each."""
    problems = []
    expected_files = {compiled_path(src, out_dir) for src in texts}
    for source, text in sorted(texts.items()):
        target = compiled_path(source, out_dir)
        if not target.exists():
            problems.append(f"{target}: missing (run: packproof scenarios compile)")
            continue
        current = read_compiled(target)  # a directory or bytes not UTF-8: one line, exit 2
        if current == text:
            continue
        detail = stale_detail(current, text)
        problems.append(f"{target}: stale ({detail}); run: packproof scenarios compile")
    for directory in {p.parent for p in expected_files}:
        for stray in sorted(directory.glob("*.jsonl")):
            if stray not in expected_files:
                problems.append(f"{stray}: no source scenario file")
    return problems
