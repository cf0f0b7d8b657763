"""The report's statistics, at two units (docs/metrics.md, "Statistics"):

- per cell: a mean with its percentile-bootstrap confidence interval
  (:func:`mean_ci`), and the paired difference of two strategies with its
  Wilcoxon signed-rank p-value (:func:`paired`);
- per cluster, when cells cluster (the turns of one conversation are not
  independent): the same mean with a cluster-bootstrap interval, resampling
  whole clusters (:func:`cluster_ci`), and the paired difference with a
  sign-flip permutation test on the clusters' mean differences
  (:func:`cluster_paired`). With k clusters the exact test cannot go below
  2 / 2**k (0.0625 for 5 conversations), however many cells they hold.

Pure functions of numpy arrays (scipy.stats is imported on first use); the
report model (model.py) and the tuner (evals/tune/search.py) use them. The
bootstrap intervals of finite float64 samples come from bootstrap.py, which
reproduces scipy.stats.bootstrap bit for bit from cached resample indices;
anything else goes to scipy itself. A report asks for the same interval of the
same values many times (a metric that does not change with the budget), so
:func:`mean_ci` remembers its last two thousand answers (for samples of up
to 4096 values).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from packproof.evals.report.bootstrap import percentile_interval, resampled, resampled_means

__all__ = ["cluster_ci", "cluster_paired", "clustered", "mean_ci", "paired"]


def mean_ci(
    values: np.ndarray, resamples: int, confidence: float, seed: int
) -> dict[str, Any] | None:
    """Mean with a percentile-bootstrap confidence interval (scipy.stats)."""
    if not len(values):
        return None
    mean = float(values.mean())
    if len(values) < 2 or float(values.min()) == float(values.max()):
        return {"mean": mean, "low": mean, "high": mean, "n": len(values)}
    if _fast(values, resamples, confidence, seed):
        if len(values) <= _REMEMBERED:
            low, high = _mean_interval(values.tobytes(), resamples, confidence, seed)
        else:
            theta = resampled_means(values, resamples, seed)
            low, high = percentile_interval(theta, confidence)
        return {"mean": mean, "low": low, "high": high, "n": len(values)}
    from scipy.stats import bootstrap

    res = bootstrap(
        (values,),
        np.mean,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        random_state=np.random.default_rng(seed),
    )
    return {
        "mean": mean,
        "low": float(res.confidence_interval.low),
        "high": float(res.confidence_interval.high),
        "n": len(values),
    }


def _fast(values: np.ndarray, resamples: int, confidence: float, seed: int) -> bool:
    """Whether bootstrap.py reproduces scipy for these settings: finite float64
    values in one dimension, a positive number of resamples, a confidence level
    strictly between 0 and 1 and an integer seed (the same draws every time)."""
    return (
        isinstance(seed, int | np.integer)
        and isinstance(resamples, int | np.integer)
        and resamples > 0
        and values.dtype == np.float64
        and values.ndim == 1
        and 0 < confidence < 1
        and bool(np.isfinite(values).all())
    )


# Intervals remembered (of at most this many values each, 64 MB in all at most).
_REMEMBERED = 4096


@lru_cache(maxsize=2048)
def _mean_interval(
    data: bytes, resamples: int, confidence: float, seed: int
) -> tuple[float, float]:
    """The percentile-bootstrap interval of the mean of the float64 values in ``data``."""
    theta = resampled_means(np.frombuffer(data, dtype=np.float64), resamples, seed)
    return percentile_interval(theta, confidence)


def paired(
    a: np.ndarray, b: np.ndarray, resamples: int, confidence: float, seed: int
) -> dict[str, Any] | None:
    """Mean difference a - b over paired cells, its bootstrap interval and the
    Wilcoxon signed-rank p-value (1.0 when every difference is 0)."""
    if not len(a):
        return None
    diff = a - b
    out = mean_ci(diff, resamples, confidence, seed)
    assert out is not None
    if np.all(diff == 0):
        out["p_value"] = 1.0
    else:
        from scipy.stats import wilcoxon

        out["p_value"] = float(wilcoxon(diff, zero_method="wilcox").pvalue)
    return out


def clustered(clusters: np.ndarray) -> bool:
    """Whether cells cluster: some cluster holds more than one of them."""
    return int(_cluster_index(clusters).max(initial=-1)) + 1 < len(clusters)


def _cluster_index(clusters: np.ndarray) -> np.ndarray:
    """Each cell's cluster as its index among the sorted distinct clusters:
    ``np.unique(clusters, return_inverse=True)[1]``, hashed rather than sorted
    (a report asks it of a few thousand cells in a handful of clusters, often)."""
    import pandas as pd

    codes, _ = pd.factorize(clusters, sort=True, use_na_sentinel=False)
    return np.asarray(codes, dtype=np.intp)


def cluster_ci(
    values: np.ndarray, clusters: np.ndarray, resamples: int, confidence: float, seed: int
) -> dict[str, Any] | None:
    """The mean over cells with a cluster-bootstrap percentile interval: each
    resample draws whole clusters with replacement, and its statistic is the
    mean over the cells of the clusters drawn (scipy.stats.bootstrap on the
    clusters' sums and sizes, paired). ``n`` counts cells, ``clusters`` clusters."""
    if not len(values):
        return None
    inverse = _cluster_index(clusters)
    sums = np.bincount(inverse, weights=values)
    sizes = np.bincount(inverse).astype(np.float64)
    mean = float(values.mean())
    out = {"mean": mean, "low": mean, "high": mean, "n": len(values), "clusters": len(sums)}
    means = sums / sizes
    if len(sums) < 2 or float(means.min()) == float(means.max()):
        return out

    def ratio(s: np.ndarray, n: np.ndarray, axis: int = -1) -> np.ndarray:
        result: np.ndarray = s.sum(axis=axis) / n.sum(axis=axis)
        return result

    if _fast(sums, resamples, confidence, seed):
        theta = resampled(ratio, (sums, sizes), resamples, seed)
        out["low"], out["high"] = percentile_interval(theta, confidence)
        return out
    from scipy.stats import bootstrap

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
    out["low"] = float(res.confidence_interval.low)
    out["high"] = float(res.confidence_interval.high)
    return out


def cluster_paired(
    a: np.ndarray,
    b: np.ndarray,
    clusters: np.ndarray,
    resamples: int,
    confidence: float,
    seed: int,
) -> dict[str, Any] | None:
    """Mean difference a - b over paired cells with its cluster-bootstrap
    interval (:func:`cluster_ci`), and the two-sided p-value of a sign-flip
    permutation test on the clusters' mean differences (scipy.stats.
    permutation_test: under no difference, each cluster's mean difference is
    as likely negated; exact when 2**clusters <= ``resamples``, else
    ``resamples`` random sign flips; 1.0 when every difference is 0)."""
    if not len(a):
        return None
    diff = a - b
    out = cluster_ci(diff, clusters, resamples, confidence, seed)
    assert out is not None
    inverse = _cluster_index(clusters)
    means = np.bincount(inverse, weights=diff) / np.bincount(inverse)
    if len(means) < 2 or np.all(means == 0):  # one cluster: negating it is no test
        out["p_value"] = 1.0
        return out
    from scipy.stats import permutation_test

    res = permutation_test(
        (means,),
        np.mean,
        permutation_type="samples",
        vectorized=True,
        n_resamples=resamples,
        alternative="two-sided",
        random_state=np.random.default_rng(seed),
    )
    out["p_value"] = float(res.pvalue)
    return out
