"""A chain's prompts encoded for the pricer (model.py): the only per-segment work.

Each step's segment ids become two-character codes (first seen, first numbered)
joined into one string, so that the first k segments are the string's first 2k
characters, compared by memcmp; the characters are below U+D800 (no surrogate),
so that a reader turns a string of codes back into numbers at C speed
(``str.encode("utf-32-le")``) to check the ids' token counts. Its tokens become
cumulative sums (any prefix's tokens in one lookup); and it notes where the
first id new to the chain is (no cache entry can share a longer prefix). A chain
priced as it is read (``packproof cache simulate``) is encoded a batch of steps
at a time: :meth:`Prompts.clear` drops the steps priced and keeps the numbering.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from operator import itemgetter
from typing import NamedTuple

import numpy as np

__all__ = ["CODE_BASE", "Codes", "Prompts", "Step", "code"]

_ID, _TOKENS = itemgetter(0), itemgetter(1)


class Step(NamedTuple):
    """One prompt of a chain: its time (seconds), its segments ``(id, tokens)`` in
    order, its static prefix (segments), whether it is a probe, and the
    breakpoints its caller placed (segment counts; None: the profile's default
    placement, the end and the static prefix)."""

    t: float
    segments: Sequence[tuple[str, int]]
    static_segments: int = 0
    probe: bool = False
    breakpoints: Sequence[int] | None = None


CODE_BASE = 0xD800  # a code's two characters: number // CODE_BASE, number % CODE_BASE


class Codes(dict[str, str]):
    """Segment id -> a two-character code, first seen first numbered."""

    def __missing__(self, key: str) -> str:
        made = self[key] = code(len(self))
        return made


def code(number: int) -> str:
    """The code of the ``number``-th id (from 0): two characters below U+D800."""
    if number >= CODE_BASE * CODE_BASE:  # (3e9 ids: more than memory holds)
        raise ValueError("more than 3 billion distinct segment ids in one chain")
    return chr(number // CODE_BASE) + chr(number % CODE_BASE)


class Prompts:
    """One chain's steps as the pricer reads them, a compact column each, added in
    time order. Step i has ``t[i]``; ``codes[i]``, its ids as two-character codes
    (first seen, first numbered), so its first k segments are ``codes[i][: 2 * k]``;
    ``cum[start[i] + k]``, their tokens; ``static[i]`` (0 when the whole prompt:
    no breakpoint of its own); ``known[i]``, how many leading segments have ids an
    earlier step had (no entry shares more); ``probe[i]``; ``breakpoints[i]``, the
    caller's breakpoints, distinct and ascending (None: the default placement)."""

    def __init__(self, codes: Codes | None = None) -> None:
        self._codes = Codes() if codes is None else codes  # (a reader's, shared)
        self.last_t = -math.inf  # the latest step's time, kept by clear()
        self.t, self.cum, self.start = array("d"), array("q"), array("q")
        self.static, self.known = array("q"), array("q")
        self.codes: list[str] = []
        self.probe: list[bool] = []
        self.breakpoints: list[tuple[int, ...] | None] = []

    @classmethod
    def of(cls, steps: Iterable[Step]) -> Prompts:
        prompts = cls()
        for t, segments, static, probe, breakpoints in steps:
            prompts.add(t, map(_ID, segments), map(_TOKENS, segments), static, probe, breakpoints)
        return prompts

    def add(
        self,
        t: float,
        ids: Iterable[str],
        tokens: Iterable[int],
        static: int,
        probe: bool,
        breakpoints: Iterable[int] | None = None,
    ) -> None:
        """Raises ValueError on no segments, a static prefix past them, a
        breakpoint outside 1..n, 2**63 tokens, or a time earlier than the step
        before (checked here, once per chain, not once per profile priced).
        Repeated breakpoints count once."""
        numbered = len(self._codes)
        cum = list(accumulate(tokens, initial=0))
        codes = "".join(map(self._codes.__getitem__, ids))
        try:
            self.add_coded(t, codes, numbered, cum, static, probe, breakpoints)
        except ValueError:  # all or nothing: the ids this step numbered are forgotten
            for _ in range(len(self._codes) - numbered):
                self._codes.popitem()
            raise

    def add_coded(
        self,
        t: float,
        codes: str,
        numbered: int,
        cum: list[int] | bytes,
        static: int,
        probe: bool,
        breakpoints: Iterable[int] | None = None,
    ) -> None:
        """:meth:`add` for a reader that encoded the ids with this chain's
        :class:`Codes` (given to the constructor), ``numbered`` of them before
        this step, and summed the tokens: ``cum``, the cumulative tokens (0 first),
        a list or the bytes of int64 values."""
        if not t >= self.last_t:  # NaN fails this too
            raise ValueError(f"step at t={t!r} comes after one at t={self.last_t!r}")
        start = len(self.cum)
        n = len(cum) - 1 if isinstance(cum, list) else len(cum) // 8 - 1
        if not n or not 0 <= static <= n:
            raise ValueError(f"a step needs segments and 0 <= static_segments <= {n}")
        marks = None
        if breakpoints is not None:  # (an empty list: nothing is read or written)
            given = list(breakpoints)
            if not all(type(b) is int and 1 <= b <= n for b in given):
                raise ValueError(f"breakpoints must be segment counts from 1 to {n}, not {given!r}")
            marks = tuple(sorted(set(given)))
        try:  # (all or nothing)
            if isinstance(cum, list):
                self.cum.fromlist(cum)
            else:
                self.cum.frombytes(cum)
        except OverflowError:
            raise ValueError("a prompt of 2**63 tokens or more") from None
        known = n
        if len(self._codes) > numbered:  # where the first id new to the chain is
            first = code(numbered)
            known = codes.find(first)
            while known & 1:  # (a match across two codes)
                known = codes.find(first, known + 1)
            known >>= 1
        self.last_t = t
        self.t.append(t)
        self.codes.append(codes)
        self.start.append(start)
        self.static.append(static if static < n else 0)
        self.known.append(known)
        self.probe.append(probe)
        self.breakpoints.append(marks)

    def placed(self, breakpoints: Iterable[Sequence[int]]) -> Prompts:
        """The same steps with the caller's ``breakpoints`` (one list per step,
        checked as :meth:`add` checks them), sharing this chain's encoding: one
        chain priced under several placements is encoded once."""
        out = Prompts(self._codes)
        out.last_t, out.t, out.cum, out.start = self.last_t, self.t, self.cum, self.start
        out.static, out.known = self.static, self.known
        out.codes, out.probe = self.codes, self.probe
        marks = list(breakpoints)
        if len(marks) != len(self.codes):
            raise ValueError(f"{len(marks)} breakpoint lists for {len(self.codes)} steps")
        for codes, given in zip(self.codes, marks, strict=True):
            n = len(codes) >> 1
            if not all(type(b) is int and 1 <= b <= n for b in given):
                raise ValueError(f"breakpoints must be segment counts from 1 to {n}, not {given!r}")
            out.breakpoints.append(tuple(sorted(set(given))))
        return out

    def headed(self, tokens: int) -> Prompts:
        """A whole chain's steps each with one more segment first: a static
        prefix of ``tokens`` (``static_segments`` 1), a segment no step has.
        Priced as the steps encoded with it are (tested): its code is one no
        id of the chain has, numbered last rather than first (the pricer reads
        only which codes are equal, never their order), so the steps' own codes
        are kept. The breakpoints are the default; :meth:`placed` gives others."""
        codes = Codes(self._codes)
        key = "<static prefix>"
        while key in codes:  # (an id of the chain)
            key += "'"
        head = codes[key]
        out = Prompts(codes)
        steps = len(self.codes)
        cum = np.frombuffer(self.cum, dtype=np.int64)
        start = np.frombuffer(self.start, dtype=np.int64) + np.arange(steps, dtype=np.int64)
        headed = np.empty(len(cum) + steps, dtype=np.int64)
        zero = np.zeros(len(headed), dtype=bool)
        zero[start] = True
        headed[zero] = 0
        if tokens and len(cum) and int(cum.max()) > np.iinfo(np.int64).max - tokens:
            raise ValueError("a prompt of 2**63 tokens or more")
        headed[~zero] = cum + tokens
        out.last_t, out.t, out.probe = self.last_t, self.t, self.probe
        out.cum = array("q", headed.tobytes())
        out.start = array("q", start.tobytes())
        out.static = array("q", [1] * steps)
        out.known = array("q", (k + 1 if i else 0 for i, k in enumerate(self.known)))
        out.codes = [head + codes for codes in self.codes]
        out.breakpoints = [None] * steps
        return out

    def clear(self) -> None:
        """Drop the steps (priced), keeping the ids' numbering and the last time:
        the steps added next continue the chain."""
        for column in (self.t, self.cum, self.start, self.static, self.known):
            del column[:]
        self.codes.clear()
        self.probe.clear()
        self.breakpoints.clear()

    def rows(self) -> Iterator[tuple[float, str, int, int, int, bool, tuple[int, ...] | None]]:
        """(t, codes, start, static, known, probe, breakpoints) per step."""
        return zip(
            self.t,
            self.codes,
            self.start,
            self.static,
            self.known,
            self.probe,
            self.breakpoints,
            strict=True,
        )
