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

Reading runs at about the speed of the JSON, the model's arithmetic a small
share: a line's checks run in C where the line is good (lines.py), each step
is encoded once and its segments' output text written as soon as it is read
(the batch then holds bytes, not the segments' objects), and a prompt that
repeats runs of its chain's last one (extended, its oldest segments dropped, a
segment in its middle replaced) is read without them (reuse.py). What a quick
check does not accept goes to the strict walk, which names what is wrong.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import accumulate
from pathlib import Path
from typing import IO, Any, Final, NamedTuple, TypeAlias

import orjson

from packproof.evals.metrics.cache.lines import (
    Seen,
    StrictStep,
    check_chain,
    encode,
    quick_step,
    read_json,
    strict_step,
    summed,
)
from packproof.evals.metrics.cache.model import Pricer, Profile, Prompts
from packproof.evals.metrics.cache.profiles import profiles_from
from packproof.evals.metrics.cache.prompts import Codes
from packproof.evals.metrics.cache.reuse import Last, remember, split
from packproof.evals.metrics.cache.reuse import extend as _extend
from packproof.evals.metrics.cache.totals import RunningTotals
from packproof.evals.project import DATA
from packproof.evals.scenarios.yamlsafe import load_yaml
from packproof.packer.errors import InputError
from packproof.packer.jsonio import dumpb, dumps, loads, round_float

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
    and checked before it is given: its JSON and fields (lines.py), its
    chain's time order, and each segment id's one token count in its chain."""
    for step in _read(path):
        number, record, chain, t, ids, tokens = step[:6]
        static, probe, marks = step[10:]
        yield TraceStep(number, record, chain, t, list(ids), list(tokens), static, probe, marks)


# a read step: its line number, record, chain, t, ids and tokens (a prompt read
# after its chain's last one: the new ones), the cumulative tokens as int64 bytes
# (None: to be summed), its chain's state, the ids' codes, how many ids the
# chain had numbered before it, static segments, probe, breakpoints
_Read: TypeAlias = (
    "tuple[int, dict[str, Any], str, float, Sequence[str], Sequence[int], bytes | None, Seen, "
    "str, int, int, bool, list[int] | None]"
)


def _read(path: str, fast: bool = False) -> Iterator[_Read]:
    """:func:`read_steps`, each step with its chain's state and codes. ``fast``
    (the records are for output only): a record's segments become their output
    text (an orjson fragment), the cumulative tokens are given (None: the strict
    walk's step, left to Prompts.add), and a line that repeats runs of its
    chain's last prompt is read without them (reuse.py)."""
    source = "<stdin>" if path == "-" else path
    seen: dict[str, Seen] = {}
    lasts: dict[str, Last] = {}
    fast = fast and _FRAGMENTS
    ids: Sequence[str]
    tokens: Sequence[int]
    counts: array[int] | None
    with _lines(path) as stream:
        number = 0
        try:
            for number, raw in enumerate(stream, 1):
                if raw.isspace():  # (a line from the file is never empty)
                    continue
                if fast and lasts:
                    parts = split(raw, lasts)
                    extended = None if parts is None else _extend(number, seen, lasts, *parts)
                    if extended is not None:
                        yield extended
                        continue
                try:
                    record = read_json(raw)
                    quick = quick_step(record)  # None: the strict walk decides
                    if quick is not None:
                        t, ids, tokens, counts, static, probe, marks = quick
                    else:
                        record, (t, ids, tokens, static, probe, marks) = _strict(raw, record)
                        counts = None
                    chain = record["chain"]
                    state = seen.get(chain)
                    if state is None:
                        state = seen[chain] = Seen()
                    numbered = len(state.codes)
                    try:
                        codes = encode(state, ids)
                    except TypeError:  # an id not a string: the strict walk names it
                        _strict(raw, record)
                        raise
                except UnicodeDecodeError as exc:
                    where = f"line {number}"
                    raise InputError(
                        where, f"not UTF-8 text (byte {exc.start} of the line)"
                    ) from None
                except InputError as exc:
                    raise _at_line(exc, number, source) from None
                check_chain(state, number, chain, t, ids, tokens, codes, numbered)
                cum = None
                if fast and counts is not None:
                    cum = summed(counts, 0)
                    text = dumpb(record["segments"], prepared=True)
                    # the segments' objects go back to the allocator while warm
                    record["segments"] = orjson.Fragment(text)
                    if not probe:
                        last = remember(raw, text, codes, cum, sum(tokens))
                        if last is None:
                            lasts.pop(chain, None)
                        else:
                            lasts[chain] = last
                elif fast and not probe:
                    lasts.pop(chain, None)
                step = (number, record, chain, t, ids, tokens, cum, state, codes, numbered)
                yield *step, static, probe, marks
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


def _strict(raw: bytes, record: Any) -> tuple[Any, StrictStep]:
    """The line checked by the strict walk, and read by the strict reader when
    that finds something wrong (it names what)."""
    try:
        return record, strict_step(record)
    except InputError:  # what is wrong, as the strict reader sees it
        record = loads(raw.decode("utf-8"))
        return record, strict_step(record)


def _at_line(exc: InputError, number: int, source: str) -> InputError:
    """An error in one line's JSON, placed at that line of the file."""
    where = exc.where
    if where.startswith("line 1 "):
        where = f"line {number} " + where[len("line 1 ") :]
    else:
        where = f"line {number} {where}".rstrip()
    return InputError(where, exc.message, expected=exc.expected, found=exc.found, source=source)


class _Chain:
    """A chain being priced: its steps of the batch, its cache, its totals."""

    __slots__ = ("pricer", "prompts", "totals")

    def __init__(self, chosen: Profile, codes: Codes) -> None:
        self.prompts, self.pricer, self.totals = Prompts(codes), Pricer(chosen), RunningTotals()


def simulate(path: str, name: str, chosen: Profile) -> Iterator[str]:
    """The output lines: each step as read plus its ``cached``, ``written``,
    ``uncached``, ``cost`` and ``prefix_break``, in file order, a batch of lines
    at a time; then one ``{"chain", "profile", "total"}`` line per chain, in
    order of first appearance, whose ``total`` sums the conversation steps and,
    in ``probes``, the probes. A bad line raises :class:`InputError` when it is
    read (see the module docstring)."""
    chains: dict[str, _Chain] = {}
    batch: list[tuple[dict[str, Any], _Chain]] = []
    for step in _read(path, fast=True):
        number, record, key, t, _, tokens, cum, state, codes, numbered = step[:10]
        static, probe, marks = step[10:]
        chain = chains.get(key)
        if chain is None:
            chain = chains[key] = _Chain(chosen, state.codes)
        if marks is not None and chosen.mode == "breakpoints":
            if len(set(marks)) > chosen.max_breakpoints:
                raise InputError(
                    f"line {number} /breakpoints",
                    f"more breakpoints than profile {name!r} allows",
                    expected=f"at most {chosen.max_breakpoints} distinct",
                    found=len(set(marks)),
                    source="<stdin>" if path == "-" else path,
                )
        else:
            marks = None
        # (the strict walk's step, cum None: summed exactly, 2**63 refused)
        summed = list(accumulate(tokens, initial=0)) if cum is None else cum
        try:
            chain.prompts.add_coded(t, codes, numbered, summed, static, probe, marks)
        except ValueError as exc:  # (the checks above leave only a total past 2**63)
            where = f"line {number} /segments"
            raise InputError(where, str(exc), source="<stdin>" if path == "-" else path) from None
        batch.append((record, chain))
        if len(batch) >= BATCH_LINES:
            yield from _priced(batch)
            batch.clear()
    yield from _priced(batch)
    for chain_name, chain in chains.items():
        total = chain.totals.result().to_json()
        yield dumps({"chain": chain_name, "profile": name, "total": total})


def _fragments_agree() -> bool:
    """Whether a record holding its segments as an orjson fragment is written as
    the record holding the segments themselves (not when orjson is not used)."""
    value = [["a", 1], ['\u00e9"', 2]]
    try:
        return dumps({"s": orjson.Fragment(dumpb(value, prepared=True))}, prepared=True) == (
            dumps({"s": value}, prepared=True)
        )
    except TypeError:
        return False


_FRAGMENTS: Final = _fragments_agree()


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
