"""Conversation replays: the scenario format (timed steps and probes), the
LoCoMo importer's --replay, and the eval's per-step records priced under
prompt-cache profiles (hand-computed from REFERENCE.md section 5)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from packproof.evals.run.evaluate import evaluate
from packproof.evals.scenarios.format import load_compiled
from packproof.evals.scenarios.importers.locomo import import_locomo
from packproof.packer import InputError
from packproof.packer.tokens import count_tokens
from tests.evals.scenarios.importers.test_locomo import SAMPLE, write
from tests.evals.scenarios.test_scenario_errors import packproof
from tests.journal import records as journal_records

QUESTION = "what did the user ask about?"
REPLAY = f"""\
scenarios:
  - id: replay-demo
    why: Three steps of 600 tokens each, then one probe, to price the cache.
    request:
      budget_tokens: 4000
      fresh_tail: {{count: 1}}
      items: []
    turns:
      - t: 0
        items: [[m1, user, 600, hello there]]
      - t: 10
        items: [[m2, assistant, 600, "hi, how can I help"]]
      - t: 20
        items: [[m3, user, 600, tell me about caching]]
      - t: 30
        probe: true
        prompt: {QUESTION}
        relevant: [m2]
"""


def test_a_replay_compiles_to_timed_steps_and_probes(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text(REPLAY)
    assert packproof("scenarios", "compile", "r.yaml", cwd=tmp_path).returncode == 0
    (sc,) = load_compiled(tmp_path / "compiled" / "r.jsonl")
    assert sc.replay
    assert [(t.t, t.probe) for t in sc.turns] == [(0, False), (10, False), (20, False), (30, True)]
    # a step's prompt is its newest item's text; a probe asks its question
    prompts = [t.request["prompt"] for t in sc.turns]
    assert prompts == ["hello there", "hi, how can I help", "tell me about caching", QUESTION]
    assert [len(t.request["items"]) for t in sc.turns] == [1, 2, 3, 3]
    assert sc.turns[3].relevant == ("m2",)


BROKEN = {
    "no-items": (
        ('      - t: 10\n        items: [[m2, assistant, 600, "hi, how can I help"]]\n'),
        "      - t: 10\n        items: []\n",
        "a replay step with no items",
        11,
    ),
    "probe-adds-items": (
        "        probe: true\n",
        "        probe: true\n        items: [[m4, user, 1, x]]\n",
        "a probe does not advance the conversation",
        17,
    ),
    "out-of-order": ("      - t: 20\n", "      - t: 5\n", "out of time order", 13),
    "untimed-step": (
        "      - t: 10\n        items:",
        "      - prompt: hi\n        items:",
        "needs its time t",
        11,
    ),
    "step-with-prompt": (
        "      - t: 20\n",
        "      - t: 20\n        prompt: my own\n",
        "omit prompt",
        14,
    ),
    "no-fresh-tail": ("{count: 1}", "{count: 0}", "a replay needs a fresh tail", 5),
    "infinite-time": ("      - t: 20\n", "      - t: .inf\n", "not a finite time", 13),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_bad_replays_are_one_clear_line(case: str, tmp_path: Path) -> None:
    old, new, needle, line = BROKEN[case]
    assert old in REPLAY
    (tmp_path / "r.yaml").write_text(REPLAY.replace(old, new, 1))
    out = packproof("scenarios", "compile", "r.yaml", cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    (message,) = out.stderr.strip().splitlines()
    assert needle in message and f"r.yaml: line {line} " in message, message
    assert not (tmp_path / "compiled").exists()


def test_locomo_as_a_replay(tmp_path: Path) -> None:
    (sc,), report = import_locomo(write(tmp_path, SAMPLE), fresh_tail=1, replay=True, gap_s=30)
    assert sc.replay and "replay" in sc.tags and report["questions"] == 3
    steps = [t for t in sc.turns if not t.probe]
    probes = [t for t in sc.turns if t.probe]
    # session 1 at 1:00 pm on 8 May, session 2 at 2:00 pm on 9 May: 25 hours later
    assert [t.t for t in steps] == [0, 30, 90_000]
    assert [t.request["prompt"] for t in steps] == [
        "I adopted a dog.",
        "Lovely! [shared a photo: a puppy]",
        "The dog is called Rex.",
    ]
    assert [len(t.request["items"]) for t in steps] == [1, 2, 3]
    assert [t.request["current_turn"] for t in steps] == [1, 1, 2]  # the session so far
    assert [t.t for t in probes] == [90_030] * 3  # asked right after the last turn
    assert [t.relevant for t in probes] == [("D2:1",), ("D1:1", "D2:1"), ()]
    assert all(len(t.request["items"]) == 3 for t in probes)
    # the compact compiled form round-trips
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps(sc.to_json()) + "\n")
    (again,) = load_compiled(path)
    assert again.turns == sc.turns


def test_locomo_replay_needs_session_dates(tmp_path: Path) -> None:
    sample = json.loads(json.dumps(SAMPLE))
    sample[0]["conversation"]["session_2_date_time"] = "yesterday"
    with pytest.raises(InputError, match="session_2_date_time: not a session date-time"):
        import_locomo(write(tmp_path, sample), replay=True)
    sample[0]["conversation"]["session_2_date_time"] = "2:00 pm on 7 May, 2023"
    with pytest.raises(InputError, match="sessions out of time order"):
        import_locomo(write(tmp_path, sample), replay=True)
    with pytest.raises(InputError, match="session summaries are not sent"):
        import_locomo(write(tmp_path, SAMPLE), replay=True, with_summaries=True)


def _run(tmp_path: Path, budgets: str = "[4000]", statics: str = "[0, 2000]") -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "r.yaml").write_text(REPLAY)
    assert packproof("scenarios", "compile", "r.yaml", cwd=tmp_path).returncode == 0
    (tmp_path / "cfg.yaml").write_text(
        f"""\
name: replay-demo
suites: [compiled/r.jsonl]
strategies: [chronological]
budgets: {budgets}
bootstrap: {{resamples: 200}}
cache:
  profiles: [anthropic, openai]
  static_prefix_tokens: {statics}
"""
    )
    return evaluate(
        tmp_path / "cfg.yaml", out_root=tmp_path / "out", jobs=1, executor="serial", resume=False
    )


def _records(run: Path) -> list[dict[str, Any]]:
    return sorted(journal_records(run), key=lambda r: r["turn"])


def test_each_step_is_priced_as_reference_section_5_computes_it(tmp_path: Path) -> None:
    records = _records(_run(tmp_path))
    q = int(count_tokens([QUESTION], "lcm")[0])
    assert [r["t"] for r in records] == [0, 10, 20, 30]
    assert [r["probe"] for r in records] == [False, False, False, True]
    assert records[2]["segments"] == [["m1", 600], ["m2", 600], ["m3", 600]]
    assert records[3]["question_tokens"] == q
    figures = [[r["cache"][p][s] for r in records] for p in ("anthropic", "openai") for s in ("0",)]
    anthropic, openai = figures
    # REFERENCE.md's hand cases: 600-token items appended one per step
    assert [(f["cached"], f["written"], f["uncached"]) for f in anthropic] == [
        (0, 0, 600),
        (0, 1200, 0),
        (1200, 600, 0),
        (1800, q, 0),  # the probe reads what step 2 wrote and writes its question
    ]
    assert anthropic[2]["cost"] == pytest.approx(0.1 * 1200 + 1.25 * 600)
    assert [(f["cached"], f["written"]) for f in openai[:3]] == [(0, 0), (0, 1200), (1152, 648)]
    assert openai[2]["cost"] == pytest.approx(0.25 * 1152 + 648)
    # the 2,000-token static prefix is written once by step 0 and read after
    static = [r["cache"]["anthropic"]["2000"] for r in records]
    assert (static[0]["cached"], static[0]["written"]) == (0, 2600)
    assert (static[1]["cached"], static[1]["written"]) == (2600, 600)
    # append-only: no break, every pack keeps the previous one whole
    assert [r["prefix_break"] for r in records] == [False, False, False, False]
    assert [r["metrics"]["prefix_stability_tokens"] for r in records] == [None, 1.0, 1.0, None]


def test_a_sliding_window_breaks_the_prefix_at_every_step(tmp_path: Path) -> None:
    records = _records(_run(tmp_path, budgets="[1300]", statics="[0]"))
    assert [r["segments"] for r in records[:3]] == [
        [["m1", 600]],
        [["m1", 600], ["m2", 600]],
        [["m2", 600], ["m3", 600]],  # the head is evicted: the cache breaks
    ]
    assert [r["prefix_break"] for r in records] == [False, False, True, False]
    assert [r["kept_prefix_tokens"] for r in records] == [0, 600, 0, 1200]
    assert records[2]["metrics"]["prefix_stability"] == 0.0
    assert records[2]["cache"]["anthropic"]["0"]["cached"] == 0  # nothing of step 1 is reused


def test_a_run_can_be_repriced_from_its_results(tmp_path: Path) -> None:
    """The journal holds each step's time and segments: `packproof cache simulate`
    on a trace made from it gives the figures the eval wrote."""
    records = _records(_run(tmp_path))
    trace = tmp_path / "trace.jsonl"
    trace.write_text(
        "".join(
            json.dumps(
                {
                    "chain": "c",
                    "t": r["t"],
                    "segments": [["<static>", 2000], *r["segments"]]
                    + ([["<question>", r["question_tokens"]]] if r["probe"] else []),
                    "static_segments": 1,
                    "probe": r["probe"],
                }
            )
            + "\n"
            for r in records
        )
    )
    out = packproof("cache", "simulate", str(trace), "--profile", "anthropic", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    steps = [json.loads(line) for line in out.stdout.splitlines()][: len(records)]
    for r, step in zip(records, steps, strict=True):
        want = r["cache"]["anthropic"]["2000"]
        assert {k: step[k] for k in want} == want


CONFIG = """\
name: replay-demo
suites: [compiled/r.jsonl]
strategies: [chronological]
cache:
  profiles: [anthropic, mine]
  custom_profiles:
    mine:
      mode: prefix
      read: 0.5
      write: 1.0
      min_tokens: 1024
      granularity: 128
      ttl_s: 600
      refresh_on_hit: false
      lookback: 0
      static_breakpoint: false
      source: our provider's price sheet
      date: 2026-11
"""

BAD_CONFIGS = {
    "unknown-profile": (
        "[anthropic, mine]",
        "[anthropic, antropic]",
        "line 5 /cache/profiles/1",
        "unknown cache profile",
    ),
    "negative-price": (
        "read: 0.5",
        "read: -0.5",
        "line 9 /cache/custom_profiles/mine/read",
        "schema violation",
    ),
    "missing-field": (
        "      ttl_s: 600\n",
        "",
        "line 8 /cache/custom_profiles/mine",
        "'ttl_s' is a required property",
    ),
    "unknown-mode": (
        "mode: prefix",
        "mode: implicit",
        "line 8 /cache/custom_profiles/mine/mode",
        "schema violation",
    ),
    "nan-price": (
        "write: 1.0",
        "write: .nan",
        "line 10 /cache/custom_profiles/mine/write",
        "not a finite number",
    ),
    "negative-static": (
        "cache:\n",
        "cache:\n  static_prefix_tokens: [-1]\n",
        "line 5 /cache/static_prefix_tokens/0",
        "schema violation",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_bad_cache_config_is_one_clear_line(case: str, tmp_path: Path) -> None:
    old, new, where, needle = BAD_CONFIGS[case]
    assert old in CONFIG
    (tmp_path / "r.yaml").write_text(REPLAY)
    assert packproof("scenarios", "compile", "r.yaml", cwd=tmp_path).returncode == 0
    (tmp_path / "cfg.yaml").write_text(CONFIG.replace(old, new, 1))
    out = packproof("eval", "--config", "cfg.yaml", "--out", "out", cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    (message,) = out.stderr.strip().splitlines()
    assert f"cfg.yaml: {where}" in message and needle in message, message
    assert not (tmp_path / "out").exists()


def test_custom_profiles_price_like_shipped_ones(tmp_path: Path) -> None:
    from packproof.evals.run.config import load_config

    (tmp_path / "r.yaml").write_text(REPLAY)
    assert packproof("scenarios", "compile", "r.yaml", cwd=tmp_path).returncode == 0
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    config = load_config(tmp_path / "cfg.yaml")
    assert list(config.cache_profiles) == ["anthropic", "mine"]
    mine = config.cache_profiles["mine"]
    assert (mine.mode, mine.read, mine.granularity, mine.source) == (
        "prefix",
        0.5,
        128,
        "our provider's price sheet",
    )
    assert config.static_prefix_tokens == (0,)


def test_the_benchmark_replay_of_chat_text_is_a_valid_replay(tmp_path: Path) -> None:
    pytest.importorskip("chitchat_dataset")
    from packproof.evals.bench.replay import PROBES, chitchat_replay

    sc = chitchat_replay(300)
    assert sc.replay and len(sc.turns) == 300 + PROBES
    times = [t.t for t in sc.turns]
    assert times == sorted(times) and times[200] - times[199] == 3600  # a session pause
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps(sc.to_json()) + "\n")
    (again,) = load_compiled(path)  # the compiled form checks out
    assert again.turns == sc.turns


def test_an_external_packer_is_priced_like_the_builtin_one(tmp_path: Path) -> None:
    """packproof serve through the external-packer protocol: the same segments and
    cache figures as the built-in packer, step by step."""
    builtin = _records(_run(tmp_path / "a", budgets="[1300]"))
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "r.yaml").write_text(REPLAY)
    assert packproof("scenarios", "compile", "r.yaml", cwd=tmp_path / "b").returncode == 0
    (tmp_path / "b" / "cfg.yaml").write_text((tmp_path / "a" / "cfg.yaml").read_text())
    run = evaluate(
        tmp_path / "b" / "cfg.yaml",
        out_root=tmp_path / "b" / "out",
        jobs=1,
        executor="serial",
        resume=False,
        packer=f"cmd:{sys.executable} -m packproof serve",
    )
    external = _records(run)
    keys = ("t", "probe", "segments", "prefix_break", "kept_prefix_tokens", "cache")
    assert [{k: r[k] for k in keys} for r in external] == [{k: r[k] for k in keys} for r in builtin]


def _chain(breakpoints: bool) -> list[dict[str, Any]]:
    """REFERENCE.md section 5's hand case for breakpoints a caller places, as
    replay records: 600-token items, a recall item (r1, r2) after the stable
    part, then a probe whose pack ends with r3 and whose question is 10 tokens."""

    def record(turn: int, items: list[str], suggested: list[int], probe: bool = False) -> Any:
        return {
            "turn": turn,
            "t": 10.0 * turn,
            "probe": probe,
            "segments": [[i, 600] for i in items],
            "breakpoints": suggested if breakpoints else None,
            **({"question_tokens": 10} if probe else {}),
        }

    return [
        record(0, ["a"], [1]),
        record(1, ["a", "r1"], [1, 2]),
        record(2, ["a", "b", "r2"], [2, 3]),
        record(3, ["a", "b", "r3"], [2, 3], probe=True),
    ]


def test_each_placement_a_caller_would_choose_is_priced_by_hand() -> None:
    from types import SimpleNamespace

    from packproof.evals.metrics.cache.files import load_profiles
    from packproof.evals.run.replay import _price

    shipped = load_profiles()
    profiles = {name: shipped[name] for name in ("anthropic", "openai")}
    scenario: Any = SimpleNamespace(id="hand", file="hand.yaml")
    placed, plain = _chain(True), _chain(False)
    _price(scenario, placed, profiles, [0, 2000]).spread(placed)
    _price(scenario, plain, profiles, [0, 2000]).spread(plain)
    # the default placement's figures are those of a chain without suggestions
    assert [r["cache"] for r in placed] == [r["cache"] for r in plain]
    assert all("cache_placements" not in r for r in plain)  # one placement: the default
    # openai (before GPT-5.6) is in prefix mode: the provider decides, no placement
    assert {p for r in placed for by in r["cache_placements"].values() for p in by} == {"anthropic"}

    def row(f: dict[str, Any]) -> tuple[int, int, int, float]:
        return f["cached"], f["written"], f["uncached"], f["cost"]

    def figures(placement: str, static: str) -> list[tuple[int, int, int, float]]:
        return [row(r["cache_placements"][placement]["anthropic"][static]) for r in placed]

    # static + stable + end: breakpoints [1, 2], [1, 2, 3], [1, 3, 4], then [1, 3, 4]
    # for the probe, whose question follows the end breakpoint (never reused: uncached)
    assert figures("static+stable+end", "2000") == [
        (0, 2600, 0, 3250.0),  # [S, a] written
        (2600, 600, 0, 1010.0),  # reads [S, a], writes [S, a, r1]
        (2600, 1200, 0, 1760.0),  # [S, a, r1] is no prefix: reads [S, a]
        (3200, 600, 10, 1080.0),  # reads [S, a, b] (step 2's stable end), writes r3
    ]
    # static + stable: nothing after the stable part is written, so it is billed uncached
    assert figures("static+stable", "2000") == [
        (0, 2600, 0, 3250.0),
        (2600, 0, 600, 860.0),
        (2600, 600, 600, 1610.0),  # writes [S, a, b]
        (3200, 0, 610, 930.0),
    ]
    # without a static prefix the first placement has no static breakpoint: [1], [1, 2]
    assert figures("static+stable+end", "0")[:2] == [
        (0, 0, 600, 600.0),  # 600 < anthropic's 1,024 minimum: neither written nor read
        (0, 1200, 0, 1500.0),
    ]
    # the default ends at the question, which is written; no breakpoint at [S, a, b]
    assert row(placed[3]["cache"]["anthropic"]["2000"]) == (2600, 1210, 0, 1772.5)
