"""A cell's cluster index (its cluster's rank among the sorted distinct ones)
is what ``np.unique(..., return_inverse=True)`` gives, which the cluster
bootstrap's sums are ordered by."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from packproof.evals.report.stats import _cluster_index, clustered

names = st.text(st.sampled_from("ab/-_0Zé"), max_size=6)


@given(st.lists(names, max_size=60))
def test_the_index_is_numpys_inverse(labels: list[str]) -> None:
    clusters = np.array(labels, dtype=object)
    _, inverse = np.unique(clusters, return_inverse=True)
    assert _cluster_index(clusters).tolist() == inverse.tolist()
    assert clustered(clusters) == (len(set(labels)) < len(labels))
