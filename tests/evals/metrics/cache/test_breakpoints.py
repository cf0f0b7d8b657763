"""Breakpoints a caller places, long-context prices and pessimistic profiles
(REFERENCE.md section 5): hand cases worked from the rules as Anthropic
documents them; test_cache.py checks random chains against the transcription."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from packproof.cli import main
from packproof.evals.metrics.cache.files import load_profiles
from packproof.evals.metrics.cache.model import Profile, Step, price_chain
from tests.reliability.helpers import assert_one_line_exit_2

ANTHROPIC = load_profiles()["anthropic"]
S = ("S", 2000)  # a 2,000-token static prefix as one segment


def figures(steps: list[Step], prof: Profile = ANTHROPIC) -> list[tuple[int, int, int]]:
    return [(c.cached, c.written, c.uncached) for c in price_chain(steps, prof)]


def item(name: str, tokens: int = 600) -> tuple[str, int]:
    return (name, tokens)


def test_the_reference_hand_case_static_stable_end_and_recall() -> None:
    # REFERENCE.md: [S, a] at [1, 2] writes both (2,600); [S, a, r1] at [2, 3] reads
    # [S, a] and writes 600; [S, a, b, r2] at [3, 4] reads [S, a] again (k = 2; [S, a, r1]
    # is no prefix of it) and writes 3,800 - 2,600
    a, b = item("a"), item("b")
    steps = [
        Step(0, [S, a], 1, False, [1, 2]),
        Step(10, [S, a, item("r1")], 1, False, [2, 3]),
        Step(20, [S, a, b, item("r2")], 1, False, [3, 4]),
    ]
    assert figures(steps) == [(0, 2600, 0), (2600, 600, 0), (2600, 1200, 0)]


def test_tokens_are_written_once_however_many_breakpoints_write() -> None:
    # four breakpoints, every prefix above the minimum: W is the largest less H
    prompt = [S, item("a"), item("b"), item("c")]
    assert figures([Step(0, prompt, 1, False, [1, 2, 3, 4])]) == [(0, 3800, 0)]
    # what follows the last breakpoint is ordinary input
    assert figures([Step(0, prompt, 1, False, [1, 2])]) == [(0, 2600, 1200)]


def test_a_hit_is_looked_for_back_from_each_breakpoint() -> None:
    # 40 ten-token items after S; the first prompt's breakpoint at 10 writes
    # [S, i0..i8]. The second prompt changes from i10 on: from its end (41) the
    # window reaches back to 21 only and finds nothing; a breakpoint at 10 finds it
    items = [item(f"i{k}", 10) for k in range(40)]
    changed = [*items[:10], *(item(f"j{k}", 10) for k in range(10, 40))]
    first = Step(0, [S, *items], 1, False, [10, 41])
    only_end = Step(5, [S, *changed], 1, False, [41])
    assert figures([first, only_end])[1] == (0, 2400, 0)
    both = Step(5, [S, *changed], 1, False, [10, 41])
    assert figures([first, both])[1] == (2090, 310, 0)


def test_a_breakpoint_below_the_minimum_is_neither_written_nor_read() -> None:
    small = [("sys", 500), item("a"), item("b")]
    # the breakpoint at 1 (500 tokens) writes nothing; the one at 2 (1,100) writes
    first = Step(0, small, 1, False, [1, 2])
    second = Step(5, [("sys", 500), item("x")], 1, False, [1, 2])
    assert figures([first, second]) == [(0, 1100, 600), (0, 1100, 0)]


def test_no_breakpoint_reads_and_writes_nothing() -> None:
    prompt = [S, item("a")]
    assert figures([Step(0, prompt, 1, False, []), Step(1, prompt, 1, False, [])]) == [
        (0, 0, 2600),
        (0, 0, 2600),
    ]


def test_the_default_placement_is_the_end_and_the_static_prefix() -> None:
    steps = [Step(k * 10.0, [S, *(item(f"i{j}") for j in range(k + 1))], 1) for k in range(4)]
    placed = [s._replace(breakpoints=[1, len(s.segments)]) for s in steps]
    assert figures(steps) == figures(placed)


def test_more_breakpoints_than_the_profile_allows_are_refused() -> None:
    prompt = [S, *(item(f"i{k}") for k in range(5))]
    with pytest.raises(ValueError, match="5 breakpoints in one request; the profile allows 4"):
        price_chain([Step(0, prompt, 1, False, [1, 2, 3, 4, 5])], ANTHROPIC)
    # repeated positions count once
    assert price_chain([Step(0, prompt, 1, False, [1, 1, 2, 3, 6])], ANTHROPIC)


def test_prefix_mode_ignores_a_callers_breakpoints() -> None:
    openai = load_profiles()["openai"]
    steps = [Step(0, [S, item("a")]), Step(5, [S, item("a"), item("b")])]
    placed = [s._replace(breakpoints=[1]) for s in steps]
    assert figures(steps, openai) == figures(placed, openai)


def test_a_long_context_request_is_priced_whole_at_the_higher_rate() -> None:
    prof = dataclasses.replace(ANTHROPIC, long_context_tokens=2500, long_context_factor=2.0)
    steps = [Step(0, [S]), Step(5, [S, item("a")])]
    costs = [c.cost for c in price_chain(steps, prof)]
    assert costs == pytest.approx([1.25 * 2000, 2.0 * (0.1 * 2000 + 1.25 * 600)])


def test_a_pessimistic_profile_loses_about_its_miss_rate_of_hits() -> None:
    steps = [Step(k * 10.0, [S]) for k in range(2001)]
    prof = dataclasses.replace(ANTHROPIC, miss_rate=0.1, miss_seed=3)
    priced = price_chain(steps, prof)
    lost = sum(1 for c in priced[1:] if c.cached == 0)
    assert 150 <= lost <= 250  # binomial(2000, 0.1): mean 200, sd 13.4
    assert all(c.written == 2000 for c in priced[1:] if c.cached == 0)  # written again
    assert price_chain(steps, prof) == priced  # the draws are the seed's
    other = price_chain(steps, dataclasses.replace(prof, miss_seed=4))
    assert [c.cached for c in other] != [c.cached for c in priced]


# ---------------------------------------------------------------- cache simulate


def run(
    tmp_path: Path, lines: list[dict[str, object]], capsys: pytest.CaptureFixture[str], *args: str
) -> list[dict[str, object]]:
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["cache", "simulate", str(trace), *args]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_simulate_reads_a_lines_breakpoints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines: list[dict[str, object]] = [
        {"chain": "c", "t": 0, "segments": [["S", 2000], ["a", 600]], "breakpoints": [1, 2]},
        {
            "chain": "c",
            "t": 10,
            "segments": [["S", 2000], ["a", 600], ["r1", 600]],
            "breakpoints": [2, 3],
        },
        {
            "chain": "c",
            "t": 20,
            "segments": [["S", 2000], ["a", 600], ["b", 600], ["r2", 600]],
            "breakpoints": [3, 4],
        },
    ]
    out = run(tmp_path, lines, capsys, "--profile", "anthropic")
    assert [(r["cached"], r["written"], r["uncached"]) for r in out[:3]] == [
        (0, 2600, 0),
        (2600, 600, 0),
        (2600, 1200, 0),
    ]
    assert out[0]["breakpoints"] == [1, 2]  # the line as read, then its figures


@pytest.mark.parametrize(
    ("breakpoints", "message"),
    [
        ("3", "line 1 /breakpoints: not a list"),
        ("[0]", "line 1 /breakpoints/0: not a breakpoint"),
        ("[1, 3]", "line 1 /breakpoints/1: not a breakpoint"),
        ("[true]", "line 1 /breakpoints/0: not a breakpoint"),
    ],
)
def test_a_bad_breakpoints_list_is_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    breakpoints: str,
    message: str,
) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text(
        '{"chain": "c", "t": 0, "segments": [["a", 1], ["b", 2]], "breakpoints": '
        + breakpoints
        + "}\n"
    )
    argv = ["cache", "simulate", str(trace), "--profile", "anthropic"]
    assert_one_line_exit_2(lambda _: argv, message, tmp_path, monkeypatch, capsys)


def test_more_breakpoints_than_the_profile_allows_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "trace.jsonl"
    segments = [[f"s{k}", 10] for k in range(5)]
    trace.write_text(
        json.dumps({"chain": "c", "t": 0, "segments": segments, "breakpoints": [1, 2, 3, 4, 5]})
        + "\n"
    )
    argv = ["cache", "simulate", str(trace), "--profile", "anthropic"]
    says = "line 1 /breakpoints: more breakpoints than profile 'anthropic' allows"
    assert_one_line_exit_2(lambda _: argv, says, tmp_path, monkeypatch, capsys)
