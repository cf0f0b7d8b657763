"""A chain priced under many profiles at once (profiles that differ only in
prices share the pricing) gives each profile the figures and the cost bits its
own pricing gives."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from packproof.evals.metrics.cache.columns import mechanics, price_columns
from packproof.evals.metrics.cache.files import load_profiles
from packproof.evals.metrics.cache.model import Profile, Prompts, Step, price_prompts

SHIPPED = load_profiles()
# the shipped profiles, and price variants of two of them: a long-context rule
# that applies (a low threshold), other read and write prices
PROFILES: dict[str, Profile] = {
    **SHIPPED,
    "anthropic-long": replace(
        SHIPPED["anthropic"], long_context_tokens=2000, long_context_factor=1.7, read=0.3
    ),
    "openai-long": replace(
        SHIPPED["openai"], long_context_tokens=2500, long_context_factor=2.0, write=1.1
    ),
}


@st.composite
def chains(draw: st.DrawFn) -> Prompts:
    steps, t = [], 0.0
    for _ in range(draw(st.integers(1, 12))):
        n = draw(st.integers(1, 8))
        ids = draw(st.lists(st.sampled_from("abcdefghij"), min_size=n, max_size=n, unique=True))
        t += draw(st.sampled_from([0.0, 30.0, 400.0]))
        tokens = draw(st.lists(st.integers(0, 3000), min_size=n, max_size=n))
        marks = draw(st.none() | st.lists(st.integers(1, n), min_size=1, max_size=3))
        static = draw(st.integers(0, n))
        steps.append(
            Step(t, list(zip(ids, tokens, strict=True)), static, draw(st.booleans()), marks)
        )
    return Prompts.of(steps)


@settings(max_examples=150, deadline=None)
@given(chains())
def test_every_profile_gets_what_its_own_pricing_gives(prompts: Prompts) -> None:
    priced = price_columns(prompts, PROFILES)
    assert list(priced) == list(PROFILES)
    for name, profile in PROFILES.items():
        alone = price_prompts(prompts, profile)
        columns = priced[name]
        assert columns.cached == [c.cached for c in alone]
        assert columns.written == [c.written for c in alone]
        assert columns.uncached == [c.uncached for c in alone]
        assert columns.cost.tolist() == [c.cost for c in alone]  # the same bits


def test_only_prices_and_provenance_are_left_out_of_the_mechanics() -> None:
    base = SHIPPED["openai"]
    assert mechanics(SHIPPED["openai-gpt4o"]) == mechanics(base)  # another read price
    assert mechanics(replace(base, write=2.0, source="x", date="y")) == mechanics(base)
    for changed in (
        replace(base, ttl_s=3600),
        replace(base, min_tokens=2048),
        replace(base, granularity=64),
        replace(base, miss_rate=0.1),
        replace(base, miss_seed=3),
        replace(base, mode="breakpoints"),
    ):
        assert mechanics(changed) != mechanics(base)
    anthropic = SHIPPED["anthropic"]
    for changed in (
        replace(anthropic, lookback=5),
        replace(anthropic, refresh_on_hit=False),
        replace(anthropic, static_breakpoint=False),
        replace(anthropic, max_breakpoints=2),
    ):
        assert mechanics(changed) != mechanics(anthropic)
