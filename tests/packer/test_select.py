"""The uncapped fill by prefix sums decides exactly what the walk decides."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from packproof.packer import select
from packproof.packer.reasons import O_BUDGET, O_INCLUDED
from packproof.packer.select import CategoryCaps, fill, fill_walk

costs_st = st.lists(st.integers(0, 40), min_size=select._SMALL + 1, max_size=300)


def fills(
    order: np.ndarray, tokens: np.ndarray, remaining: int, slots: int | None, stop: bool
) -> tuple[list[int], list[int], list[int]]:
    """The walk's outcomes, then the prefix fill's with its usual number of
    prefix steps and with one step (so that it finishes one at a time)."""
    categories = [None] * len(tokens)
    args = (order, tokens, categories, remaining, slots, CategoryCaps({}, []))
    walk = fill_walk(*args, stop_at_misfit=stop).tolist()
    fast = fill(*args, stop_at_misfit=stop).tolist()
    steps = select._PREFIX_STEPS
    select._PREFIX_STEPS = 1
    try:
        one_step = fill(*args, stop_at_misfit=stop).tolist()
    finally:
        select._PREFIX_STEPS = steps
    return walk, fast, one_step


@given(
    costs=costs_st,
    remaining=st.integers(0, 2000),
    slots=st.none() | st.integers(0, 400),
    stop=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_prefix_fill_equals_walk(
    costs: list[int], remaining: int, slots: int | None, stop: bool, seed: int
) -> None:
    tokens = np.array(costs, dtype=np.int64)
    order = np.random.default_rng(seed).permutation(len(costs))
    walk, fast, one_step = fills(order, tokens, remaining, slots, stop)
    assert fast == walk
    assert one_step == walk


def test_more_misfits_than_prefix_steps() -> None:
    # Each prefix step takes one 10 and skips the next big item, which no longer
    # fits: more misfits than prefix steps, so the fill finishes one at a time.
    big = [95 - 10 * k for k in range(10)]
    tokens = np.array([c for b in big for c in (10, b)] + [1] * 20, dtype=np.int64)
    walk, fast, _ = fills(np.arange(len(tokens)), tokens, 100, None, False)
    assert fast == walk
    assert walk[:4] == [O_INCLUDED, O_BUDGET, O_INCLUDED, O_BUDGET]
