"""The prompt-cache model's files: the profiles (YAML, ``cache-profiles.v1.json``)
and the step traces of ``packproof cache simulate`` (JSON lines).

A trace line is one step, ``{"chain": "c1", "t": 12.5, "segments": [["id",
tokens], ...], "static_segments": 1, "probe": false}`` (``static_segments``
optional, default 0; ``probe`` optional, default false: a probe is measured from
the state the chain has reached and changes nothing). Chains may interleave;
each has its own cache, and its steps, probes included, must be in time order.
Every line is checked before any is priced, so bad input writes nothing: it is
one :class:`InputError` naming the file, line and JSON pointer. Reading makes
each chain's steps :class:`~packproof.evals.metrics.cache.model.Prompts`, so that
pricing does no per-segment work.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any, Final

from packproof.evals.metrics.cache.model import (
    Profile,
    Prompts,
    StepCost,
    chain_totals,
    price_prompts,
)
from packproof.evals.metrics.cache.profiles import profiles_from
from packproof.evals.project import DATA
from packproof.evals.scenarios.yamlsafe import load_yaml
from packproof.packer.errors import InputError
from packproof.packer.jsonio import dumps, loads, round_float
from packproof.packer.result import cyclic_gc_paused

__all__ = [
    "SHIPPED_PROFILES",
    "Trace",
    "load_profiles",
    "profile",
    "read_trace",
    "simulate",
]

SHIPPED_PROFILES: Final = DATA / "cache-profiles.yaml"
_KEYS: Final = frozenset({"chain", "t", "segments", "static_segments", "probe"})
_ID, _TOKENS = itemgetter(0), itemgetter(1)


def load_profiles(path: Path = SHIPPED_PROFILES) -> dict[str, Profile]:
    """A validated profiles file, name -> :class:`Profile`, in file order."""
    data, lines = load_yaml(path)
    return profiles_from(data, lines)


def profile(name: str, path: Path | None = None) -> Profile:
    """The profile ``name``: from ``path`` when given, else (or when ``path`` does
    not define it) the shipped one."""
    profiles = load_profiles()
    if path is not None:
        profiles.update(load_profiles(path))
    if name not in profiles:
        raise InputError(
            "--profile",
            "unknown cache profile",
            expected="one of " + ", ".join(sorted(profiles)),
            found=name,
        )
    return profiles[name]


@dataclass(frozen=True)
class Trace:
    """A checked trace: its lines (as read), and each chain's steps in file
    order, encoded for pricing."""

    records: list[dict[str, Any]]
    chains: dict[str, Prompts]


def read_trace(path: str) -> Trace:
    """Read and check a trace file (``-``: stdin)."""
    source = "<stdin>" if path == "-" else path
    try:
        raw = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise InputError("", f"cannot read file: {exc.strerror}", source=source) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"line {line}", "not UTF-8 text", source=source) from None
    records: list[dict[str, Any]] = []
    chains: dict[str, Prompts] = {}
    # Parsed JSON and priced steps hold no reference cycles; the collector,
    # set off again and again by the allocations, tripled the reading time.
    with cyclic_gc_paused():
        for number, line in enumerate(text.split("\n"), 1):
            _read_line(line, number, source, records, chains)
    if not records:
        raise InputError(
            "",
            "the trace has no steps",
            expected="one JSON object a line",
            found="nothing",
            source=source,
        )
    return Trace(records, chains)


def _read_line(
    line: str,
    number: int,
    source: str,
    records: list[dict[str, Any]],
    chains: dict[str, Prompts],
) -> None:
    if not line.strip():
        return
    try:
        record = loads(line)
        t, ids, tokens, static, probe = _step(record)
    except InputError as exc:
        raise _at_line(exc, number, source) from None
    prompts = chains.get(record["chain"])
    if prompts is None:
        prompts = chains[record["chain"]] = Prompts()
    if prompts.codes and t < prompts.t[-1]:
        raise InputError(
            f"line {number} /t",
            f"out of time order in chain {record['chain']!r}",
            expected=f"t >= {prompts.t[-1]:.15g}",
            found=t,
            source=source,
        )
    try:
        prompts.add(t, ids, tokens, static, probe)
    except ValueError as exc:  # (the checks above leave only a total past 2**63)
        raise InputError(f"line {number} /segments", str(exc), source=source) from None
    records.append(record)


def _at_line(exc: InputError, number: int, source: str) -> InputError:
    """An error in one line's JSON, placed at that line of the file."""
    where = exc.where
    if where.startswith("line 1 "):
        where = f"line {number} " + where[len("line 1 ") :]
    else:
        where = f"line {number} {where}".rstrip()
    return InputError(where, exc.message, expected=exc.expected, found=exc.found, source=source)


def _step(record: Any) -> tuple[float, list[str], list[int], int, bool]:
    """A checked line: its time, segment ids and tokens, static prefix and probe flag."""
    if not isinstance(record, dict):
        raise InputError("/", "a step must be a JSON object", expected="an object", found=record)
    unknown = sorted(set(record) - _KEYS)
    if unknown:
        raise InputError(
            f"/{unknown[0]}", "unknown key", expected=", ".join(sorted(_KEYS)), found=unknown[0]
        )
    for key in ("chain", "t", "segments"):
        if key not in record:
            raise InputError(f"/{key}", f"missing key {key!r}")
    if not isinstance(record["chain"], str):
        raise InputError("/chain", "not a chain name", expected="a string", found=record["chain"])
    t = record["t"]
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
        raise InputError("/t", "not a time", expected="a number of seconds", found=t)
    segments = record["segments"]
    if not isinstance(segments, list) or not segments:
        raise InputError(
            "/segments", "a step needs segments", expected="a non-empty array", found=segments
        )
    # the common case checked at C speed; the slow walk only names the culprit
    fine = set(map(type, segments)) == {list} and set(map(len, segments)) == {2}
    ids, tokens = (list(map(_ID, segments)), list(map(_TOKENS, segments))) if fine else ([], [])
    if not (
        fine
        and set(map(type, ids)) == {str}
        and set(map(type, tokens)) == {int}
        and min(tokens) >= 0
    ):
        _bad_segment(segments)
    static = record.get("static_segments", 0)
    if isinstance(static, bool) or not isinstance(static, int) or not 0 <= static <= len(segments):
        raise InputError(
            "/static_segments",
            "not a count of leading segments",
            expected=f"an integer in [0, {len(segments)}]",
            found=static,
        )
    probe = record.get("probe", False)
    if not isinstance(probe, bool):
        raise InputError("/probe", "not a probe flag", expected="true or false", found=probe)
    return t, ids, tokens, static, probe


def _bad_segment(segments: list[Any]) -> None:
    """Raise the error naming the first bad segment."""
    for i, segment in enumerate(segments):
        if not isinstance(segment, list) or len(segment) != 2:
            raise InputError(
                f"/segments/{i}", "not a segment", expected="[id, tokens]", found=segment
            )
        if not isinstance(segment[0], str):
            raise InputError(
                f"/segments/{i}/0", "not a segment id", expected="a string", found=segment[0]
            )
        tokens = segment[1]
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise InputError(
                f"/segments/{i}/1", "not a token count", expected="an integer >= 0", found=tokens
            )


def simulate(trace: Trace, name: str, chosen: Profile) -> Iterator[str]:
    """The output lines: each step as read plus its ``cached``, ``written``,
    ``uncached``, ``cost`` and ``prefix_break``, in file order; then one
    ``{"chain", "profile", "total"}`` line per chain, in order of first appearance,
    whose ``total`` sums the conversation steps and, in ``probes``, the probes."""
    costs = {chain: price_prompts(steps, chosen) for chain, steps in trace.chains.items()}
    position = dict.fromkeys(costs, 0)
    for record in trace.records:
        chain = record["chain"]
        cost: StepCost = costs[chain][position[chain]]
        position[chain] += 1
        out = dict(record)
        if isinstance(out["t"], float):
            out["t"] = round_float(out["t"])
        out["cached"], out["written"], out["uncached"] = cost.cached, cost.written, cost.uncached
        out["cost"], out["prefix_break"] = round_float(cost.cost), cost.prefix_break
        yield dumps(out, prepared=True)
    for chain, chain_costs in costs.items():
        yield dumps({"chain": chain, "profile": name, "total": chain_totals(chain_costs).to_json()})
