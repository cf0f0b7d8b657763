"""The report's bootstrap (bootstrap.py, through stats.py) gives the very bits of
scipy.stats.bootstrap: the same interval, compared as bytes, for the mean and for
the cluster ratio, on random samples of every small size, with repeated values,
signed zeros, several seeds, resample counts and confidence levels."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import DegenerateDataWarning, bootstrap

from packproof.evals.report import bootstrap as fast
from packproof.evals.report.stats import cluster_ci, mean_ci

# scipy's standard error of a single resample (ddof=1), which neither side reports
pytestmark = pytest.mark.filterwarnings(
    "ignore:Degrees of freedom:RuntimeWarning", "ignore:invalid value:RuntimeWarning"
)

VALUES = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, 1 / 3, -2 / 7, 0.1, 1e-300]),
)
SAMPLES = st.lists(VALUES, min_size=2, max_size=50)
RESAMPLES = st.sampled_from([1, 2, 3, 10, 99, 1000, 2000])
CONFIDENCE = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 1 / 3])
SEEDS = st.integers(0, 2**63 - 1)


def bits(*xs: float) -> bytes:
    return np.array(xs, dtype=np.float64).tobytes()


def scipy_mean(values: np.ndarray, resamples: int, confidence: float, seed: int) -> bytes:
    res = bootstrap(
        (values,),
        np.mean,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        random_state=np.random.default_rng(seed),
    )
    return bits(res.confidence_interval.low, res.confidence_interval.high)


def ratio(s: np.ndarray, n: np.ndarray, axis: int = -1) -> np.ndarray:
    result: np.ndarray = s.sum(axis=axis) / n.sum(axis=axis)
    return result


@settings(max_examples=300, deadline=None)
@given(SAMPLES, RESAMPLES, CONFIDENCE, SEEDS)
def test_mean_ci_is_scipy_bit_for_bit(
    sample: list[float], resamples: int, confidence: float, seed: int
) -> None:
    values = np.array(sample, dtype=np.float64)
    out = mean_ci(values, resamples, confidence, seed)
    assert out is not None
    if values.min() == values.max():  # no bootstrap: the interval is the mean
        assert out["low"] == out["high"] == out["mean"]
        return
    assert bits(out["low"], out["high"]) == scipy_mean(values, resamples, confidence, seed)


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 50), st.integers(1, 4), RESAMPLES, CONFIDENCE, SEEDS)
def test_repeated_values_are_scipy_bit_for_bit(
    n: int, distinct: int, resamples: int, confidence: float, seed: int
) -> None:
    rng = np.random.default_rng(seed % 1000)
    values = rng.choice(np.array([0.0, 1.0, 0.25, 1 / 3])[:distinct], n)
    if values.min() == values.max():
        return
    theta = fast.resampled_means(values, resamples, seed)
    got = bits(*fast.percentile_interval(theta, confidence))
    assert got == scipy_mean(values, resamples, confidence, seed)


@settings(max_examples=200, deadline=None)
@given(SAMPLES, st.integers(1, 20), RESAMPLES, CONFIDENCE, SEEDS)
def test_cluster_ci_is_scipy_bit_for_bit(
    sample: list[float], clusters: int, resamples: int, confidence: float, seed: int
) -> None:
    values = np.array(sample, dtype=np.float64)
    labels = np.random.default_rng(seed % 1000).integers(0, clusters, len(values))
    out = cluster_ci(values, labels, resamples, confidence, seed)
    assert out is not None
    _, inverse = np.unique(labels, return_inverse=True)
    sums = np.bincount(inverse, weights=values)
    sizes = np.bincount(inverse).astype(np.float64)
    means = sums / sizes
    if len(sums) < 2 or means.min() == means.max():
        return
    res = bootstrap(
        (sums, sizes),
        ratio,
        paired=True,
        vectorized=True,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        random_state=np.random.default_rng(seed),
    )
    expected = bits(res.confidence_interval.low, res.confidence_interval.high)
    assert bits(out["low"], out["high"]) == expected


@pytest.mark.parametrize("n", [999, 3759, 5000])
def test_large_samples_are_scipy_bit_for_bit(n: int) -> None:
    """Samples past one block of resamples (computed a block at a time), and
    past the size whose intervals mean_ci remembers."""
    values = np.random.default_rng(n).random(n)
    out = mean_ci(values, 2000, 0.95, 7)
    assert out is not None
    assert bits(out["low"], out["high"]) == scipy_mean(values, 2000, 0.95, 7)


def test_indices_are_scipy_draws_and_cached() -> None:
    first = fast.indices(5, 100, 3)
    expected = np.random.default_rng(3).integers(0, 5, (100, 5))
    assert np.array_equal(first, expected)
    assert fast.indices(5, 100, 3) is first
    assert not first.flags.writeable


def test_nan_distribution_warns_like_scipy() -> None:
    theta = np.array([0.0, np.nan, 1.0])
    with pytest.warns(DegenerateDataWarning):
        low, high = fast.percentile_interval(theta, 0.95)
    assert np.isnan(low) and np.isnan(high)


def test_other_inputs_go_to_scipy() -> None:
    """A NaN, an integer sample or no fixed seed: scipy computes the interval."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nan = mean_ci(np.array([0.0, 1.0, np.nan]), 100, 0.95, 1)
    assert nan is not None and np.isnan(nan["low"])
    ints = mean_ci(np.array([0, 1, 1, 3]), 100, 0.9, 5)
    assert ints is not None
    assert bits(ints["low"], ints["high"]) == scipy_mean(np.array([0, 1, 1, 3]), 100, 0.9, 5)
