"""The walk order of ranked candidates is exactly ``np.lexsort`` of score
descending, then newer ordinal first, whatever the scores (ties, zeros, NaN,
negatives) and ordinals."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from packproof.packer.pipeline import walk_order

SCORES = st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.5, -1.0, float("nan"), float("inf")])


@given(scores=st.lists(SCORES, max_size=40), data=st.data())
def test_walk_order_is_the_lexsort(scores: list[float], data: st.DataObject) -> None:
    n = len(scores)
    ordinals = np.cumsum(data.draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)))
    if data.draw(st.booleans()):  # not ascending: any unique ordinals
        ordinals = np.array(data.draw(st.permutations(ordinals.tolist())), dtype=np.int64)
    s = np.array(scores, dtype=np.float64)
    o = np.asarray(ordinals, dtype=np.int64)
    assert walk_order(s, o).tolist() == np.lexsort((-o, -s)).tolist()


@given(
    n=st.integers(0, 5000),
    seed=st.integers(0, 2**32 - 1),
    ties=st.integers(0, 3),
    nans=st.integers(0, 2),
    zeros=st.booleans(),
)
def test_walk_order_of_many_scores_is_the_lexsort(
    n: int, seed: int, ties: int, nans: int, zeros: bool
) -> None:
    """Thousands of scores (a long replay step's candidates), mostly distinct,
    with a few ties and NaNs; with zeros, as a relevance strategy scores most
    candidates (only the others are sorted)."""
    rng = np.random.default_rng(seed)
    s = rng.standard_normal(n) if not zeros else np.abs(rng.standard_normal(n))
    if zeros and n:
        s[rng.random(n) < 0.7] = 0.0
    if n > 1:
        for _ in range(ties):
            s[rng.integers(n)] = s[rng.integers(n)]
        s[rng.integers(n, size=nans)] = np.nan
    o = np.cumsum(rng.integers(1, 4, size=n))
    assert walk_order(s, o).tolist() == np.lexsort((-o, -s)).tolist()
    assert walk_order(s, o, ascending=True).tolist() == np.lexsort((-o, -s)).tolist()
