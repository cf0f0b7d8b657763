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
from the step's string of codes at C speed (:func:`check_chain`: the time order, then the counts).
The strict walk, :func:`strict_step`, is here too: it names the first thing
wrong in a line.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from operator import itemgetter
from typing import Any, Final, TypeAlias

from packproof.evals.metrics.cache.prompts import CODE_BASE, Codes, code
from packproof.packer.errors import InputError

__all__ = [
    "KEYS",
    "IdCodes",
    "QuickStep",
    "Seen",
    "StrictStep",
    "check_chain",
    "encode",
    "first_mismatch",
    "quick_step",
    "strict_step",
]

KEYS: Final = frozenset({"chain", "t", "segments", "static_segments", "probe", "breakpoints"})
_INT: Final = {int}
_BIG: Final = 1 << 63
_ID, _TOKENS = itemgetter(0), itemgetter(1)

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
    """The ids' codes, one string; new ids numbered. TypeError on an id that is
    not a string (or not hashable)."""
    return "".join(map(state.codes.__getitem__, ids))


def first_mismatch(state: Seen, codes: str, numbered: int, tokens: Sequence[int]) -> int | None:
    """Record the counts of the ids first seen in this step (``numbered`` were
    known before it), each id's first; then the index of the first segment whose
    count is not its id's, or None."""
    known, total = state.counts, len(state.codes)
    if total > numbered:
        known.extend([0] * (total - numbered))
        for number in range(numbered, total):  # (a few a step: found at C speed)
            made = code(number)
            at = codes.find(made)
            while at & 1:  # (a match across two codes)
                at = codes.find(made, at + 1)
            known[number] = tokens[at >> 1]
    units = array("I", codes.encode("utf-32-le"))
    if total <= CODE_BASE:
        numbers: Sequence[int] = units[1::2]
    else:
        numbers = [
            high * CODE_BASE + low for high, low in zip(units[0::2], units[1::2], strict=True)
        ]
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
