"""A chain's steps with a static prefix put first (``Prompts.headed``) are
priced as the same steps encoded with that prefix as their first segment, under
every profile, with the default breakpoints and with a caller's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packproof.evals.metrics.cache.files import load_profiles
from packproof.evals.metrics.cache.model import Prompts, Step, price_prompts
from tests.evals.metrics.cache.test_prompts import chains

PROFILES = load_profiles()


@settings(max_examples=200, deadline=None)
@given(chains(), st.sampled_from([0, 1, 700, 2000, 5000]), st.sampled_from(sorted(PROFILES)))
def test_a_static_prefix_put_first_prices_as_one_encoded_with_the_steps(
    chain: tuple[list[Step], list[list[int]]], tokens: int, name: str
) -> None:
    steps, marks = chain
    with_head = [
        s._replace(segments=[("S", tokens), *s.segments], static_segments=1) for s in steps
    ]
    encoded, headed = Prompts.of(with_head), Prompts.of(steps).headed(tokens)
    profile = PROFILES[name]
    assert price_prompts(headed, profile) == price_prompts(encoded, profile)
    assert list(headed.known) == list(encoded.known)
    # as a placement puts one after the prefix (the chain's marks shifted past it)
    placed = [sorted({1, *(b + 1 for b in m[:2])}) for m in marks]
    assert price_prompts(headed.placed(placed), profile) == price_prompts(
        encoded.placed(placed), profile
    )


def test_the_head_is_a_segment_no_step_has() -> None:
    # a step's own segment named as the head would be stays itself
    steps = [Step(0.0, [("<static prefix>", 5)]), Step(10.0, [("<static prefix>", 5), ("b", 7)])]
    headed = Prompts.of(steps).headed(100)
    assert [c[:2] != c[2:4] for c in headed.codes] == [True, True]
    assert list(headed.cum) == [0, 100, 105, 0, 100, 105, 112]
    with pytest.raises(ValueError, match="2\\*\\*63"):
        Prompts.of([Step(0.0, [("a", 2**62)])]).headed(2**62)
