"""A long bootstrap shared with a helper thread, gathered into scratch buffers,
gives the bits of one thread's plain gather; and a forked child, which has no
helper thread, makes its own instead of waiting on its parent's."""

from __future__ import annotations

import os

import numpy as np
import pytest

from packproof.evals.report import bootstrap


def plain(values: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    idx = bootstrap.indices(len(values), resamples, seed)
    out: np.ndarray = np.mean(values[idx], axis=-1)
    return out


@pytest.mark.parametrize("n", [1, 7, 300, 5000])
def test_shared_and_scratch_blocks_give_the_same_bits(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = np.random.default_rng(n).random(n) * 1000
    expected = plain(values, 2000, 3)
    shared = bootstrap.resampled_means(values, 2000, 3)
    monkeypatch.setattr(bootstrap, "_SHARED_BLOCKS", 10**9)  # one thread
    alone = bootstrap.resampled_means(values, 2000, 3)
    assert shared.tobytes() == alone.tobytes() == expected.tobytes()


def test_paired_samples_are_gathered_into_their_own_scratch() -> None:
    rng = np.random.default_rng(1)
    sums, sizes = rng.random(4000), rng.integers(1, 9, 4000).astype(np.float64)

    def ratio(s: np.ndarray, n: np.ndarray, axis: int = -1) -> np.ndarray:
        out: np.ndarray = s.sum(axis=axis) / n.sum(axis=axis)
        return out

    idx = bootstrap.indices(4000, 500, 0)
    expected = ratio(sums[idx], sizes[idx])
    assert bootstrap.resampled(ratio, (sums, sizes), 500, 0).tobytes() == expected.tobytes()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_makes_its_own_helper() -> None:
    values = np.random.default_rng(2).random(3000)
    expected = bootstrap.resampled_means(values, 2000, 0)  # the helper made here
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        same = bootstrap.resampled_means(values, 2000, 0).tobytes() == expected.tobytes()
        os._exit(0 if same else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
