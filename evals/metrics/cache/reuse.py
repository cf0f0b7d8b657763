"""Reading a line that repeats most of its chain's last prompt without reading
those segments again (``packproof cache simulate``, files.py).

A conversation resends its whole prompt each step, and most steps change little
of the last one: they add to its end, drop its oldest segments, or replace one in
its middle. The line's JSON then holds runs of the text of the last prompt's
segments, and where it does, byte for byte (memcmp), the line is read without
them: a prompt is the last prompt's first ``k`` segments, new text ``x`` (none,
or up to four segments), the last prompt's segments ``j`` to ``m`` (found by the
text of its first segment, the longest run then by memcmp), and then the rest
of the line (``"segments":[`` and what follows: the new segments and the other
fields), a short line that orjson reads and the quick checks check (lines.py)
as any other; ``x`` is read as the array ``[x]``. The prompt's ids, codes,
cumulative tokens and token counts are the last prompt's runs and the new
segments'. JSON reads an array's elements the same whatever elements precede
them, so the pieces are good JSON exactly when the whole line is (a comma after
the last run and no new segment is the exception: that line is read whole); each
id of the last prompt has its count checked already. A prompt that only extends
the last (``k`` is all of it, no ``x`` and no run) is found first, by one
memcmp; a prompt the same as the last is read with ``"segments":[]``, the empty
array standing for the last prompt's segments. Runs are looked for after a last
prompt of :data:`_SPLICED` segments or more: a shorter prompt is read whole in
less time than its runs take to find.

Only text the reader can place without reading the line is compared: a line
with no backslash (every quote then opens or closes a string, so the first
``"chain":"`` and ``"segments":`` are the keys, and a segment of the line ends
at the first ``]`` after its id's closing quote: where ``x`` is taken to end,
which reading it checks), and a last prompt whose
segments were written as ``dumps`` writes them (no space, the shortest
escapes), the text the output needs: the new segments' is joined to it. Where
the last prompt's segments start is where ``,["`` is in that text, when it is
there once per segment boundary (not when an id ends with ``,[``). Any other
line, and any line the short reading does not accept, is read whole, which
names what is wrong, if anything is.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from typing import Any, Final, TypeAlias

import numpy as np
import orjson

from packproof.evals.metrics.cache.lines import (
    QuickSegments,
    Seen,
    check_chain,
    encode,
    quick_segments,
    quick_step,
    read_json,
    summed,
)
from packproof.packer.errors import InputError
from packproof.packer.jsonio import dumpb

__all__ = ["Extended", "Last", "Piece", "extend", "remember", "split"]

_CHAIN: Final = b'"chain":"'
_SEGMENTS: Final = b'"segments":'
_NONE: Final[QuickSegments] = ((), (), array("q"))
Starts: TypeAlias = "array[int]"  # int64: where a text's segments start
_SKIPS: Final = 4  # new segments looked past for the last prompt's next run
_SPLICED: Final = 64  # segments in a last prompt worth splicing (a shorter one: read whole)
# the last prompt's first k segments, new text x, then its segments j to m
Piece: TypeAlias = "tuple[int, bytes, int, int]"
# a step read (files.py): its line number, record, chain, t, the new segments'
# ids and tokens, cumulative tokens, chain state, codes, ids numbered before it,
# static segments, probe, breakpoints
Extended: TypeAlias = (
    "tuple[int, dict[str, Any], str, float, tuple[str, ...], tuple[int, ...], bytes, Seen, "
    "str, int, int, bool, list[int] | None]"
)


class Last:
    """A chain's last conversation prompt as the next line may repeat it: the
    text of its segments (``open``: without the closing bracket), its ids'
    codes, its cumulative tokens (int64 bytes, 0 first), its total and segment
    count, and where its segments start in the text (:meth:`segment_starts`:
    carried over from the prompt before, or found when a line needs them)."""

    __slots__ = ("codes", "cum", "n", "open", "starts", "text", "total")

    def __init__(
        self, text: bytes, codes: str, cum: bytes, total: int, starts: Starts | None = None
    ) -> None:
        self.text, self.open = text, memoryview(text)[:-1]
        self.codes, self.cum, self.total, self.n = codes, cum, total, len(codes) >> 1
        self.starts = starts

    def segment_starts(self) -> Starts:
        """Where each segment's text starts, then the text's length: segments i
        to m are ``text[starts[i] : starts[m] - 1]``; empty when an id ends with
        ``,[`` (its text cannot be placed)."""
        if self.starts is None:
            found = _piece(self.text[1:-1], self.n, 1)
            self.starts = array("q") if found is None else found + array("q", [len(self.text)])
        return self.starts


def _piece(text: bytes, count: int, at: int) -> Starts | None:
    """Where the ``count`` segments of ``text`` (their JSON, no brackets) start,
    the text placed at ``at``; None when ``,["`` is not there once per boundary."""
    if count < 16:
        if not count:
            return array("q")
        found = [at]
        comma = text.find(b',["')
        while comma >= 0 and len(found) <= count:
            found.append(at + comma + 1)
            comma = text.find(b',["', comma + 3)
        return array("q", found) if len(found) == count else None
    a = np.frombuffer(text, np.uint8)
    hits = np.flatnonzero((a[:-2] == 44) & (a[1:-1] == 91) & (a[2:] == 34))
    if len(hits) != count - 1:
        return None
    return array("q", [at]) + array("q", (hits + (at + 1)).tobytes())


def _joined(starts: Starts, new: bytes, count: int, at: int, length: int) -> Starts | None:
    """``starts`` (the first segments') and then those of the ``count`` new
    segments ``new`` placed at ``at``, in a text of ``length`` bytes."""
    found = _piece(new, count, at)
    return None if found is None else starts + found + array("q", [length])


def remember(raw: bytes, text: bytes, codes: str, cum: bytes, total: int) -> Last | None:
    """The line ``raw`` as its chain's last prompt, when the text of its
    segments is ``text``, their canonical JSON, and the line has no backslash."""
    if b"\\" in raw:
        return None
    at = raw.find(_SEGMENTS)
    if at < 0 or not raw.startswith(text, at + len(_SEGMENTS)):
        return None
    return Last(text, codes, cum, total)


def split(raw: bytes, lasts: dict[str, Last]) -> tuple[str, Last, bytes, Piece | None] | None:
    """The line's chain, that chain's last prompt, the line without the last
    prompt's segments it repeats, and where they were (None: its segments start
    with all of the last prompt's), when the line has no backslash and repeats
    some; else None."""
    if b"\\" in raw:
        return None
    at = raw.find(_CHAIN)
    if at < 0:
        return None
    at += len(_CHAIN)
    try:
        chain = raw[at : raw.find(b'"', at)].decode("utf-8")
    except UnicodeDecodeError:
        return None
    last = lasts.get(chain)
    if last is None:
        return None
    at = raw.find(_SEGMENTS)
    if at < 0:
        return None
    at += len(_SEGMENTS)
    if raw.startswith(last.open, at):
        end = at + len(last.text)
        after = raw[end - 1 : end]
        if after == b",":  # more segments, or a comma and none (bad)
            rest = raw[end:]
            if rest.lstrip(b" \t\r\n").startswith(b"]"):
                return None
            return chain, last, raw[:at] + b"[" + rest, None
        if after == b"]":  # the same segments
            return chain, last, raw[:at] + b"[]" + raw[end:], None
    spliced = _splice(raw, at, last) if last.n >= _SPLICED else None
    return None if spliced is None else (chain, last, *spliced)


def _splice(raw: bytes, at: int, last: Last) -> tuple[bytes, Piece] | None:
    """The line (its segments' array at ``at``) without a run of the last
    prompt's first segments and a run of its later ones, a few new segments at
    most between them; None when it has no such runs."""
    starts, text = last.segment_starts(), last.text
    if not len(starts) or not raw.startswith(b"[", at):
        return None
    k = _longest(raw, at, text, 0, starts, 0, last.n - 1, 0)  # the first k and a comma
    p = s = at + starts[k]
    for _ in range(_SKIPS + 1):  # the segment at s starts a later run, or is new
        quote = raw.find(b'"', s + 2) if raw.startswith(b'["', s) else -1
        end = raw.find(b"]", quote) if quote > 0 else -1
        if end < 0:
            return None
        f = text.find(raw[s : end + 1], starts[k])
        j = bisect_left(starts, f)
        if f > 0 and starts[j] == f:
            break
        if not raw.startswith(b",", end + 1):
            return None
        s = end + 2
    else:
        return None
    m = _longest(raw, s, text, f, starts, j, last.n, 1)  # the run j to m
    end = s + starts[m] - 1 - f
    after = raw[end : end + 1]
    if m == j or after not in (b",", b"]"):
        return None
    if after == b",":
        rest = raw[end + 1 :]
        if rest.lstrip(b" \t\r\n").startswith(b"]"):  # a comma and no segment (bad)
            return None
        short = raw[:at] + b"[" + rest
    else:
        short = raw[:at] + b"[" + raw[end:]
    return short, (k, raw[p : s - 1] if s > p else b"", j, m)


def _longest(
    raw: bytes, s: int, text: bytes, f: int, starts: Starts, low: int, high: int, tail: int
) -> int:
    """The largest m in [low, high] whose ``text[f : starts[m] - tail]`` the line
    has at ``s`` (low's it has): the end tried first, then from low by doubling
    steps (a short run), then halving."""
    if raw.startswith(text[f : starts[high] - tail], s):
        return high
    step = 1
    while low + step < high and raw.startswith(text[f : starts[low + step] - tail], s):
        low += step
        step <<= 1
    high = min(low + step, high) - 1
    while low < high:
        mid = (low + high + 1) >> 1
        if raw.startswith(text[f : starts[mid] - tail], s):
            low = mid
        else:
            high = mid - 1
    return low


def extend(
    number: int,
    seen: dict[str, Seen],
    lasts: dict[str, Last],
    chain: str,
    last: Last,
    line: bytes,
    piece: Piece | None,
) -> Extended | None:
    """The step of a line that repeats ``last``, read as ``line`` (:func:`split`);
    None when it is to be read whole (which names what is wrong, if anything is).
    The step as files.py reads one: its record (its segments an orjson fragment
    of their output text), the new segments' ids and tokens, the cumulative
    tokens as int64 bytes, the chain's state, the prompt's codes, and how many ids
    the chain had numbered before it."""
    k, x, j, m = (last.n, b"", 0, 0) if piece is None else piece
    x_ids, x_tokens, x_counts = _NONE
    value: Any = None
    if x:  # a new segment or a few between the runs, read as an array
        try:
            value = orjson.loads(b"[" + x + b"]")
        except orjson.JSONDecodeError:
            return None
        xs = quick_segments(value) if type(value) is list and value else None
        if xs is None:
            return None
        x_ids, x_tokens, x_counts = xs
    try:
        record = read_json(line)
    except (InputError, UnicodeDecodeError):
        return None
    runs = k + len(x_ids) + m - j  # the segments before the short line's
    quick = quick_step(record, runs)
    if quick is None or record["chain"] != chain:
        return None
    t, ids, tokens, counts, static, probe, marks = quick
    state = seen[chain]
    cum = memoryview(last.cum).cast("q")
    x_total = last_k = cum[k]
    if x:
        x_total += sum(x_tokens)
    y_start = x_total + cum[m] - cum[j]
    total = y_start + sum(tokens)
    if t < state.last_t or total >= 1 << 63:
        return None
    numbered = len(state.codes)
    try:
        x_codes = encode(state, x_ids) if x else ""
        if x:
            check_chain(state, number, chain, t, x_ids, x_tokens, x_codes, numbered, k)
        y_numbered = len(state.codes)
        codes = encode(state, ids)
    except TypeError:
        return None
    check_chain(state, number, chain, t, ids, tokens, codes, y_numbered, runs)
    new = dumpb(record["segments"], prepared=True)[1:-1] if ids else b""
    starts = last.starts
    if piece is None:
        sums = last.cum + summed(counts, last.total)[8:]
        codes = last.codes + codes
        text = b"".join((last.open, b",", new, b"]")) if ids else last.text
        if ids and not probe and starts is not None and len(starts):
            starts = _joined(starts[: last.n], new, len(ids), len(last.text), len(text))
    else:
        run = np.frombuffer(last.cum, np.int64, m - j, 8 * (j + 1)) + (x_total - cum[j])
        sums = b"".join(
            (
                last.cum[: 8 * (k + 1)],
                summed(x_counts, last_k)[8:] if x else b"",
                run.tobytes(),
                summed(counts, y_start)[8:] if ids else b"",
            )
        )
        codes = last.codes[: 2 * k] + x_codes + last.codes[2 * j : 2 * m] + codes
        old = last.text
        assert starts is not None  # (_splice placed the runs)
        at = starts[k]  # where the segments after the first k start
        parts = [old[1 : at - 1]] if k else []
        x = dumpb(value, prepared=True)[1:-1] if x else b""
        if x:
            parts.append(x)
        parts.append(old[starts[j] : starts[m] - 1])
        if ids:
            parts.append(new)
        text = b"[" + b",".join(parts) + b"]"
        if not probe:
            b_at = at + len(x) + 1 if x else at
            y_at = b_at + starts[m] - starts[j]
            shifted = np.frombuffer(starts, np.int64, m - j, 8 * j) + (b_at - starts[j])
            x_starts, y_starts = _piece(x, len(x_ids), at), _piece(new, len(ids), y_at)
            if x_starts is None or y_starts is None:
                starts = None
            else:
                starts = starts[:k] + x_starts + array("q", shifted.tobytes()) + y_starts
                starts.append(len(text))
    record["segments"] = orjson.Fragment(text)
    if not probe:
        lasts[chain] = Last(text, codes, sums, total, starts)
    step = (number, record, chain, t, ids, tokens, sums, state, codes, numbered)
    return *step, static, probe, marks
