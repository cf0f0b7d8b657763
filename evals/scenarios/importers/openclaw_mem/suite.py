"""An openclaw-mem file as scenarios: its native cases, or its golden fixture lane.

Each line of the file (JSON lines, gzipped when the name ends in ``.gz``) is either a
native case (``input``: ``pack-cases.jsonl.gz``) or a golden row (``pack_state``:
``CONTEXT_PACK_GOLDEN_SCENARIOS.v0.jsonl``); each becomes one scenario of one turn.
The turn's request is the case's (:mod:`.case`) without its strategy; its expectation,
keyed by the ``openclaw-mem`` spec with the case's parameters (``openclaw-mem`` alone
when they are the defaults), is the selection openclaw-mem made: ``order`` in pack
order and ``selected`` in ordinal order. What a row asserts that packproof does not
judge is listed in the scenario (its ``why`` and ``not-judged:`` tags) and in the
report, never dropped.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import yaml

from packproof.evals.conformance.cases import read_json_lines
from packproof.evals.scenarios.format import SCENARIOS_SCHEMA_ID, Scenario, Turn
from packproof.evals.scenarios.yamlsafe import MAX_BYTES
from packproof.packer.errors import InputError
from packproof.packer.request import parse_request, request_to_json
from packproof.packer.strategies import build_strategy

from .case import STRATEGY, derive
from .goldens import GRAPH_OPTION, read_golden

__all__ = ["NOT_JUDGED_TAG", "import_openclaw_mem", "scenarios_yaml"]

NOT_JUDGED_TAG: Final = "not-judged:"
_ID_UNSAFE: Final = re.compile(r"[^a-z0-9._-]+")  # a scenario id is [a-z0-9._-]


def _key(params: Mapping[str, Any]) -> str:
    """The expectation's key: the spec's label (its name when the defaults apply)."""
    return build_strategy(STRATEGY, params).label()


def _selection(refs: Any, request: Mapping[str, Any], where: str) -> dict[str, list[str]]:
    """``order`` (pack order) and ``selected`` (ordinal order) of ``refs``."""
    ordinal = {it["id"]: it["ordinal"] for it in request["items"]}
    if not isinstance(refs, list) or not all(r in ordinal for r in refs):
        raise InputError(
            where, "not refs of the case's records and tail lines", expected="refs", found=refs
        )
    if len(set(refs)) != len(refs):
        raise InputError(where, "a ref is selected twice", expected="each ref once", found=refs)
    return {"order": list(refs), "selected": sorted(refs, key=ordinal.__getitem__)}


def _scenario_id(raw: Any, where: str) -> str:
    if not isinstance(raw, str) or not raw:
        raise InputError(where, "a case needs its id", expected="a non-empty string", found=raw)
    return _ID_UNSAFE.sub("-", raw.lower()).strip("-._") or "case"


def _native(case: Mapping[str, Any]) -> tuple[str, str, dict[str, Any], Any, list[tuple[str, str]]]:
    derived = derive(case)
    ident = _scenario_id(case.get("id"), "/id")
    expected = case.get("expected")
    refs = expected.get("selected_record_refs") if isinstance(expected, dict) else None
    what = (
        f"openclaw-mem's own pack selected these {len(refs)} refs for case {case['id']}"
        if isinstance(refs, list)
        else f"openclaw-mem case {case['id']}, with no recorded selection to expect"
    )
    why = (
        f"{what} ({derived.settings.profile} profile, limit {derived.options.limit}, budget "
        f"{derived.options.budget})."
    )
    notes = [(option, GRAPH_OPTION) for option in derived.options.graph]
    return ident, why, derived.request, refs, notes


def _one(
    row: Any, counts: Counter[str]
) -> tuple[str, str, dict[str, Any], Any, list[tuple[str, str]]]:
    """(id, why, request, selected refs or None, not-judged notes) of one row."""
    if isinstance(row, dict) and "input" in row:
        counts["cases"] += 1
        return _native(row)
    if isinstance(row, dict) and "pack_state" in row:
        counts["goldens"] += 1
        golden = read_golden(row)
        why = f"openclaw-mem golden {golden.id}: {golden.why}."
        return (
            _scenario_id(golden.id, "/id"),
            why,
            derive(golden.case).request,
            golden.selected,
            golden.not_judged,
        )
    raise InputError(
        "/",
        "neither an openclaw-mem case nor a golden row",
        expected="an object with input (a case) or pack_state (a golden row)",
        found=row,
    )


def import_openclaw_mem(path: Path) -> tuple[list[Scenario], dict[str, Any]]:
    """Scenarios from an openclaw-mem case file or golden file, and a report: rows,
    cases, goldens, judged and not-judged counts, and ``notes`` (per scenario, what
    it does not judge)."""
    counts: Counter[str] = Counter()
    scenarios: list[Scenario] = []
    notes: dict[str, list[tuple[str, str]]] = {}
    seen: dict[str, int] = {}
    for number, row in read_json_lines(path):
        try:
            ident, why, request, refs, not_judged = _one(row, counts)
            bare = {k: v for k, v in request.items() if k != "strategy"}
            normal = request_to_json(parse_request(bare), with_strategy=False)
            expect = {}
            if refs is not None:
                where = "/expected" if "input" in row else "/expect"
                where += "/selected_record_refs"
                expect[_key(request["strategy"]["params"])] = _selection(refs, normal, where)
        except InputError as exc:
            raise InputError(
                f"line {number}: {exc.where}".rstrip(": "),
                exc.message,
                expected=exc.expected,
                found=exc.found,
                source=str(path),
            ) from None
        if ident in seen:
            raise InputError(
                f"line {number}",
                f"case {ident!r} is already the scenario of line {seen[ident]}",
                source=str(path),
            )
        seen[ident] = number
        counts["judged"] += bool(expect)
        counts["not_judged"] += len(not_judged)
        tags = ["openclaw-mem", "golden" if "pack_state" in row else "case"]
        tags += sorted({NOT_JUDGED_TAG + what for what, _ in not_judged})
        if not_judged:
            notes[ident] = not_judged
            why += f" Not judged: {len(not_judged)} of its assertions and inputs (see its tags)."
        turn = Turn(normal, (), expect)
        scenarios.append(Scenario(ident, why, tuple(tags), (turn,), path.name, number))
    if not scenarios:
        raise InputError("", "no case or golden row in the file", source=str(path))
    report = {"file": path.name, "rows": len(scenarios), **dict(sorted(counts.items()))}
    return scenarios, {**report, "notes": notes}


def scenarios_yaml(scenarios: list[Scenario], where: str = "--output") -> str:
    """A scenario file (``packproof.scenarios.v1``) holding ``scenarios``, each
    request normalised; refused when it is past what a scenario file may hold (write
    the compiled mirror, ``.jsonl``, instead)."""
    body = [
        {
            "id": sc.id,
            "why": sc.why,
            "tags": list(sc.tags),
            "request": sc.turns[0].request,
            **({"expect": dict(sc.turns[0].expect)} if sc.turns[0].expect else {}),
        }
        for sc in scenarios
    ]
    doc = {"schema": SCENARIOS_SCHEMA_ID, "scenarios": body}
    # unicode as it is (yaml escapes what YAML cannot hold raw), one line per string
    text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False, width=2**31)
    size = len(text.encode("utf-8"))
    if size > MAX_BYTES:
        raise InputError(
            where,
            f"the scenario file would be {size} bytes, past the {MAX_BYTES} a scenario file "
            "may hold: write the compiled mirror instead (a .jsonl output)",
        )
    return text
