"""The provider prompt-cache model: what a chain of prompts costs under a
provider's prefix cache (REFERENCE.md section 5, "The cache model, exactly").

A step is a time ``t`` in seconds and a prompt: a list of segments ``(id, tokens)``,
whose first ``static_segments`` form the static prefix. Segment identity is the
id (the caller makes ids unique per content); N is the prompt's total tokens.
Per step, in time order:

1. Entries whose expiry is <= now are gone (written at t with ``ttl_s`` 300, an
   entry serves t + 299 and not t + 300).
2. The hit H (tokens):
   - ``breakpoints``: breakpoints at the end of the prompt and, when
     ``static_breakpoint``, after the static prefix. H is the longest live entry
     equal to the prompt's first k segments, k within ``lookback`` segments at or
     before a breakpoint (b - lookback <= k <= b). With ``refresh_on_hit`` that
     entry's expiry becomes now + ``ttl_s``.
   - ``prefix``: H is the longest live stored prefix, rounded down to a multiple
     of ``granularity``, and 0 when that is below ``min_tokens``.
3. Writes, expiry now + ``ttl_s`` (a new entry, or a restarted lifetime):
   - ``breakpoints``: each breakpoint prefix of at least ``min_tokens``;
     W = (largest written prefix) - H, or 0 when nothing is written.
   - ``prefix``: every segment-boundary prefix of the prompt; W = N - H when
     N >= ``min_tokens``, else 0.
4. U = N - H - W; cost = read*H + write*W + U, in input-token units.

A step is a prefix break when the previous step's segment ids are not a prefix
of this one's (the first step is not a break): a property of the policy alone.

How it stays fast: per step, Python does a fixed amount of work, and only
C-speed operations (join, slicing, comparison, hashing) touch every segment.
Segment ids become two-character codes, so a prompt prefix is a string. The
cache keeps its live keys in a dict, sorted in a list, and in a queue in expiry
order (time only grows, so expiry is popped from the front). The longest prefix
the prompt shares with any live key is its common prefix with one of its two
neighbours in sorted order; in ``prefix`` mode that is the hit, since the stored
prefixes are the prefixes of the live prompts, and in ``breakpoints`` mode it
bounds the few lookups of the breakpoint windows. ``tests/evals/test_cache.py``
checks it against a direct transcription of the rules above.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Final, Literal, NamedTuple

__all__ = [
    "MODES",
    "ChainTotals",
    "Mode",
    "Profile",
    "Step",
    "StepCost",
    "chain_totals",
    "price_chain",
]

Mode = Literal["breakpoints", "prefix"]
MODES: Final[tuple[Mode, ...]] = ("breakpoints", "prefix")
_ID, _TOKENS = itemgetter(0), itemgetter(1)
_row = tuple.__new__  # a NamedTuple without its Python-level __new__: half the cost


@dataclass(frozen=True)
class Profile:
    """One provider's cache, as published (``evals/data/cache-profiles.yaml``).

    ``read`` and ``write`` are multiples of the input price; ``min_tokens`` the
    shortest cacheable prefix; ``granularity`` the token step hits come in (1 =
    none; ``prefix`` mode only); ``ttl_s`` an entry's lifetime; ``refresh_on_hit``,
    ``lookback`` (segments) and ``static_breakpoint`` apply to ``breakpoints`` mode.
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

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {self.mode!r}")
        for name in ("read", "write", "ttl_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, not {value!r}")
        if self.min_tokens < 0 or self.lookback < 0 or self.granularity < 1:
            raise ValueError("min_tokens and lookback must be >= 0, granularity >= 1")


class Step(NamedTuple):
    """One prompt of a chain: its time (seconds), its segments ``(id, tokens)``
    in prompt order, and how many leading segments form the static prefix."""

    t: float
    segments: Sequence[tuple[str, int]]
    static_segments: int = 0


class StepCost(NamedTuple):
    """One step's tokens: cached H, written W, uncached U (H + W + U = N), and
    its cost read*H + write*W + U in input-token units."""

    cached: int
    written: int
    uncached: int
    cost: float
    prefix_break: bool


class _Codes(dict[str, str]):
    """Segment id -> a two-character code (first seen, first numbered), so that a
    prompt is a string: hashed once per object, compared by memcmp, and cut to
    its first k segments by ``prompt[: 2 * k]``. 1,114,112**2 ids fit."""

    def __missing__(self, key: str) -> str:
        high, low = divmod(len(self), 0x110000)
        code = self[key] = chr(high) + chr(low)
        return code


def price_chain(steps: Iterable[Step], profile: Profile) -> list[StepCost]:
    """Price a chain of steps, in time order, under ``profile``, starting from an
    empty cache. Raises ValueError on a step with no segments, a static prefix
    longer than the prompt, or a step earlier than the one before."""
    prefix_mode = profile.mode == "prefix"
    read, write, ttl = profile.read, profile.write, profile.ttl_s
    min_tokens, granularity, lookback = profile.min_tokens, profile.granularity, profile.lookback
    refresh, static_breakpoint = profile.refresh_on_hit, profile.static_breakpoint
    # The cache: each live key (an encoded prompt prefix: the whole prompt in
    # prefix mode, a breakpoint prefix in breakpoints mode) -> its expiry; the
    # same keys sorted; and (expiry, key) as written, which is expiry order.
    cache: dict[str, float] = {}
    keys: list[str] = []
    queue: deque[tuple[float, str]] = deque()

    def touch(key: str, until: float) -> None:
        if key not in cache:
            insort(keys, key)
        cache[key] = until
        queue.append((until, key))

    code = _Codes().__getitem__
    prev, last_t = "", -math.inf
    out: list[StepCost] = []
    for t, segments, static in steps:
        if not t >= last_t:  # NaN fails this too
            raise ValueError(f"step at t={t!r} comes after one at t={last_t!r}")
        last_t = t
        n = len(segments)
        if not n or not 0 <= static <= n:
            raise ValueError(f"a step needs segments and 0 <= static_segments <= {n}")
        prompt = "".join(map(code, map(_ID, segments)))
        tokens = list(map(_TOKENS, segments))
        prefix_break = not prompt.startswith(prev)
        prev = prompt
        while queue and queue[0][0] <= t:  # entries whose expiry is <= now are gone
            until, key = queue.popleft()
            if cache.get(key) == until:  # else it was used or written again since
                del cache[key]
                del keys[bisect_left(keys, key)]
        # The longest prefix of the prompt that a live key shares (in characters):
        # in sorted order the keys sharing most with the prompt are its neighbours.
        i = bisect_left(keys, prompt)
        shared = _common_prefix(keys[i - 1], prompt, 0) if i else 0
        if i < len(keys):
            shared = _common_prefix(keys[i], prompt, shared)
        shared //= 2  # in segments
        total = sum(tokens)
        until = t + ttl
        if prefix_mode:  # the stored prefixes are the prefixes of the live prompts
            hit = sum(tokens[:shared])
            hit -= hit % granularity
            if hit < min_tokens:
                hit = 0
            write_end = True
            written = total - hit if total >= min_tokens else 0
        else:
            best = _window_hit(prompt, cache, n, shared, lookback, 0)
            bp_static = static if static_breakpoint and 0 < static < n else 0
            if bp_static > best:
                best = _window_hit(prompt, cache, bp_static, shared, lookback, best)
            hit = sum(tokens[:best])
            write_end = total >= min_tokens  # the end breakpoint: the largest prefix
            written = total - hit if write_end else 0
            if bp_static and sum(tokens[:bp_static]) >= min_tokens:
                touch(prompt[: 2 * bp_static], until)
            if best and refresh and not (best == n and write_end):  # (else written below)
                touch(prompt[: 2 * best], until)
        if write_end:  # touch(prompt, until), inlined: the one write of every step
            if prompt not in cache:
                insort(keys, prompt)
            cache[prompt] = until
            queue.append((until, prompt))
        uncached = total - hit - written
        out.append(
            _row(
                StepCost,
                (hit, written, uncached, read * hit + write * written + uncached, prefix_break),
            )
        )
    return out


def _common_prefix(key: str, prompt: str, known: int) -> int:
    """How many leading characters ``key`` and ``prompt`` share, given that the
    answer only matters when it exceeds ``known`` (else ``known`` is returned)."""
    if prompt.startswith(key):
        return max(len(key), known)
    if not key.startswith(prompt[: known + 1]):
        return known
    low, high = known + 1, min(len(key), len(prompt))  # shared: low; not: above high
    while low < high:  # binary search by memcmp on slices
        mid = (low + high + 1) // 2
        if key.startswith(prompt[:mid]):
            low = mid
        else:
            high = mid - 1
    return low


def _window_hit(
    prompt: str, cache: dict[str, float], b: int, shared: int, lookback: int, floor: int
) -> int:
    """Breakpoints mode: the largest k in [b - lookback, b] and above ``floor``
    whose prefix is a live entry, else ``floor``. No live key shares more than
    ``shared`` segments with the prompt, so the search starts there."""
    for k in range(min(b, shared), max(b - lookback, floor + 1, 1) - 1, -1):
        if prompt[: 2 * k] in cache:
            return k
    return floor


@dataclass(frozen=True)
class ChainTotals:
    """A chain's sums. ``cache_hit_rate`` = cached / input_tokens and
    ``relative_cost`` = cost / input_tokens (null when the chain has no tokens);
    ``first_break`` is the index of the first prefix break, or null."""

    steps: int
    input_tokens: int
    cached: int
    written: int
    uncached: int
    cost: float
    cache_hit_rate: float | None
    relative_cost: float | None
    prefix_breaks: int
    first_break: int | None

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def chain_totals(costs: Sequence[StepCost]) -> ChainTotals:
    cached = sum(c.cached for c in costs)
    written = sum(c.written for c in costs)
    uncached = sum(c.uncached for c in costs)
    cost = math.fsum(c.cost for c in costs)
    tokens = cached + written + uncached
    breaks = [i for i, c in enumerate(costs) if c.prefix_break]
    return ChainTotals(
        steps=len(costs),
        input_tokens=tokens,
        cached=cached,
        written=written,
        uncached=uncached,
        cost=cost,
        cache_hit_rate=cached / tokens if tokens else None,
        relative_cost=cost / tokens if tokens else None,
        prefix_breaks=len(breaks),
        first_break=breaks[0] if breaks else None,
    )
