"""The percentile bootstrap of scipy.stats.bootstrap, reproduced bit for bit and
faster for the thousands of intervals of a report.

``scipy.stats.bootstrap(..., method="percentile", random_state=np.random.
default_rng(seed))`` (scipy 1.17, one batch when ``batch`` is None) does, for a
sample of n observations:

1. draws the resample indices ``default_rng(seed).integers(0, n, (resamples, n))``;
2. computes the statistic of each resample, a row of ``sample[indices]``
   (``np.mean(..., axis=-1)`` for a mean; for paired samples the same indices
   select from each sample);
3. takes the ``alpha`` and ``1 - alpha`` quantiles of those statistics
   (``alpha = (1 - confidence) / 2``) with ``scipy.stats.quantile``'s default
   ``linear`` method: sort, then interpolate between two order statistics;
   NaN statistics make the interval NaN, and scipy warns.

The indices depend only on (n, resamples, seed), so :func:`indices` draws them
once per triple and keeps them in a cache bounded in bytes (a report asks for a
few sample sizes thousands of times); :func:`resampled_means` applies step 2 a
block of rows at a time, so the resamples stay in the CPU cache (each row is
reduced on its own, so the blocks change no bit); :func:`percentile_interval` is
step 3 with the same numpy operations in the same order. scipy stays the
reference: stats.py falls back to it for anything but finite float64 samples,
and tests/evals/report/test_fast_bootstrap.py compares the two bit for bit.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["indices", "percentile_interval", "resampled", "resampled_means"]

_CACHE_BYTES = 256 << 20  # index arrays kept, least recently used dropped first
_BLOCK = 1 << 18  # elements of one block of resamples (2 MB of float64)
_cache: OrderedDict[tuple[int, int, int], np.ndarray] = OrderedDict()
_SHARED_BLOCKS = 4  # a bootstrap of this many blocks or more is shared with a thread
_pool: list[ThreadPoolExecutor | None] = []  # the helper thread, made on first use
if hasattr(os, "register_at_fork"):  # a forked child has no such thread: it makes its own
    os.register_at_fork(after_in_child=_pool.clear)
_local = threading.local()  # per thread: the scratch buffers of resampled()


def indices(n: int, resamples: int, seed: int) -> np.ndarray:
    """The (resamples, n) indices scipy.stats.bootstrap draws for a sample of n
    observations from ``np.random.default_rng(seed)`` (read-only)."""
    key = (n, resamples, seed)
    found = _cache.get(key)
    if found is not None:
        _cache.move_to_end(key)
        return found
    drawn: np.ndarray = np.random.default_rng(seed).integers(0, n, (resamples, n))
    drawn.flags.writeable = False
    if drawn.nbytes <= _CACHE_BYTES:
        _cache[key] = drawn
        while sum(a.nbytes for a in _cache.values()) > _CACHE_BYTES:
            _cache.popitem(last=False)
    return drawn


def _scratch(i: int, size: int) -> np.ndarray:
    """This thread's ``i``-th scratch buffer of at least ``size`` float64s: the
    resamples are gathered into memory already mapped, not a new array per block."""
    buffers: list[np.ndarray] = _local.__dict__.setdefault("buffers", [])
    while len(buffers) <= i:
        buffers.append(np.empty(0))
    if len(buffers[i]) < size:
        buffers[i] = np.empty(max(size, _BLOCK), dtype=np.float64)
    return buffers[i]


def _helper() -> ThreadPoolExecutor | None:
    """A thread for half of a long bootstrap's blocks (numpy gathers and sums
    without the GIL), when this process may run on more than one CPU."""
    if not _pool:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        _pool.append(
            ThreadPoolExecutor(1, thread_name_prefix="packproof-bootstrap")
            if (cpus or 1) > 1
            else None
        )
    return _pool[0]


def resampled(
    statistic: Callable[..., np.ndarray], samples: tuple[np.ndarray, ...], resamples: int, seed: int
) -> np.ndarray:
    """``statistic(*(s[rows] for s in samples), axis=-1)`` over every resample of the
    (paired) ``samples``, a block of resamples at a time: the bootstrap distribution.
    Each block is reduced on its own, so a long one's blocks are shared with a
    second thread (:func:`_helper`) without changing a bit."""
    idx = indices(len(samples[0]), resamples, seed)
    out = np.empty(resamples, dtype=np.float64)
    rows = max(1, _BLOCK // max(1, idx.shape[1]))
    floats = all(s.dtype == np.float64 for s in samples)

    def run(starts: range) -> None:
        for start in starts:
            block = idx[start : start + rows]
            if len(samples) == 1:  # one sample: indexing gathers faster than take
                taken = [samples[0][block]]
            elif floats:  # the indices are in range: "clip" gathers unbuffered, into the scratch
                size = block.size
                taken = [
                    s.take(block, out=_scratch(i, size)[:size].reshape(block.shape), mode="clip")
                    for i, s in enumerate(samples)
                ]
            else:
                taken = [s.take(block) for s in samples]
            out[start : start + rows] = statistic(*taken, axis=-1)

    starts = range(0, resamples, rows)
    helper = _helper() if len(starts) >= _SHARED_BLOCKS else None
    if helper is None:
        run(starts)
    else:
        half = len(starts) // 2
        done = helper.submit(run, starts[:half])
        run(starts[half:])
        done.result()
    return out


def resampled_means(values: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """The bootstrap distribution of the mean of ``values`` (1-D float64)."""
    return resampled(np.mean, (values,), resamples, seed)


def percentile_interval(theta: np.ndarray, confidence: float) -> tuple[float, float]:
    """The two-sided percentile interval of the bootstrap distribution ``theta``
    (1-D float64) at ``confidence``, as scipy.stats.bootstrap computes it."""
    alpha = np.asarray((1 - float(confidence)) / 2, dtype=np.float64)
    p = np.stack((alpha, 1 - alpha), axis=-1)
    y = np.sort(theta, axis=-1)
    if np.isnan(y).any():  # scipy.stats.quantile's nan_policy="propagate"
        y = np.full_like(y, np.nan)
    n = np.asarray(y.shape[-1], dtype=np.float64)
    jg = p * n + (1 - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = jg % 1
    g[j < 0] = 0
    j = np.clip(j, 0.0, n - 1)
    jp1 = np.clip(jp1, 0.0, n - 1)
    ci = (1 - g) * y[j.astype(np.int64)] + g * y[jp1.astype(np.int64)]
    if np.isnan(ci).any():
        from scipy.stats import DegenerateDataWarning

        message = (
            "The BCa confidence interval cannot be calculated. "
            "This problem is known to occur when the distribution "
            "is degenerate or the statistic is np.min."
        )
        warnings.warn(DegenerateDataWarning(message), stacklevel=3)
    return float(ci[0]), float(ci[1])
