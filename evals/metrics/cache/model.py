"""The provider prompt-cache model: what a chain of prompts costs under a
provider's prefix cache (REFERENCE.md section 5, "The cache model, exactly").

A step is a time ``t`` in seconds and a prompt: a list of segments ``(id, tokens)``,
whose first ``static_segments`` form the static prefix. Segment identity is the
id (the caller makes ids unique per content); N is the prompt's total tokens.
Per step, in time order:

1. Entries whose expiry is <= now are gone (written at t with ``ttl_s`` 300, an
   entry serves t + 299 and not t + 300).
2. The hit H (tokens). ``breakpoints`` (the caller's, a step's ``breakpoints``;
   by default one at the end of the prompt, one after the static prefix when
   ``static_breakpoint``): the longest live entry equal to the prompt's first k
   segments, b - ``lookback`` <= k <= b for a breakpoint b;
   with ``refresh_on_hit`` its expiry becomes now + ``ttl_s``. ``prefix``: the
   longest live stored prefix, rounded down to a multiple of ``granularity``, and
   0 when that is below ``min_tokens``.
3. Writes, expiry now + ``ttl_s`` (a new entry or a restarted lifetime).
   ``breakpoints``: each breakpoint prefix of at least ``min_tokens``, and W =
   (largest written prefix) - H, or 0. ``prefix``: every segment-boundary prefix
   of the prompt, and W = N - H when N >= ``min_tokens``, else 0.
4. U = N - H - W; cost = read*H + write*W + U, in input-token units.

A step is a prefix break when the last conversation step's segment ids are not a
prefix of this one's (the first step is not a break): a property of the policy. A
*probe* step is priced exactly as the next step would be from the cache state
reached (expiry at its time, then H, W, U and the cost), but it refreshes and
writes nothing: later steps are priced as if it were not there, its prefix break
compares it with the last conversation step, and :func:`chain_totals` sums it apart.

The model relies on a segment id standing for one content, so for one token
count within a chain: ``packproof cache simulate`` refuses a trace that gives an
id two counts (files.py).

Reading makes each step a row of :class:`Prompts` (prompts.py: the only
per-segment work); pricing a row is then a fixed amount of Python plus C-speed
bisection, slicing and memcmp (docs/metrics.md, "Prompt-cache model"), checked
by tests/evals/metrics/cache/test_cache.py against a direct transcription of
the rules above. A :class:`Pricer` keeps one chain's cache between batches of
rows; a chain's totals are in totals.py.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

from packproof.evals.metrics.cache.entries import TOP, common, scan, sweep
from packproof.evals.metrics.cache.prompts import Prompts, Step
from packproof.evals.metrics.cache.totals import ChainTotals, StepCost, Totals, chain_totals

__all__ = [
    "MODES",
    "ChainTotals",
    "Mode",
    "Pricer",
    "Profile",
    "Prompts",
    "Step",
    "StepCost",
    "Totals",
    "chain_totals",
    "price_chain",
    "price_prompts",
]

Mode = Literal["breakpoints", "prefix"]
MODES: Final[tuple[Mode, ...]] = ("breakpoints", "prefix")
_row = tuple.__new__  # a NamedTuple without its Python-level __new__: half the cost
_SWEEP: Final = 4  # dead entries are dropped every _SWEEP lifetimes (or all at once)
_MASK: Final = (1 << 64) - 1


@dataclass(frozen=True)
class Profile:
    """One provider's cache, as published (``evals/data/cache-profiles.yaml``):
    ``read`` and ``write`` are multiples of the input price; ``min_tokens`` the
    shortest cacheable prefix; ``granularity`` the token step hits come in (1 =
    none; ``prefix`` mode only); ``ttl_s`` an entry's lifetime; ``refresh_on_hit``,
    ``lookback`` (segments) and ``static_breakpoint`` apply to ``breakpoints`` mode;
    ``max_breakpoints`` caps the breakpoints a caller may place per request
    (``breakpoints`` mode; Anthropic 4). ``long_context_tokens`` > 0 prices a
    whole request of more tokens at ``long_context_factor`` x (read, write and
    uncached alike). ``miss_rate`` > 0 makes the profile pessimistic: a would-be
    hit is lost (evicted early, or routed to a machine without the entry) at a
    deterministic ``miss_rate`` share of steps, drawn from ``miss_seed`` and the
    step's number among the chain's conversation steps (a probe draws as the next
    step would); the step is then priced as if nothing were live.
    ``source`` and ``date`` say where and when the figures were published."""

    mode: Mode
    read: float
    write: float
    min_tokens: int
    granularity: int
    ttl_s: float
    refresh_on_hit: bool
    lookback: int
    static_breakpoint: bool
    source: str = ""
    date: str = ""
    max_breakpoints: int = 4
    long_context_tokens: int = 0
    long_context_factor: float = 1.0
    miss_rate: float = 0.0
    miss_seed: int = 0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {self.mode!r}")
        for name in ("read", "write", "ttl_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, not {value!r}")
        if self.min_tokens < 0 or self.lookback < 0 or self.granularity < 1:
            raise ValueError("min_tokens and lookback must be >= 0, granularity >= 1")
        if self.max_breakpoints < 1 or self.long_context_tokens < 0:
            raise ValueError("max_breakpoints must be >= 1, long_context_tokens >= 0")
        if not (math.isfinite(self.long_context_factor) and self.long_context_factor >= 1):
            raise ValueError("long_context_factor must be a finite number >= 1")
        if not 0 <= self.miss_rate <= 1:
            raise ValueError("miss_rate must be a number from 0 to 1")


def price_chain(steps: Iterable[Step], profile: Profile) -> list[StepCost]:
    """Price a chain of steps, in time order, under ``profile``, from an empty cache.
    Raises ValueError on a step with no segments, a static prefix past the
    prompt, or a step earlier than the one before."""
    return price_prompts(Prompts.of(steps), profile)


def price_prompts(prompts: Prompts, profile: Profile) -> list[StepCost]:
    """:func:`price_chain` for a chain already encoded (priced under many profiles);
    :meth:`Prompts.add` has checked the time order."""
    return Pricer(profile).price(prompts)


class Pricer:
    """One chain's cache under ``profile``, from empty: :meth:`price` prices the
    steps of ``prompts`` and leaves the cache as they left it, so a chain read a
    batch at a time (each batch then :meth:`Prompts.clear`-ed) is priced as if
    whole. What it holds does not grow with the chain: the live entries (dead
    ones are swept), the last conversation prompt, and where the static entry is."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.keys, self.untils = (
            ["", TOP],
            [math.inf, math.inf],
        )  # entries, sorted, between sentinels
        self.sweep_at = self.latest = -math.inf  # the next sweep; the latest expiry set
        self.prev, self.static_at = "", 0  # the last conversation prompt; the static entry's index
        self.number = 0  # conversation steps priced (a pessimistic profile's draws)

    def price(self, prompts: Prompts) -> list[StepCost]:
        """The costs of the steps in ``prompts``, which continue the chain."""
        return (_price_prefix if self.profile.mode == "prefix" else _price_breakpoints)(
            prompts, self
        )


def _price_breakpoints(prompts: Prompts, state: Pricer) -> list[StepCost]:
    profile = state.profile
    read, write, ttl, min_tokens = profile.read, profile.write, profile.ttl_s, profile.min_tokens
    lookback, refresh = profile.lookback, profile.refresh_on_hit
    static_bp = profile.static_breakpoint
    keys, untils = state.keys, state.untils
    sweep_at, latest, prev, s = state.sweep_at, state.latest, state.prev, state.static_at
    most, long_at, long_factor = profile.max_breakpoints, profile.long_context_tokens, 0.0
    if long_at:
        long_factor = profile.long_context_factor
    misses, number = profile.miss_rate > 0, state.number
    out: list[StepCost] = []
    append, cum = out.append, prompts.cum
    for t, p, base, static, known, probe, marks in prompts.rows():
        if t >= sweep_at or t >= latest:
            sweep(keys, untils, t, latest)
            sweep_at, s = t + _SWEEP * ttl, 0
        n = len(p) >> 1
        if marks is not None:  # the caller's breakpoints
            if len(marks) > most:
                raise ValueError(
                    f"{len(marks)} breakpoints in one request; the profile allows {most}"
                )
            best, j = _explicit(p, marks, keys, untils, t, min(known, n), lookback)
            if misses and best and _lost(profile, number + 1):
                best = 0
            hit, total = cum[base + best], cum[base + n]
            top = 0
            for b in marks:
                if cum[base + b] >= min_tokens:
                    top = cum[base + b]
            written = top - hit if top else 0
            uncached = total - hit - written
            cost = read * hit + write * written + uncached
            if long_at and total > long_at:
                cost *= long_factor
            append(_row(StepCost, (hit, written, uncached, cost, not p.startswith(prev), probe)))
            if probe:
                continue
            number += 1
            latest = until = t + ttl
            if best and refresh:
                untils[j] = until
            for b in marks:
                if cum[base + b] >= min_tokens:
                    key = p[: 2 * b]
                    k = bisect_left(keys, key)
                    if keys[k] == key:
                        untils[k] = until
                    else:
                        keys.insert(k, key)
                        untils.insert(k, until)
            s, prev = 0, p
            continue
        bs = static_bp and static  # the static breakpoint (0 < static < n), or 0
        i = bisect_left(keys, p)
        found = keys[i] == p
        if found and untils[i] > t:  # the whole prompt is a live entry
            best, j = n, i
        else:
            # Every entry that is a prefix of p sorts before it and is a prefix of
            # its left neighbour, or that neighbour itself: then the longest.
            j = i - 1
            left = keys[j]
            top, low = len(left) >> 1, n - lookback
            if top >= low and p.startswith(left) and untils[j] > t:
                best = top
            else:
                best = j = 0
                top = min(top, known)
                if top >= low and (low < 1 or left.startswith(p[: 2 * low])):
                    best, j = scan(p, keys, untils, i, t, min(n, top), max(low, 1))
                if not best and bs:  # the static window: where the static entry was seen?
                    key, low = keys[s], bs - lookback
                    if len(key) == 2 * bs and untils[s] > t and p.startswith(key):
                        best, j = bs, s
                    elif top >= low and (low < 1 or left.startswith(p[: 2 * low])):
                        best, j = scan(p, keys, untils, i, t, min(bs, top), max(low, 1))
        if misses and best and _lost(profile, number + 1):
            best = 0
        hit, total = cum[base + best], cum[base + n]
        end = total >= min_tokens  # the end breakpoint is written: the largest prefix
        written, uncached = (total - hit, 0) if end else (0, total - hit)
        cost = read * hit + write * written + uncached
        if long_at and total > long_at:
            cost *= long_factor
        append(_row(StepCost, (hit, written, uncached, cost, not p.startswith(prev), probe)))
        if probe:
            continue
        number += 1
        latest = until = t + ttl
        if best and refresh:
            untils[j] = until
        if end:
            if found:
                untils[i] = until
            else:
                keys.insert(i, p)
                untils.insert(i, until)
        if bs and cum[base + bs] >= min_tokens:  # the static breakpoint, which sorts before p
            if best == bs:
                s = j
            elif len(keys[s]) != 2 * bs or not p.startswith(keys[s]):
                key = p[: 2 * bs]
                s = bisect_left(keys, key, 0, i)
                if keys[s] != key:
                    keys.insert(s, key)
                    untils.insert(s, until)
            untils[s] = until
        prev = p
    state.sweep_at, state.latest, state.prev, state.static_at = sweep_at, latest, prev, s
    state.number = number
    return out


def _explicit(
    p: str,
    marks: tuple[int, ...],
    keys: list[str],
    untils: list[float],
    t: float,
    known: int,
    lookback: int,
) -> tuple[int, int]:
    """The longest live entry equal to the first k segments of p, for a k within
    ``lookback`` segments at or before any of the breakpoints ``marks``
    (ascending), and its index; else (0, 0). No entry shares more than the
    ``known`` leading segments."""
    best = j = 0
    for b in reversed(marks):
        high, low = min(b, known), max(b - lookback, best + 1, 1)
        if high >= low:
            found, at = scan(p, keys, untils, len(keys) - 1, t, high, low)
            if found:
                best, j = found, at
    return best, j


def _lost(profile: Profile, number: int) -> bool:
    """Whether the pessimistic profile loses the hit of the chain's conversation
    step ``number`` (1-based): a SplitMix64 draw from the seed and the number."""
    x = (profile.miss_seed * 0x9E3779B97F4A7C15 + number * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    x ^= x >> 31
    return x < profile.miss_rate * 2.0**64


def _price_prefix(prompts: Prompts, state: Pricer) -> list[StepCost]:
    profile = state.profile
    read, write, ttl = profile.read, profile.write, profile.ttl_s
    min_tokens, granularity = profile.min_tokens, profile.granularity
    keys, untils = state.keys, state.untils  # here the prompts sent
    sweep_at, latest, prev = state.sweep_at, state.latest, state.prev
    long_at, long_factor = profile.long_context_tokens, profile.long_context_factor
    misses, number = profile.miss_rate > 0, state.number
    out: list[StepCost] = []
    append, cum = out.append, prompts.cum
    for t, p, base, static, known, probe, _marks in prompts.rows():
        if t >= sweep_at or t >= latest:
            sweep(keys, untils, t, latest)
            sweep_at = t + _SWEEP * ttl
        n = len(p) >> 1
        # The stored prefixes are the prefixes of the live prompts: the longest
        # shared with p is shared with one of p's live neighbours in sorted order.
        i = r = bisect_left(keys, p)
        while untils[r] <= t:
            r += 1
        right = keys[r]
        if right.startswith(p):
            shared = n
        else:
            j = i - 1
            while untils[j] <= t:
                j -= 1
            left = keys[j]
            shared = len(left) >> 1
            if not p.startswith(left):
                shared = common(left, p, 0, min(shared, known), static)
            if right is not TOP and shared < known and right.startswith(p[: 2 * shared + 2]):
                shared = common(right, p, shared + 1, known, 0)
        hit = cum[base + shared] // granularity * granularity
        if hit < min_tokens or (misses and hit and _lost(profile, number + 1)):
            hit = 0
        total = cum[base + n]
        written = total - hit if total >= min_tokens else 0
        uncached = total - hit - written
        cost = read * hit + write * written + uncached
        if long_at and total > long_at:
            cost *= long_factor
        append(_row(StepCost, (hit, written, uncached, cost, not p.startswith(prev), probe)))
        if probe:
            continue
        number += 1
        latest = t + ttl
        if keys[i] == p:
            untils[i] = latest
        else:
            keys.insert(i, p)
            untils.insert(i, latest)
        prev = p
    state.sweep_at, state.latest, state.prev = sweep_at, latest, prev
    state.number = number
    return out
