"""A chain encoded once and priced under several placements of the caller's
breakpoints costs what each placement encoded on its own costs."""

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
        marks.append(draw(st.lists(st.integers(1, n), max_size=4)))
    return steps, marks


@settings(max_examples=200, deadline=None)
@given(chains(), st.sampled_from(sorted(PROFILES)))
def test_a_placement_shares_the_chains_encoding(
    chain: tuple[list[Step], list[list[int]]], name: str
) -> None:
    steps, marks = chain
    alone = Prompts.of(s._replace(breakpoints=m) for s, m in zip(steps, marks, strict=True))
    shared = Prompts.of(steps).placed(marks)
    profile = PROFILES[name]
    assert price_prompts(shared, profile) == price_prompts(alone, profile)


@pytest.mark.parametrize(
    ("marks", "message"),
    [([[0]], "segment counts from 1 to 2"), ([[3]], "from 1 to 2"), ([[1], [1]], "2 breakpoint")],
)
def test_a_placement_is_checked_as_a_step_is(marks: list[list[int]], message: str) -> None:
    prompts = Prompts.of([Step(0.0, [("a", 10), ("b", 20)])])
    with pytest.raises(ValueError, match=message):
        prompts.placed(marks)
