"""The prompt-cache model (REFERENCE.md section 5): hand-computed cases pin every
rule, a direct transcription of the rules checks the fast implementation (whole
or a batch at a time), and ``packproof cache simulate`` streams its lines or
fails in one line with exit 2."""

from __future__ import annotations

import dataclasses
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packproof.cli import main
from packproof.evals.bench import cache as bench
from packproof.evals.bench import streaming
from packproof.evals.metrics.cache.files import (
    BATCH_LINES,
    SHIPPED_PROFILES,
    load_profiles,
    profile,
)
from packproof.evals.metrics.cache.model import (
    Pricer,
    Profile,
    Prompts,
    Step,
    StepCost,
    Totals,
    _lost,
    chain_totals,
    price_chain,
    price_prompts,
)
from packproof.evals.metrics.cache.totals import RunningTotals
from packproof.packer.errors import InputError

PROFILES = load_profiles()
ANTHROPIC, OPENAI = PROFILES["anthropic"], PROFILES["openai"]


def costs(steps: list[Step], prof: Profile) -> list[tuple[int, int, int]]:
    """(cached, written, uncached) per step."""
    return [(c.cached, c.written, c.uncached) for c in price_chain(steps, prof)]


def appended(count: int, tokens: int = 600, gap: float = 10.0) -> list[Step]:
    """``count`` steps, each appending one ``tokens``-token item."""
    items = [(f"i{k}", tokens) for k in range(count)]
    return [Step(k * gap, items[: k + 1]) for k in range(count)]


# ---------------------------------------------------------------- REFERENCE's hand cases


def test_anthropic_600_token_items_uncached_then_written_then_read() -> None:
    # step 0 (600) is below the 1,024 minimum; step 1 (1,200) writes all of it;
    # step 2 (1,800) reads step 1's entry, 20 segments back at most, and writes 600
    assert costs(appended(3), ANTHROPIC) == [(0, 0, 600), (0, 1200, 0), (1200, 600, 0)]


def test_openai_reads_in_128_token_steps() -> None:
    # step 2's stored prefix of 1,200 is read as 1,152 (9 x 128); N - H = 648 is written
    assert costs(appended(3), OPENAI) == [(0, 0, 600), (0, 1200, 0), (1152, 648, 0)]


def test_the_write_premium_and_the_read_discount_are_in_the_cost() -> None:
    step_costs = [c.cost for c in price_chain(appended(3), ANTHROPIC)]
    assert step_costs == pytest.approx([600, 1.25 * 1200, 0.1 * 1200 + 1.25 * 600])
    openai = [c.cost for c in price_chain(appended(3), OPENAI)]  # no write premium
    assert openai == pytest.approx([600, 1200, 0.25 * 1152 + 648])


# ---------------------------------------------------------------- the rules, one by one


def test_a_prompt_below_the_minimum_is_neither_written_nor_read() -> None:
    short = [("a", 1023)]
    assert costs([Step(0, short), Step(1, short)], ANTHROPIC) == [(0, 0, 1023)] * 2
    assert costs([Step(0, short), Step(1, short)], OPENAI) == [(0, 0, 1023)] * 2
    exact = [("a", 1024)]
    assert costs([Step(0, exact), Step(1, exact)], ANTHROPIC) == [(0, 1024, 0), (1024, 0, 0)]


def second_step(first: int, added: int, prof: Profile) -> tuple[int, int, int]:
    """(cached, written, uncached) of [a, b] after [a], for a of ``first`` tokens."""
    steps = [Step(0, [("a", first)]), Step(1, [("a", first), ("b", added)])]
    return costs(steps, prof)[1]


def test_prefix_mode_rounds_down_then_applies_the_minimum() -> None:
    prof = dataclasses.replace(OPENAI, min_tokens=1000, granularity=128)
    # 1,100 rounds to 1,024 >= 1,000: read; 1,010 rounds to 896 < 1,000: nothing read
    assert second_step(1100, 50, prof) == (1024, 126, 0)
    assert second_step(1010, 50, prof) == (0, 1060, 0)
    # DeepSeek's 64-token units: 1,000 is read as 960
    assert second_step(1000, 10, PROFILES["deepseek"]) == (960, 50, 0)


@pytest.mark.parametrize("name", ["anthropic", "openai"])
def test_an_entry_written_at_t_serves_t_plus_299_and_not_t_plus_300(name: str) -> None:
    prompt = [("a", 1280)]
    prof = PROFILES[name]
    assert costs([Step(0, prompt), Step(299, prompt)], prof)[1] == (1280, 0, 0)
    assert costs([Step(0, prompt), Step(300, prompt)], prof)[1] == (0, 1280, 0)


def test_a_hit_restarts_the_lifetime_of_the_entry_it_used() -> None:
    base, x, y = ("p", 1200), ("x", 100), ("y", 100)
    # t=200 reads [p] (refreshed to 500) and writes [p, x]; t=450 reads [p] again,
    # which without the refresh expired at 300
    steps = [Step(0, [base]), Step(200, [base, x]), Step(450, [base, y])]
    assert costs(steps, ANTHROPIC)[2] == (1200, 100, 0)
    no_refresh = dataclasses.replace(ANTHROPIC, refresh_on_hit=False)
    assert costs(steps, no_refresh)[2] == (0, 1300, 0)


@pytest.mark.parametrize(("extra", "cached"), [(20, 1200), (21, 0)])
def test_a_hit_is_looked_for_at_most_lookback_segments_before_a_breakpoint(
    extra: int, cached: int
) -> None:
    base = [("p", 1200)]
    tail = [(f"s{k}", 1) for k in range(extra)]
    # [p] is k = 1; the end breakpoint is 1 + extra: found when extra <= 20
    expected = (cached, 1200 + extra - cached, 0)
    assert costs([Step(0, base), Step(1, base + tail)], ANTHROPIC)[1] == expected


def test_the_static_breakpoint_keeps_the_static_prefix_when_the_tail_changes() -> None:
    steps = [Step(0, [("sys", 2000), ("a", 100)], 1), Step(5, [("sys", 2000), ("b", 100)], 1)]
    assert costs(steps, ANTHROPIC) == [(0, 2100, 0), (2000, 100, 0)]
    # without it only [sys, a] was written: [sys] is no entry
    no_static = dataclasses.replace(ANTHROPIC, static_breakpoint=False)
    assert costs(steps, no_static) == [(0, 2100, 0), (0, 2100, 0)]


def test_a_repeated_prompt_is_read_whole_and_writes_nothing() -> None:
    prompt = [("a", 1500), ("b", 500)]
    assert costs([Step(0, prompt), Step(1, prompt)], ANTHROPIC)[1] == (2000, 0, 0)
    assert costs([Step(0, prompt), Step(1, prompt)], OPENAI)[1] == (1920, 80, 0)


def test_prefix_mode_reads_the_longest_prefix_of_any_live_prompt() -> None:
    a, b, c, x = ("a", 512), ("b", 512), ("c", 512), ("x", 512)
    steps = [Step(0, [a, b, c]), Step(1, [a, x]), Step(2, [a, b, c, ("d", 10)])]
    assert costs(steps, OPENAI)[2] == (1536, 10, 0)  # [a, b, c], from step 0


def test_each_chain_and_the_first_step_start_cold() -> None:
    prompt = [("a", 2000)]
    assert price_chain([Step(0, prompt)], ANTHROPIC)[0] == StepCost(0, 2000, 0, 2500.0, False)


def test_a_prefix_break_is_the_previous_prompt_not_being_a_prefix() -> None:
    a, b, c = ("a", 1), ("b", 1), ("c", 1)
    prompts = [[a], [a, b], [a, b], [b, c], [b], [b, c]]
    priced = price_chain([Step(k, p) for k, p in enumerate(prompts)], ANTHROPIC)
    # append: no; same: no; drop the oldest: yes; shrink: yes; grow again: no
    assert [c.prefix_break for c in priced] == [False, False, False, True, True, False]
    totals = chain_totals(priced)
    assert (totals.prefix_breaks, totals.first_break) == (2, 3)


def test_chain_totals_sum_the_steps() -> None:
    totals = chain_totals(price_chain(appended(3), ANTHROPIC))
    assert totals.to_json() == {
        "steps": 3,
        "input_tokens": 3600,
        "cached": 1200,
        "written": 1800,
        "uncached": 600,
        "cost": pytest.approx(600 + 1500 + 870),
        "cache_hit_rate": pytest.approx(1200 / 3600),
        "relative_cost": pytest.approx(2970 / 3600),
        "prefix_breaks": 0,
        "first_break": None,
        "probes": {
            "steps": 0,
            "input_tokens": 0,
            "cached": 0,
            "written": 0,
            "uncached": 0,
            "cost": 0.0,
            "cache_hit_rate": None,
            "relative_cost": None,
        },
    }
    empty = chain_totals(price_chain([Step(0, [("a", 0)])], ANTHROPIC))
    assert (empty.cache_hit_rate, empty.relative_cost) == (None, None)


def test_steps_out_of_time_order_or_without_segments_are_refused() -> None:
    with pytest.raises(ValueError, match="comes after"):
        price_chain([Step(5, [("a", 1)]), Step(4, [("a", 1)])], ANTHROPIC)
    with pytest.raises(ValueError, match="needs segments"):
        price_chain([Step(0, [])], ANTHROPIC)


def test_the_minimum_applies_to_each_breakpoint_apart() -> None:
    # the 500-token static prefix is below 1,024: only [sys, a] (1,100) is written
    steps = [Step(0, [("sys", 500), ("a", 600)], 1), Step(5, [("sys", 500), ("b", 600)], 1)]
    assert costs(steps, ANTHROPIC) == [(0, 1100, 0), (0, 1100, 0)]


# ---------------------------------------------------------------- probes


def with_probe(probe: list[tuple[str, int]], t: float = 25) -> list[Step]:
    """appended(4) with a probe between steps 2 and 3: items 0-2 and ``probe``."""
    steps = appended(4)
    return [*steps[:3], Step(t, [*steps[2].segments, *probe], 0, True), steps[3]]


def test_a_probe_reads_the_state_reached_and_the_next_step_ignores_it() -> None:
    question = [("q", 50)]
    # the probe [i0, i1, i2, q] reads step 2's 1,800 and writes (for itself) 50;
    # step 3 reads 1,800 and writes 600 as if the probe had not happened
    priced = price_chain(with_probe(question), ANTHROPIC)
    assert [(c.cached, c.written, c.uncached, c.probe) for c in priced] == [
        (0, 0, 600, False),
        (0, 1200, 0, False),
        (1200, 600, 0, False),
        (1800, 50, 0, True),
        (1800, 600, 0, False),
    ]
    assert priced[3].cost == pytest.approx(0.1 * 1800 + 1.25 * 50)
    assert [c for c in priced if not c.probe] == price_chain(appended(4), ANTHROPIC)


def test_a_probe_writes_nothing_a_second_probe_could_read() -> None:
    # prefix mode: a written [i0, i1, i2, q] (2,000) would be read as 1,920
    question = [("q", 200)]
    steps = with_probe(question)
    steps.insert(4, steps[3]._replace(t=26))
    priced = price_chain(steps, OPENAI)
    assert [(c.cached, c.written) for c in priced[3:5]] == [(1792, 208), (1792, 208)]


def test_a_probe_restarts_no_lifetime() -> None:
    prompt = [("p", 1200)]
    probed = [Step(0, prompt), Step(200, prompt, 0, True), Step(350, prompt)]
    assert costs(probed, ANTHROPIC) == [(0, 1200, 0), (1200, 0, 0), (0, 1200, 0)]
    # a conversation step at 200 restarts it (expiry 500)
    asked = [step._replace(probe=False) for step in probed]
    assert costs(asked, ANTHROPIC)[2] == (1200, 0, 0)


def test_a_probes_prefix_break_compares_it_with_the_last_conversation_step() -> None:
    a, b, c = ("a", 1), ("b", 1), ("c", 1)
    steps = [Step(0, [a, b]), Step(1, [c], 0, True), Step(2, [a, b, c])]
    assert [x.prefix_break for x in price_chain(steps, ANTHROPIC)] == [False, True, False]
    with pytest.raises(ValueError, match="comes after"):  # probes keep time order too
        price_chain([Step(5, [a]), Step(4, [a], 0, True)], ANTHROPIC)


def test_chain_totals_sum_the_probes_apart() -> None:
    totals = chain_totals(price_chain(with_probe([("q", 50)]), ANTHROPIC))
    assert (totals.steps, totals.input_tokens, totals.cached, totals.written) == (
        4,
        6000,
        3000,
        2400,
    )
    assert totals.probes == Totals(
        1, 1850, 1800, 50, 0, pytest.approx(242.5), 1800 / 1850, pytest.approx(242.5 / 1850)
    )


# ---------------------------------------------------------------- against the rules as written


def reference(steps: list[Step], prof: Profile) -> list[tuple[int, int, int, bool]]:
    """REFERENCE.md's rules, transcribed with no care for speed; a probe is
    priced as the next step on a copy of the cache, which is then dropped."""
    entries: dict[tuple[str, ...], float] = {}
    out, prev = [], None
    number = 1  # the next conversation step's (a probe draws as it would)
    for t, segments, static, probe, marks in steps:
        ids = [s[0] for s in segments]
        cum = [0]
        for _, tokens in segments:
            cum.append(cum[-1] + tokens)
        n, total = len(ids), cum[-1]
        entries = {k: e for k, e in entries.items() if e > t}
        state = dict(entries) if probe else entries  # a probe's writes are discarded
        if prof.mode == "breakpoints":
            points = [n] + ([static] if prof.static_breakpoint and 0 < static < n else [])
            if marks is not None:
                points = list(marks)
            window = {k for b in points for k in range(max(1, b - prof.lookback), b + 1)}
            best = max((k for k in window if tuple(ids[:k]) in state), default=0)
            if best and prof.miss_rate and _lost(prof, number):
                best = 0
            hit = cum[best]
            if best and prof.refresh_on_hit:
                state[tuple(ids[:best])] = t + prof.ttl_s
            written_at = [b for b in points if cum[b] >= prof.min_tokens]
            for b in written_at:
                state[tuple(ids[:b])] = t + prof.ttl_s
            written = max(cum[b] for b in written_at) - hit if written_at else 0
        else:
            best = max((k for k in range(1, n + 1) if tuple(ids[:k]) in state), default=0)
            hit = cum[best] // prof.granularity * prof.granularity
            hit = 0 if hit < prof.min_tokens else hit
            if hit and prof.miss_rate and _lost(prof, number):
                hit = 0
            for k in range(1, n + 1):
                state[tuple(ids[:k])] = t + prof.ttl_s
            written = total - hit if total >= prof.min_tokens else 0
        out.append(
            (hit, written, total - hit - written, prev is not None and ids[: len(prev)] != prev)
        )
        if not probe:
            prev = ids
            number += 1
    return out


TOKENS = {s: 1 + 7 * k for k, s in enumerate("abcdefg")}  # an id has one size
profiles = st.builds(
    Profile,
    mode=st.sampled_from(["breakpoints", "prefix"]),
    read=st.just(0.1),
    write=st.just(1.25),
    min_tokens=st.integers(0, 40),
    granularity=st.integers(1, 8),
    ttl_s=st.sampled_from([0, 1, 3, 10]),
    refresh_on_hit=st.booleans(),
    lookback=st.integers(0, 4),
    static_breakpoint=st.booleans(),
    miss_rate=st.sampled_from([0.0, 0.0, 0.3]),
    miss_seed=st.integers(0, 3),
)
prompts = st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=9)
chains = st.lists(
    st.tuples(
        st.sampled_from([0, 0, 1, 2, 3, 9, 10]),
        prompts,
        st.integers(0, 9),
        st.sampled_from([False, False, False, True]),
        st.one_of(st.none(), st.lists(st.integers(1, 9), max_size=4)),
    ),
    max_size=25,
)


def build(chain: list[Any]) -> list[Step]:
    steps, t = [], 0
    for gap, ids, static, probe, marks in chain:
        t += gap
        marks = None if marks is None else sorted({min(b, len(ids)) for b in marks})
        steps.append(Step(t, [(i, TOKENS[i]) for i in ids], min(static, len(ids)), probe, marks))
    return steps


def figures(steps: list[Step], prof: Profile) -> list[tuple[int, int, int, bool]]:
    return [(c.cached, c.written, c.uncached, c.prefix_break) for c in price_chain(steps, prof)]


@settings(max_examples=600, deadline=None)
@given(profiles, chains)
def test_the_fast_model_equals_the_rules_as_written(prof: Profile, chain: list[Any]) -> None:
    steps = build(chain)
    assert figures(steps, prof) == reference(steps, prof)


@settings(max_examples=300, deadline=None)
@given(profiles, chains)
def test_a_probe_leaves_the_conversation_as_if_it_were_not_there(
    prof: Profile, chain: list[Any]
) -> None:
    steps = build(chain)
    priced = price_chain(steps, prof)
    conversation = [s for s in steps if not s.probe]
    assert [c for c in priced if not c.probe] == price_chain(conversation, prof)
    assert [c.probe for c in priced] == [s.probe for s in steps]
    assert chain_totals(priced).to_json() == {
        **chain_totals(price_chain(conversation, prof)).to_json(),
        "probes": Totals.of([c for c in priced if c.probe]).to_json(),
    }


def long_chain(seed: int) -> list[Step]:
    """Eighty steps of a conversation that appends, drops its head, replaces or
    re-adds an item, shrinks, or repeats, with probes and gaps around the TTLs."""
    rng = random.Random(seed)
    size = [rng.choice([0, 10, 60, 300, 900]) for _ in range(400)]
    items: list[int] = []
    steps, t, new = [], 0.0, 0
    for _ in range(80):
        op = rng.random()
        if op < 0.45 or not items:
            items += range(new, new + rng.randint(1, 3))
            new = items[-1] + 1
        elif op < 0.55:
            del items[: rng.randint(1, 3)]
        elif op < 0.7:
            items[rng.randrange(len(items))] = rng.randrange(new + 1)  # maybe an old one
            new += 1
        elif op < 0.8:
            del items[rng.randrange(len(items)) :]
        t += rng.choice([0, 1, 30, 30, 299, 300, 301, 3600])
        segments = [("sys", 1500), *((f"s{k}", size[k % 400]) for k in dict.fromkeys(items))]
        marks = None  # a caller's breakpoints at a third of the steps
        if rng.random() < 0.33:
            marks = sorted({rng.randint(1, len(segments)) for _ in range(rng.randint(1, 4))})
        steps.append(Step(t, segments, rng.choice([0, 1, 1, 1]), rng.random() < 0.15, marks))
    return steps


VARIANTS = {
    **PROFILES,
    "lookback-3": dataclasses.replace(ANTHROPIC, lookback=3, ttl_s=40),
    "no-refresh": dataclasses.replace(ANTHROPIC, refresh_on_hit=False, ttl_s=40),
    "prefix-ttl-40": dataclasses.replace(OPENAI, ttl_s=40, granularity=1, min_tokens=0),
    "pessimistic": dataclasses.replace(ANTHROPIC, miss_rate=0.2, miss_seed=7),
    "pessimistic-prefix": dataclasses.replace(OPENAI, miss_rate=0.2),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_long_chains_under_every_profile_equal_the_rules_as_written(name: str) -> None:
    for seed in range(12):
        steps = long_chain(seed)
        assert figures(steps, VARIANTS[name]) == reference(steps, VARIANTS[name]), seed


def test_one_encoding_is_priced_under_every_profile() -> None:
    steps = long_chain(0)
    prompts = Prompts.of(steps)
    for prof in VARIANTS.values():
        assert price_prompts(prompts, prof) == price_chain(steps, prof)


def batched(steps: list[Step], prof: Profile, sizes: list[int]) -> list[StepCost]:
    """``steps`` priced as ``cache simulate`` prices them: a batch at a time (of
    the ``sizes`` in turn, then the rest), the batch's rows cleared once priced."""
    pricer, prompts, out = Pricer(prof), Prompts(), []
    cuts, start = iter(sizes), 0
    while start < len(steps):
        end = start + next(cuts, len(steps))
        for t, segments, static, probe, marks in steps[start:end]:
            ids, tokens = [i for i, _ in segments], [n for _, n in segments]
            prompts.add(t, ids, tokens, static, probe, marks)
        out += pricer.price(prompts)
        prompts.clear()
        start = end
    return out


@settings(max_examples=300, deadline=None)
@given(profiles, chains, st.lists(st.integers(1, 5), max_size=10))
def test_a_chain_priced_a_batch_at_a_time_costs_what_it_costs_whole(
    prof: Profile, chain: list[Any], sizes: list[int]
) -> None:
    steps = build(chain)
    assert batched(steps, prof, sizes) == price_chain(steps, prof)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_long_chains_priced_in_batches_equal_the_rules_as_written(name: str) -> None:
    for seed in range(6):
        steps = long_chain(seed)
        got = [
            (c.cached, c.written, c.uncached, c.prefix_break)
            for c in batched(steps, VARIANTS[name], [7] * 20)
        ]
        assert got == reference(steps, VARIANTS[name]), seed


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(0, 1e15, allow_nan=False, allow_infinity=False), max_size=60),
    st.integers(1, 9),
)
def test_totals_summed_in_batches_are_the_exact_sum_rounded_once(
    values: list[float], size: int
) -> None:
    costs = [StepCost(1, 0, 0, v, k % 4 == 1, k % 3 == 0) for k, v in enumerate(values)]
    running = RunningTotals()
    for start in range(0, len(costs), size):
        running.add(costs[start : start + size])
    totals = running.result()
    conversation = [c.cost for c in costs if not c.probe]
    assert totals.cost == math.fsum(conversation)  # the same bits, not approximately
    assert totals.probes.cost == math.fsum(c.cost for c in costs if c.probe)
    breaks = [k for k, c in enumerate(c for c in costs if not c.probe) if c.prefix_break]
    assert (totals.prefix_breaks, totals.first_break) == (len(breaks), (breaks or [None])[0])


# ---------------------------------------------------------------- profiles


def test_the_shipped_profiles_carry_their_figures_source_and_date() -> None:
    assert {"anthropic", "anthropic-4096", "openai", "openai-gpt5", "gemini", "deepseek"} <= set(
        PROFILES
    )
    assert (
        Profile("breakpoints", 0.1, 1.25, 1024, 1, 300, True, 20, True, ANTHROPIC.source, "2026-11")
        == ANTHROPIC
    )
    assert PROFILES["anthropic-4096"].min_tokens == 4096
    assert (OPENAI.mode, OPENAI.read, OPENAI.write, OPENAI.min_tokens, OPENAI.granularity) == (
        "prefix",
        0.25,
        1.0,
        1024,
        128,
    )
    assert PROFILES["openai-gpt5"].read == 0.1
    assert PROFILES["gemini"].mode == "prefix"
    assert (PROFILES["deepseek"].mode, PROFILES["deepseek"].granularity) == ("prefix", 64)
    for prof in PROFILES.values():
        assert prof.source and prof.date == "2026-11"


GOOD = SHIPPED_PROFILES.read_text("utf-8").split("\nanthropic-1h:")[0]


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (("read: 0.1", "read: -0.1"), "/anthropic/read"),
        (("  granularity: 1\n", ""), "/anthropic"),
        (("mode: breakpoints", "mode: implicit"), "/anthropic/mode"),
        (("ttl_s: 300", "ttl_s: .nan"), "/anthropic/ttl_s"),
    ],
    ids=["negative-price", "missing-field", "unknown-mode", "nan"],
)
def test_a_bad_profiles_file_is_one_error_naming_line_and_pointer(
    tmp_path: Path, edit: tuple[str, str], where: str
) -> None:
    path = tmp_path / "profiles.yaml"
    path.write_text(GOOD.replace(*edit, 1))
    line = GOOD[: GOOD.index(edit[0])].count("\n") + 1  # the edited line, or its mapping's
    line = line if edit[1] else GOOD[: GOOD.index("  mode:")].count("\n") + 1
    with pytest.raises(InputError) as caught:
        load_profiles(path)
    assert f"{path}: line {line} {where}: " in str(caught.value)


def test_a_users_profiles_file_adds_to_the_shipped_ones(tmp_path: Path) -> None:
    path = tmp_path / "profiles.yaml"
    path.write_text(GOOD.replace("anthropic:", "mine:", 1))
    assert profile("mine", path).read == 0.1
    assert profile("openai", path) == OPENAI
    with pytest.raises(InputError, match="unknown cache profile"):
        profile("nope", path)


# ---------------------------------------------------------------- packproof cache simulate


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_trace(tmp_path: Path, lines: list[Any]) -> str:
    path = tmp_path / "trace.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return str(path)


STEPS = [
    {"chain": "c1", "t": 0, "segments": [["i0", 600]]},
    {"chain": "c2", "t": 0, "segments": [["sys", 2000], ["q", 10]], "static_segments": 1},
    {"chain": "c1", "t": 10, "segments": [["i0", 600], ["i1", 600]]},
    {"chain": "c2", "t": 5.5, "segments": [["sys", 2000], ["r", 10]], "static_segments": 1},
    {"chain": "c1", "t": 20, "segments": [["i0", 600], ["i1", 600], ["i2", 600]]},
]


def test_simulate_prints_each_step_then_each_chains_total(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        ["cache", "simulate", write_trace(tmp_path, STEPS), "--profile", "anthropic"], capsys
    )
    assert (code, err) == (0, "")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [
        {k: v for k, v in line.items() if k in STEPS[0] or k == "static_segments"}
        for line in lines[:5]
    ] == STEPS
    assert [(x["cached"], x["written"], x["uncached"], x["prefix_break"]) for x in lines[:5]] == [
        (0, 0, 600, False),
        (0, 2010, 0, False),
        (0, 1200, 0, False),
        (2000, 10, 0, True),  # chain c2's own cache: its static prefix
        (1200, 600, 0, False),
    ]
    assert lines[4]["cost"] == pytest.approx(870)
    assert [x["chain"] for x in lines[5:]] == ["c1", "c2"]
    assert lines[5]["total"]["cost"] == pytest.approx(2970)
    assert lines[6]["total"]["first_break"] == 1


def test_simulate_prices_a_probe_and_totals_it_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines: list[Any] = [
        {"chain": "c", "t": s.t, "segments": [list(x) for x in s.segments], "probe": s.probe}
        for s in with_probe([("q", 50)])
    ]
    del lines[0]["probe"]  # optional: false
    code, out, err = run(
        ["cache", "simulate", write_trace(tmp_path, lines), "--profile", "anthropic"], capsys
    )
    assert (code, err) == (0, "")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(x.get("probe"), x["cached"], x["written"]) for x in rows[:5]] == [
        (None, 0, 0),
        (False, 0, 1200),
        (False, 1200, 600),
        (True, 1800, 50),
        (False, 1800, 600),
    ]
    total = rows[5]["total"]
    assert (total["steps"], total["input_tokens"], total["cached"]) == (4, 6000, 3000)
    assert total["probes"] == {
        "steps": 1,
        "input_tokens": 1850,
        "cached": 1800,
        "written": 50,
        "uncached": 0,
        "cost": 242.5,
        "cache_hit_rate": pytest.approx(1800 / 1850),
        "relative_cost": pytest.approx(242.5 / 1850),
    }


BAD_TRACES = {
    "no-segments": ([{"chain": "c", "t": 0, "segments": []}], "line 1 /segments"),
    "out-of-order": (
        [STEPS[0], {"chain": "c1", "t": -1, "segments": [["a", 1]]}],
        "line 2 /t: out of time order",
    ),
    "negative-tokens": (
        [STEPS[0], {"chain": "c", "t": 0, "segments": [["a", 1], ["b", -5]]}],
        "line 2 /segments/1/1",
    ),
    "malformed": ([STEPS[0], '{"chain": "c", "t": 0,'], "line 2 column"),
    "not-an-object": ([[1, 2]], "line 1 /"),
    "probe-not-a-flag": (
        [{"chain": "c", "t": 0, "segments": [["a", 1]], "probe": "yes"}],
        "line 1 /probe: not a probe flag",
    ),
    "static-too-long": (
        [{"chain": "c", "t": 0, "segments": [["a", 1]], "static_segments": 2}],
        "line 1 /static_segments",
    ),
    "one-id-two-token-counts": (
        [
            {"chain": "c", "t": 0, "segments": [["a", 2000]]},
            {"chain": "d", "t": 0, "segments": [["a", 5]]},  # another chain: its own ids
            {"chain": "c", "t": 1, "segments": [["a", 150], ["b", 10]]},
        ],
        "line 3 /segments/0/1: segment 'a' has another token count",
    ),
    "one-id-two-token-counts-in-a-line": (
        [{"chain": "c", "t": 0, "segments": [["a", 5], ["b", 1], ["a", 6]]}],
        "line 1 /segments/2/1",
    ),
    "time-is-text": ([{"chain": "c", "t": "0", "segments": [["a", 1]]}], "line 1 /t: not a time"),
    "time-is-infinite": (['{"chain": "c", "t": 1e999, "segments": [["a", 1]]}'], "line 1 /t"),
    "tokens-past-2**63": (
        [{"chain": "c", "t": 0, "segments": [["a", 2**62], ["b", 2**62]]}],
        "line 1 /segments: a prompt of 2**63 tokens",
    ),
    "not-utf8": ([STEPS[0], b"\xff{}".decode("latin-1")], "line 2: not UTF-8"),
    "duplicate-key": (
        ['{"chain": "c", "t": 0, "t": 1, "segments": [["a", 1]]}'],
        "line 1 /: duplicate key 't'",
    ),
    "tokens-past-64-bits": (
        ['{"chain": "c", "t": 0, "segments": [["a", 123456789012345678901234567890]]}'],
        "line 1 /segments: a prompt of 2**63 tokens",
    ),
    "lone-surrogate": (
        ['{"chain": "c", "t": 0, "segments": [["\\ud800", 1]]}'],
        "line 1 column",
    ),
    "empty": ([], "the trace has no steps"),
}


def write_bytes_trace(tmp_path: Path, lines: list[Any]) -> str:
    """Like :func:`write_trace`, a str line written as its Latin-1 bytes (so
    that a line can hold bytes that are not UTF-8)."""
    path = tmp_path / "trace.jsonl"
    path.write_bytes(
        b"".join(
            (x.encode("latin-1") if isinstance(x, str) else json.dumps(x).encode()) + b"\n"
            for x in lines
        )
    )
    return str(path)


@pytest.mark.parametrize("case", sorted(BAD_TRACES))
def test_bad_input_is_one_line_exit_2_and_nothing_written_before_the_first_batch(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines, where = BAD_TRACES[case]
    path = write_bytes_trace(tmp_path, lines)
    code, out, err = run(["cache", "simulate", path, "--profile", "anthropic"], capsys)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and path in err and where in err, err


def test_a_trace_that_is_a_directory_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["cache", "simulate", str(tmp_path), "--profile", "anthropic"], capsys)
    assert (code, out) == (2, "") and err.count("\n") == 1 and "cannot read file" in err


def test_a_bad_line_mid_trace_stops_after_whole_lines_and_gives_no_totals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # streamed: the batches before the bad line are written, each line whole
    good = [{"chain": "c", "t": k, "segments": [["s", 2000], [f"i{k}", 10]]} for k in range(3000)]
    bad = {"chain": "c", "t": 3000, "segments": [["s", 1999]]}
    path = write_trace(tmp_path, [*good, bad])
    code, out, err = run(["cache", "simulate", path, "--profile", "anthropic"], capsys)
    assert code == 2 and err.count("\n") == 1 and "line 3001 /segments/0/1" in err, err
    rows = [json.loads(line) for line in out.splitlines()]  # every line whole JSON
    assert len(rows) == 3000 // BATCH_LINES * BATCH_LINES and out.endswith("\n")
    assert [r["t"] for r in rows] == list(range(len(rows))) and "total" not in rows[-1]


def test_an_unknown_profile_is_one_line_naming_the_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        ["cache", "simulate", write_trace(tmp_path, STEPS), "--profile", "nope"], capsys
    )
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and "unknown cache profile" in err and "anthropic" in err


# ---------------------------------------------------------------- the benchmark's traces


def test_the_benchmark_traces_are_seeded_and_simulated_as_the_rules_say(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chains = bench.build_chains(3, 300)
    assert chains == bench.build_chains(3, 300)
    assert {name: sum(s.probe for s in steps) for name, steps in chains.items()} == {
        "append": 0,
        "sliding": 0,
        "middle": 0,
        "probes": 90,
    }
    path = tmp_path / "trace.jsonl"
    path.write_text(bench.trace_text(chains))  # 1,290 lines: more than one batch
    code, out, err = run(["cache", "simulate", str(path), "--profile", "openai"], capsys)
    assert (code, err) == (0, "")
    rows = [json.loads(line) for line in out.splitlines()]
    expected = [c for steps in chains.values() for c in reference_costs(steps, OPENAI)]
    got = [(r["cached"], r["written"], r["uncached"], r["prefix_break"]) for r in rows[:-4]]
    assert got == [(c.cached, c.written, c.uncached, c.prefix_break) for c in expected]
    totals = {r["chain"]: r["total"] for r in rows[-4:]}
    for name, steps in chains.items():
        costs = reference_costs(steps, OPENAI)
        conversation = [c.cost for c in costs if not c.probe]
        assert totals[name]["steps"] == len(conversation)
        assert totals[name]["cost"] == pytest.approx(math.fsum(conversation), abs=1e-6)


def reference_costs(steps: list[Step], prof: Profile) -> list[StepCost]:
    """The reference's figures as StepCost rows, costs included."""
    out = []
    for step, (hit, written, uncached, brk) in zip(steps, reference(steps, prof), strict=True):
        cost = prof.read * hit + prof.write * written + uncached
        out.append(StepCost(hit, written, uncached, cost, brk, step.probe))
    return out


def test_the_benchmark_reports_every_profile_and_judges_the_targets(tmp_path: Path) -> None:
    config = bench.Config(
        seed=0, steps=5, repeats=1, read_repeats=1, out=tmp_path / "c.json", memory_steps=300
    )
    report = bench.run(config)
    assert set(report["profiles"]) == set(PROFILES)
    *speed, memory = report["targets"]
    assert [t["met"] for t in speed] == [
        t["measured"] >= bench.TARGET_STEPS_PER_SECOND for t in speed
    ]
    assert memory["unit"] == "MB" and memory["met"] == (memory["measured"] < 500)
    assert report["memory"]["trace"]["steps"] == 300 and report["memory"]["trace"]["chains"] == 100
    assert "anthropic" in bench.format_report(report) and "peak memory" in bench.format_report(
        report
    )


def test_the_long_trace_is_seeded_and_streams_through_simulate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    shape = streaming.write_trace(first, 2000, 7, seed=1)
    assert shape == streaming.write_trace(second, 2000, 7, seed=1)
    assert first.read_bytes() == second.read_bytes() and shape["steps"] == 2000
    code, out, err = run(["cache", "simulate", str(first), "--profile", "anthropic"], capsys)
    assert (code, err) == (0, "") and len(out.splitlines()) == 2000 + 7
