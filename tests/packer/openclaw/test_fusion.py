"""Reciprocal rank fusion: sums in lane order, ties by natural id order, the cut."""

from __future__ import annotations

import pytest

from packproof.packer.openclaw.fusion import candidate_limit, natural_key, rrf_fuse


@pytest.mark.parametrize(("limit", "expected"), [(1, 9), (4, 12), (5, 15), (12, 36)])
def test_candidate_limit_is_the_larger_of_three_times_and_eight_more(
    limit: int, expected: int
) -> None:
    assert candidate_limit(limit) == expected


def test_an_id_sums_one_over_sixty_plus_rank_over_the_lanes() -> None:
    fused = dict(rrf_fuse([["a", "b"], ["b"]], 10))
    assert fused == {"a": 1 / 61, "b": 1 / 62 + 1 / 61}
    assert list(dict(rrf_fuse([["a", "b"], ["b"]], 10))) == ["b", "a"]


def test_sums_are_taken_lane_by_lane_so_equal_fractions_can_differ_as_floats() -> None:
    """obs:20 sits at ranks (0, 1, 6) and obs:10 at (6, 0, 1): the same three
    fractions, but summed in lane order the floats differ in the last bit
    (0.0474478480153437 against 0.04744784801534369), so obs:20 ranks first
    although a tie would go to obs:10."""
    filler = [f"f:{k}" for k in range(5)]
    fts = ["obs:20", *filler, "obs:10"]
    vector = ["obs:10", "obs:20"]
    vector_en = ["g:0", "obs:10", "g:1", "g:2", "g:3", "g:4", "obs:20"]
    fused = rrf_fuse([fts, vector, vector_en], 20)
    scores = dict(fused)
    assert scores["obs:20"] == (1 / 61 + 1 / 62) + 1 / 67 == 0.0474478480153437
    assert scores["obs:10"] == (1 / 67 + 1 / 61) + 1 / 62 == 0.04744784801534369
    ranked = [ref for ref, _ in fused]
    assert ranked.index("obs:20") < ranked.index("obs:10")


def test_ties_go_to_the_smaller_id_in_natural_order() -> None:
    fused = rrf_fuse([["obs:10"], ["obs:9"], ["obs:100"]], 10)
    assert [ref for ref, _ in fused] == ["obs:9", "obs:10", "obs:100"]


def test_natural_order_compares_digit_runs_as_numbers() -> None:
    refs = ["obs:10", "obs:9", "b", "a2", "a10", "obs:09x"]
    assert sorted(refs, key=natural_key) == ["a2", "a10", "b", "obs:9", "obs:09x", "obs:10"]


def test_the_fused_list_is_cut_to_the_limit() -> None:
    fused = rrf_fuse([["a", "b", "c", "d"]], 2)
    assert [ref for ref, _ in fused] == ["a", "b"]


def test_no_lanes_fuse_to_nothing() -> None:
    assert rrf_fuse([[], []], 5) == []
