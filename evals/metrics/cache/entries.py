"""Searches of a cache's entries (model.py): prompts as strings of two-character
codes (prompts.py), kept sorted between the sentinels ``""`` and :data:`TOP`
with each entry's expiry beside it. A prefix of a prompt sorts before the
prompt, and every entry sharing a prompt's first k segments sorts between
that prefix and the prompt: the searches are bisections and memcmp."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import compress
from typing import Final

__all__ = ["TOP", "common", "scan", "scan_each", "sweep"]

# sorts after every prompt (a code's characters are below U+D800, prompts.py), so
# that keys[i] always exists
TOP: Final = "\U0010ffff"


def scan(
    p: str, keys: list[str], untils: list[float], i: int, t: float, high: int, low: int
) -> tuple[int, int]:
    """The largest k in [low, high] (low >= 1) whose ``p[: 2 * k]`` is a live
    entry, and its index (p's is ``i``); else (0, 0). The entries between
    ``p[: 2 * low]`` and ``p[: 2 * high]`` in sorted order hold every such prefix,
    longest last: read from the end when they are fewer than the lengths to try
    (most often none or one), else each length is looked up."""
    start = bisect_left(keys, p[: 2 * low], 0, i)
    end = bisect_right(keys, p[: 2 * high], start, i + 1)
    if end - start > high - low:
        return scan_each(p, keys, untils, i, t, high, low)
    for j in range(end - 1, start - 1, -1):
        key = keys[j]
        if untils[j] > t and p.startswith(key):
            return len(key) >> 1, j
    return 0, 0


def scan_each(
    p: str, keys: list[str], untils: list[float], i: int, t: float, high: int, low: int
) -> tuple[int, int]:
    """:func:`scan`, one bisection per length."""
    for k in range(high, low - 1, -1):
        key = p[: 2 * k]
        j = bisect_left(keys, key, 0, i)
        if keys[j] == key and untils[j] > t:
            return k, j
    return 0, 0


def common(key: str, p: str, low: int, high: int, guess: int) -> int:
    """The largest k in [low, high] with ``key.startswith(p[: 2 * k])``, ``low``
    qualifying. A break most often follows the static prefix (``guess``) or comes
    at a segment new to the trace (``high``): tried first, then a binary search."""
    if low < guess < high:
        if not key.startswith(p[: 2 * guess]):
            high = guess - 1
        elif key.startswith(p[: 2 * guess + 2]):
            low = guess + 1
        else:
            return guess
    if low < high and key.startswith(p[: 2 * high]):
        return high
    high -= 1
    while low < high:
        mid = (low + high + 1) >> 1
        if key.startswith(p[: 2 * mid]):
            low = mid
        else:
            high = mid - 1
    return low


def sweep(keys: list[str], untils: list[float], t: float, latest: float) -> None:
    """Drop the entries dead at t (all, when ``latest``, the last expiry set, is)."""
    if t >= latest:
        del keys[1:-1], untils[1:-1]
    else:
        alive = [until > t for until in untils]
        keys[:] = compress(keys, alive)
        untils[:] = compress(untils, alive)
