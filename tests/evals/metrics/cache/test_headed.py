"""A chain's steps with a static prefix put first (``Prompts.headed``) are
priced as the same steps encoded with that prefix as their first segment, under
every profile, with the default breakpoints and with a caller's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packproof.evals.metrics.cache.files import load_profiles
from packproof.evals.metrics.cache.model import Prompts, Step, price_prompts

PROFILES = load_profiles()


@st.composite
def chains(draw: st.DrawFn) -> tuple[list[Step], list[list[int]]]:
    steps, marks, t = [], [], 0.0
    for _ in range(draw(st.integers(1, 12))):
        n = draw(st.integers(1, 8))
        ids = draw(st.lists(st.sampled_from("abcdefghij"), min_size=n, max_size=n, unique=True))
        t += draw(st.sampled_from([0.0, 30.0, 400.0]))
        tokens = draw(st.lists(st.integers(0, 3000), min_size=n, max_size=n))
        steps.append(Step(t, list(zip(ids, tokens, strict=True)), probe=draw(st.booleans())))
        marks.append(draw(st.lists(st.integers(1, n + 1), max_size=3)))
    return steps, marks


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
    placed = [sorted({1, *m}) for m in marks]  # as a placement puts one after the prefix
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
