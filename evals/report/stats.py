"""The report's statistics: a mean with its percentile-bootstrap confidence
interval, and the paired difference of two strategies with its Wilcoxon
signed-rank p-value.

Pure functions of numpy arrays (scipy is imported on first use); the report
model (model.py) and the tuner (evals/tune.py) both use them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["mean_ci", "paired"]


def mean_ci(
    values: np.ndarray, resamples: int, confidence: float, seed: int
) -> dict[str, Any] | None:
    """Mean with a percentile-bootstrap confidence interval (scipy.stats)."""
    if not len(values):
        return None
    mean = float(values.mean())
    if len(values) < 2 or float(values.min()) == float(values.max()):
        return {"mean": mean, "low": mean, "high": mean, "n": len(values)}
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
