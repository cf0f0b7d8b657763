"""A trace line's checks at C speed (``packproof cache simulate``, files.py).

A prompt of 30-300 segments makes each check that walks the segments in Python
cost more than reading the line's JSON; and the common line is a good one. So a
line orjson read is first checked by :func:`quick_step` in a handful of passes
that run in C: the segments split into ids and counts by one ``zip`` (strict:
every segment two items), the counts made an int64 array (a float, a string or
a count past 2**63 is refused there), the least count (below 2: a JSON ``true``
or ``false`` would pass as 1 or 0, so the counts' types are then looked at one
by one), and the top-level fields one at a time. The ids' types are checked as
they are numbered (:func:`encode`), the one check that has to touch each id.

Whatever it does not accept it leaves to the strict walk (:func:`strict_step`),
which accepts exactly the same good lines and names what is wrong in a bad one:
so accepting a line here never changes a result or an error message, only how
soon it is found.

Each segment id has one token count in its chain: :class:`Seen` keeps the
counts in a list indexed by the ids' numbers (the chain's :class:`Codes`,
shared with its :class:`Prompts`), and :func:`first_mismatch` compares a step's
counts with them in one ``map`` and one tuple comparison, the numbers read back
from the step's string of codes at C speed (:func:`check_chain`: the time order, then the counts);
a step whose ids are all new to the chain, each once, only records them.
The strict walk, :func:`strict_step`, is here too: it names the first thing
wrong in a line; and so are the line's JSON (:func:`read_json`) and the
cumulative tokens as int64 bytes (:func:`summed`), which reading a whole line
and reading it without its chain's last prompt (reuse.py) share.
"""

from __future__ import annotations

import math
import operator
import re
from array import array
from collections.abc import Sequence
from functools import partial
from itertools import accumulate, compress
from operator import itemgetter
from typing import Any, Final, TypeAlias

import numpy as np
import orjson

from packproof.evals.metrics.cache.prompts import CODE_BASE, Codes, code
from packproof.packer.errors import InputError
from packproof.packer.jsonio import loads

__all__ = [
    "KEYS",
    "IdCodes",
    "QuickSegments",
    "QuickStep",
    "Seen",
    "StrictStep",
    "check_chain",
    "encode",
    "first_mismatch",
    "quick_segments",
    "quick_step",
    "read_json",
    "strict_step",
    "summed",
]

KEYS: Final = frozenset({"chain", "t", "segments", "static_segments", "probe", "breakpoints"})
_INT: Final = {int}
_BIG: Final = 1 << 63
_FEW: Final = 8  # ids new in a step handled one by one below this, in numpy from it
_IS_NONE: Final = partial(operator.is_, None)
_PAIRS: Final = re.compile("..", re.DOTALL)  # a string of codes, code by code
_ID, _TOKENS = itemgetter(0), itemgetter(1)

# ids, tokens, their int64 array
QuickSegments: TypeAlias = "tuple[tuple[str, ...], tuple[int, ...], array[int]]"
# t, ids, tokens, their int64 array, static segments, probe, breakpoints
QuickStep: TypeAlias = (
    "tuple[float, tuple[str, ...], tuple[int, ...], array[int], int, bool, list[int] | None]"
)


def quick_step(record: Any, before: int = 0) -> QuickStep | None:
    """The checked step of a line orjson read, or None when the strict walk
    must decide. Accepts only what the strict walk accepts, but for the ids'
    types: :func:`encode` refuses an id that is not a string. ``before``: the
    segments that precede the record's in the prompt (reuse.py), which the static
    prefix and the breakpoints count."""
    if type(record) is not dict or not KEYS.issuperset(record):
        return None
    t, segments, probe = record.get("t"), record.get("segments"), record.get("probe", False)
    if type(record.get("chain")) is not str or type(probe) is not bool:
        return None
    if (type(t) is not float and type(t) is not int) or not math.isfinite(t):
        return None
    if type(t) is int and not -_BIG <= t < _BIG:  # (the strict reader's: orjson's are 64-bit)
        return None
    if type(segments) is not list:
        return None
    if segments:
        quick = quick_segments(segments)
        if quick is None:
            return None
        ids, tokens, counts = quick
    elif before:  # the segments of the chain's last prompt and no more (reuse.py)
        ids, tokens, counts = (), (), array("q")
    else:
        return None
    n = before + len(ids)
    static = record.get("static_segments", 0)
    if type(static) is not int or not 0 <= static <= n:
        return None
    marks = record.get("breakpoints")
    if marks is not None and (
        type(marks) is not list or not all(type(b) is int and 1 <= b <= n for b in marks)
    ):
        return None
    return t, ids, tokens, counts, static, probe, marks


def quick_segments(segments: list[Any]) -> QuickSegments | None:
    """The ids, tokens and tokens' int64 array of a non-empty list of segments
    orjson read, or None when the strict walk must decide (ids' types aside)."""
    try:
        # strict: every segment has as many items as the first, so two (a list,
        # or a string or object of two, whose second item is refused below)
        ids, tokens = zip(*segments, strict=True)
        counts = array("q", tokens)
    except (TypeError, ValueError, OverflowError):
        return None
    least = min(tokens)
    if least < 2 and (least < 0 or set(map(type, tokens)) != _INT):
        return None
    if sum(tokens) >= _BIG:  # (Prompts.add names the prompt too long)
        return None
    return ids, tokens, counts


class IdCodes(Codes):
    """:class:`Codes` that refuse an id that is not a string (the strict walk
    then names it); an unhashable one fails the lookup already."""

    def __missing__(self, key: str) -> str:
        if type(key) is not str:
            raise TypeError("a segment id is a string")
        return super().__missing__(key)


class Seen:
    """What reading keeps of a chain, to check its next line: its last time,
    its ids' codes (:class:`IdCodes`) and each id's token count, by number."""

    __slots__ = ("codes", "counts", "last_t")

    def __init__(self) -> None:
        self.last_t = -math.inf
        self.codes = IdCodes()
        self.counts: list[int] = []


def encode(state: Seen, ids: Sequence[str]) -> str:
    """The ids' codes, one string; new ids numbered (first seen, first), many
    at once in numpy. TypeError on an id that is not a string (or not hashable)."""
    codes = state.codes
    got = list(map(codes.get, ids))
    if None not in got:
        return "".join(got)  # type: ignore[arg-type]
    start = len(codes)
    if got.count(None) >= _FEW and start + len(got) <= CODE_BASE * CODE_BASE:
        fresh = list(dict.fromkeys(compress(ids, map(_IS_NONE, got))))
        if set(map(type, fresh)) != {str}:
            raise TypeError("a segment id is a string")
        numbers = np.arange(start, start + len(fresh))
        chars = np.empty(2 * len(fresh), "<u2")
        chars[0::2], chars[1::2] = numbers // CODE_BASE, numbers % CODE_BASE
        codes.update(zip(fresh, _PAIRS.findall(chars.tobytes().decode("utf-16-le")), strict=True))
    return "".join(map(codes.__getitem__, ids))


def first_mismatch(state: Seen, codes: str, numbered: int, tokens: Sequence[int]) -> int | None:
    """Record the counts of the ids first seen in this step (``numbered`` were
    known before it), each id's first; then the index of the first segment whose
    count is not its id's, or None."""
    known, total = state.counts, len(state.codes)
    if total - numbered == len(tokens):  # every id new, each once: numbered in order
        known.extend(tokens)
        return None
    if 0 < total - numbered < _FEW:
        known.extend([0] * (total - numbered))
        for number in range(numbered, total):  # (a few a step: found at C speed)
            made = code(number)
            at = codes.find(made)
            while at & 1:  # (a match across two codes)
                at = codes.find(made, at + 1)
            known[number] = tokens[at >> 1]
    units = array("I", codes.encode("utf-32-le"))
    numbers: Sequence[int]
    places: Any = None  # the numbers in numpy, when needed
    if total <= CODE_BASE:
        numbers = units[1::2]
    else:
        wide = np.frombuffer(units, np.uint32).astype(np.int64)
        places = wide[0::2] * CODE_BASE + wide[1::2]
        numbers = places.tolist()
    if total - numbered >= _FEW:  # many new: each one's first place, in numpy
        if places is None:
            places = np.frombuffer(units, np.uint32)[1::2]
        fresh = np.flatnonzero(places >= numbered)
        first = fresh[np.unique(places[fresh], return_index=True)[1]]
        known.extend(map(tokens.__getitem__, first.tolist()))
    expected = tuple(map(known.__getitem__, numbers))
    if expected == (tokens if type(tokens) is tuple else tuple(tokens)):
        return None
    return next(i for i, (a, b) in enumerate(zip(expected, tokens, strict=True)) if a != b)


def check_chain(
    state: Seen,
    number: int,
    chain: str,
    t: float,
    ids: Sequence[str],
    tokens: Sequence[int],
    codes: str,
    numbered: int,
    before: int = 0,
) -> None:
    """The chain's time order, then each id's one count; ``ids`` and the rest
    are the prompt's after its first ``before`` segments (reuse.py)."""
    if t < state.last_t:
        raise InputError(
            f"line {number} /t",
            f"out of time order in chain {chain!r}",
            expected=f"t >= {state.last_t:.15g}",
            found=t,
        )
    state.last_t = t
    i = first_mismatch(state, codes, numbered, tokens)
    if i is not None:
        before_ = state.counts[ord(codes[2 * i]) * CODE_BASE + ord(codes[2 * i + 1])]
        raise InputError(
            f"line {number} /segments/{before + i}/1",
            f"segment {ids[i]!r} has another token count than earlier in chain {chain!r} "
            "(a segment id stands for one content)",
            expected=f"{before_}, its count before",
            found=tokens[i],
        )


StrictStep: TypeAlias = "tuple[float, list[str], list[int], int, bool, list[int] | None]"


def strict_step(record: Any) -> StrictStep:
    """A checked line: its time, segment ids and tokens, static prefix, probe
    flag and breakpoints (None: the default placement)."""
    if not isinstance(record, dict):
        raise InputError("/", "a step must be a JSON object", expected="an object", found=record)
    unknown = sorted(set(record) - KEYS)
    if unknown:
        raise InputError(
            f"/{unknown[0]}", "unknown key", expected=", ".join(sorted(KEYS)), found=unknown[0]
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


def read_json(raw: bytes) -> Any:
    """One line's JSON: orjson, several times faster than the strict reader, when
    it accepts the line and every ``":`` in the line ends a distinct key of its
    object (orjson keeps the last of a repeated key); else the strict reader,
    which says what is wrong. (A line orjson reads differently, an integer past
    64 bits made a float, fails the strict walk, which then reads it strictly.)"""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return loads(raw.decode("utf-8"))
    if type(value) is not dict:
        return loads(raw.decode("utf-8"))
    # As many colons as keys: each ends a distinct key, and the line is read as
    # the next test reads it unless a space before a colon would send it to the
    # strict reader, which reads the one value orjson reads otherwise, a time
    # past 64 bits, as an integer. (A faster count than the next.)
    if raw.count(b":") == len(value):
        t = value.get("t")
        if type(t) is not float or abs(t) < 2.0**63:
            return value
    if raw.count(b'":') != len(value):
        return loads(raw.decode("utf-8"))
    return value


def summed(counts: array[int], start: int) -> bytes:
    """``start`` and the cumulative tokens after it as int64 bytes, of counts
    quick_step checked (and their sum with ``start`` below 2**63): in Python for
    a short prompt, in numpy (a few calls' set-up, then C) for a long one."""
    if len(counts) < 64:
        return array("q", accumulate(counts, initial=start)).tobytes()
    cum = np.empty(len(counts) + 1, dtype=np.int64)
    cum[0] = start
    np.cumsum(np.frombuffer(counts, dtype=np.int64), out=cum[1:])
    if start:
        cum[1:] += start
    return cum.tobytes()
