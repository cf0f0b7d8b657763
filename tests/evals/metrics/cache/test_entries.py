"""The cache entries' prefix scan: reading the entries between the shortest and
the longest prefix tried finds what one bisection per length finds."""

from __future__ import annotations

import math
from bisect import bisect_left

from hypothesis import given, settings
from hypothesis import strategies as st

from packproof.evals.metrics.cache.entries import TOP, scan, scan_each

# prompts over a tiny alphabet of codes, so that entries share prefixes often
_codes = st.lists(st.sampled_from(["aa", "ab", "ba", "bb"]), min_size=1, max_size=8).map("".join)


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, list[str], list[float], int, float, int, int]:
    prompts = draw(st.lists(_codes, max_size=6))
    entries = sorted(
        {p[: 2 * k] for p in prompts for k in draw(st.sets(st.integers(1, len(p) >> 1)))}
    )
    keys = ["", *entries, TOP]
    untils = [math.inf, *(draw(st.sampled_from([1.0, 5.0, 9.0])) for _ in entries), math.inf]
    p = draw(st.one_of(_codes, st.sampled_from(prompts) if prompts else _codes))
    n = len(p) >> 1
    high = draw(st.integers(1, n))
    low = draw(st.integers(1, high))
    # from the default placement (p's own index) or a caller's (the whole list)
    i = draw(st.sampled_from([bisect_left(keys, p), len(keys) - 1]))
    return p, keys, untils, i, draw(st.sampled_from([0.0, 5.0, 10.0])), high, low


@settings(max_examples=2000, deadline=None)
@given(cases())
def test_scan_finds_what_a_bisection_per_length_finds(
    case: tuple[str, list[str], list[float], int, float, int, int],
) -> None:
    p, keys, untils, i, t, high, low = case
    assert scan(p, keys, untils, i, t, high, low) == scan_each(p, keys, untils, i, t, high, low)
