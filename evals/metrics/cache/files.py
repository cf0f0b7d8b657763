"""The prompt-cache model's files: the profiles (YAML, ``cache-profiles.v1.json``)
and the step traces of ``packproof cache simulate`` (JSON lines).

A trace line is one step, ``{"chain": "c1", "t": 12.5, "segments": [["id",
tokens], ...], "static_segments": 1, "probe": false, "breakpoints": [1, 3]}``
(``static_segments`` optional, default 0; ``probe`` optional, default false: a
probe is measured from the state the chain has reached and changes nothing;
``breakpoints`` optional: the segment counts where the caller placed its cache
breakpoints, at most the profile's ``max_breakpoints``, replacing the default
placement of ``breakpoints`` mode; ``prefix`` mode has no breakpoints and ignores
them). Chains may interleave; each has its own cache, and its steps, probes
included, must be in time order; a segment id has one token count within its
chain (an id stands for one content, and the model reads an entry's tokens from
the prompt that hits it).

The trace is streamed: read a line at a time, priced a batch of lines at a time
(:data:`BATCH_LINES`), each result line given out as soon as its batch is
priced, so memory holds each chain's state (its live cache entries, its segment
ids and their token counts, its running totals) and one batch, never the trace.
A bad line is one :class:`InputError` naming the file, the line and the JSON
pointer; the lines given out before it are whole lines, the results of the
steps before it, and the chains' totals are not given (their absence, and the
exit code, say the output is incomplete).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from operator import itemgetter
from pathlib import Path
from typing import IO, Any, Final, NamedTuple

import orjson

from packproof.evals.metrics.cache.model import Pricer, Profile, Prompts
from packproof.evals.metrics.cache.profiles import profiles_from
from packproof.evals.metrics.cache.totals import RunningTotals
from packproof.evals.project import DATA
from packproof.evals.scenarios.yamlsafe import load_yaml
from packproof.packer.errors import InputError
from packproof.packer.jsonio import dumps, loads, round_float

__all__ = [
    "BATCH_LINES",
    "SHIPPED_PROFILES",
    "TraceStep",
    "load_profiles",
    "profile",
    "read_steps",
    "simulate",
]

SHIPPED_PROFILES: Final = DATA / "cache-profiles.yaml"
# Lines priced together: large enough that pricing runs in its loop, not in
# per-call set-up; small enough that a batch is a few megabytes at most.
BATCH_LINES: Final = 1024
_KEYS: Final = frozenset({"chain", "t", "segments", "static_segments", "probe", "breakpoints"})
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


class TraceStep(NamedTuple):
    """One checked trace line: its number, its JSON object, and the step it is."""

    line: int
    record: dict[str, Any]
    chain: str
    t: float
    ids: list[str]
    tokens: list[int]
    static: int
    probe: bool
    breakpoints: list[int] | None


class _Seen:
    """What reading keeps of a chain, to check its next line: its last time and
    each segment id's token count."""

    __slots__ = ("last_t", "tokens")

    def __init__(self) -> None:
        self.last_t = -math.inf
        self.tokens: dict[str, int] = {}


@contextmanager
def _lines(path: str) -> Iterator[IO[bytes]]:
    if path == "-":
        yield sys.stdin.buffer
        return
    try:
        stream = Path(path).open("rb")  # noqa: SIM115 (closed below, after the last line)
    except OSError as exc:
        raise InputError("", f"cannot read file: {exc.strerror}", source=path) from None
    with stream:
        yield stream


def read_steps(path: str) -> Iterator[TraceStep]:
    """The trace's steps (``path``, or ``-`` for stdin), one line read at a time
    and checked before it is given: its JSON and fields (:func:`_step`), its
    chain's time order, and each segment id's one token count in its chain."""
    source = "<stdin>" if path == "-" else path
    seen: dict[str, _Seen] = {}
    with _lines(path) as stream:
        number = 0
        try:
            for number, raw in enumerate(stream, 1):
                if not raw.strip():
                    continue
                try:
                    record = _loads(raw)
                    try:
                        t, ids, tokens, static, probe, marks = _step(record)
                    except InputError:  # what is wrong, as the strict reader sees it
                        record = loads(raw.decode("utf-8"))
                        t, ids, tokens, static, probe, marks = _step(record)
                except UnicodeDecodeError as exc:
                    where = f"line {number}"
                    raise InputError(
                        where, f"not UTF-8 text (byte {exc.start} of the line)"
                    ) from None
                except InputError as exc:
                    raise _at_line(exc, number, source) from None
                chain = record["chain"]
                state = seen.get(chain)
                if state is None:
                    state = seen[chain] = _Seen()
                _check_chain(state, number, chain, t, ids, tokens)
                yield TraceStep(number, record, chain, t, ids, tokens, static, probe, marks)
        except InputError as exc:
            raise exc if exc.source else exc.with_source(source) from None
        except OSError as exc:  # a directory, a read error mid-file
            raise InputError(
                f"line {number + 1}", f"cannot read file: {exc.strerror}", source=source
            ) from None
    if not seen:
        raise InputError(
            "",
            "the trace has no steps",
            expected="one JSON object a line",
            found="nothing",
            source=source,
        )


def _check_chain(
    state: _Seen, number: int, chain: str, t: float, ids: list[str], tokens: list[int]
) -> None:
    if t < state.last_t:
        raise InputError(
            f"line {number} /t",
            f"out of time order in chain {chain!r}",
            expected=f"t >= {state.last_t:.15g}",
            found=t,
        )
    state.last_t = t
    # each id's first count, given back for each segment: C-speed, and a
    # mismatch is the rare case that walks the segments to name the first
    counts = state.tokens
    if list(map(counts.setdefault, ids, tokens)) != tokens:
        i = next(i for i, (x, n) in enumerate(zip(ids, tokens, strict=True)) if counts[x] != n)
        raise InputError(
            f"line {number} /segments/{i}/1",
            f"segment {ids[i]!r} has another token count than earlier in chain {chain!r} "
            "(a segment id stands for one content)",
            expected=f"{counts[ids[i]]}, its count before",
            found=tokens[i],
        )


def _loads(raw: bytes) -> Any:
    """One line's JSON: orjson, several times faster than the strict reader, when
    it accepts the line and every ``":`` in the line ends a distinct key of its
    object (orjson keeps the last of a repeated key); else the strict reader,
    which says what is wrong. (A line orjson reads differently, an integer past
    64 bits made a float, fails :func:`_step`, which then reads it strictly.)"""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return loads(raw.decode("utf-8"))
    if type(value) is not dict or raw.count(b'":') != len(value):
        return loads(raw.decode("utf-8"))
    return value


def _at_line(exc: InputError, number: int, source: str) -> InputError:
    """An error in one line's JSON, placed at that line of the file."""
    where = exc.where
    if where.startswith("line 1 "):
        where = f"line {number} " + where[len("line 1 ") :]
    else:
        where = f"line {number} {where}".rstrip()
    return InputError(where, exc.message, expected=exc.expected, found=exc.found, source=source)


def _step(record: Any) -> tuple[float, list[str], list[int], int, bool, list[int] | None]:
    """A checked line: its time, segment ids and tokens, static prefix, probe
    flag and breakpoints (None: the default placement)."""
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
    marks = record.get("breakpoints")
    if marks is not None:
        if not isinstance(marks, list):
            raise InputError(
                "/breakpoints", "not a list", expected="an array of segment counts", found=marks
            )
        for i, b in enumerate(marks):
            if isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= len(segments):
                raise InputError(
                    f"/breakpoints/{i}",
                    "not a breakpoint",
                    expected=f"a segment count in [1, {len(segments)}]",
                    found=b,
                )
    return t, ids, tokens, static, probe, marks


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


class _Chain:
    """A chain being priced: its steps of the batch, its cache, its totals."""

    __slots__ = ("pricer", "prompts", "totals")

    def __init__(self, chosen: Profile) -> None:
        self.prompts, self.pricer, self.totals = Prompts(), Pricer(chosen), RunningTotals()


def simulate(path: str, name: str, chosen: Profile) -> Iterator[str]:
    """The output lines: each step as read plus its ``cached``, ``written``,
    ``uncached``, ``cost`` and ``prefix_break``, in file order, a batch of lines
    at a time; then one ``{"chain", "profile", "total"}`` line per chain, in
    order of first appearance, whose ``total`` sums the conversation steps and,
    in ``probes``, the probes. A bad line raises :class:`InputError` when it is
    read (see the module docstring)."""
    chains: dict[str, _Chain] = {}
    batch: list[tuple[dict[str, Any], _Chain]] = []
    for step in read_steps(path):
        chain = chains.get(step.chain)
        if chain is None:
            chain = chains[step.chain] = _Chain(chosen)
        marks = step.breakpoints
        if marks is not None and chosen.mode == "breakpoints":
            if len(set(marks)) > chosen.max_breakpoints:
                raise InputError(
                    f"line {step.line} /breakpoints",
                    f"more breakpoints than profile {name!r} allows",
                    expected=f"at most {chosen.max_breakpoints} distinct",
                    found=len(set(marks)),
                    source="<stdin>" if path == "-" else path,
                )
        else:
            marks = None
        try:
            chain.prompts.add(step.t, step.ids, step.tokens, step.static, step.probe, marks)
        except ValueError as exc:  # (the checks above leave only a total past 2**63)
            where = f"line {step.line} /segments"
            raise InputError(where, str(exc), source="<stdin>" if path == "-" else path) from None
        batch.append((step.record, chain))
        if len(batch) >= BATCH_LINES:
            yield from _priced(batch)
            batch.clear()
    yield from _priced(batch)
    for chain_name, chain in chains.items():
        total = chain.totals.result().to_json()
        yield dumps({"chain": chain_name, "profile": name, "total": total})


def _priced(batch: list[tuple[dict[str, Any], _Chain]]) -> Iterator[str]:
    """Price each chain's steps of the batch, then give the batch's lines in order."""
    costs = {}
    for chain in dict.fromkeys(c for _, c in batch):
        priced = chain.pricer.price(chain.prompts)
        chain.prompts.clear()
        chain.totals.add(priced)
        costs[chain] = iter(priced)
    for record, chain in batch:
        cost = next(costs[chain])
        if isinstance(record["t"], float):
            record["t"] = round_float(record["t"])
        record["cached"], record["written"], record["uncached"] = (
            cost.cached,
            cost.written,
            cost.uncached,
        )
        record["cost"], record["prefix_break"] = round_float(cost.cost), cost.prefix_break
        yield dumps(record, prepared=True)
