"""The prompt-cache economics of replays in the report: hand-computed chain and
probe aggregates, the Pareto frontier and the cheapest spec within 90% of the
best recall (ties included), the summary schema, the Markdown, CSV and HTML
sections, frontier.png (none without a frontier), and the gate on hit rate and cost.

The records are synthetic, in the runner's format: two conversations (``s1``,
three steps and a probe; ``s2``, two steps and a probe) under two specs, one
budget (100), one profile (``p``) and no static prefix. Step figures use a
write price of 1.25 and a read price of 0.1.

============= ======================================== =====================================
chain         chronological (append-only)              bm25 (breaks at step 1)
============= ======================================== =====================================
s1 steps      N 100/200/300, cached 0/100/200,         N 100/200/300, cached 0/0/200,
              cost 125/135/145                         cost 125/250/145, kept 50 at the break
s1 chain      hit 300/600 = 0.5, cost 405, rel 0.675   hit 200/600, cost 520, rel 520/600
s2 steps      N 100/200, cached 0/100, cost 125/135    N 100/200, cached 0/0, cost 125/250
s2 chain      hit 100/300, cost 260, rel 260/300       hit 0, cost 375, rel 1.25
probes        recall 0.8 and 1.0 (mean 0.9)            recall 1.0 and 1.0
              N 310/210, cached 300/200, cost 40/30    N 310/210, cached 0/0, cost 310/210
every request s1: hit 600/910, cost 445, rel 445/910   s1: hit 200/910, cost 830
(steps and    s2: hit 300/510, cost 290, rel 290/510   s2: hit 0, cost 585, rel 585/510
probes)       input cost 367.5 = 332.5 + 35 (probes)   input cost 707.5 = 447.5 + 260
============= ======================================== =====================================

Every figure of cost counts every request (issue 28): a chain's steps and its probes.
"""

from __future__ import annotations

import base64
import copy
import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from packproof.evals.gate import Gates, compare, load_gates, load_summary
from packproof.evals.metrics.cache.model import Profile
from packproof.evals.report.csv_json import render_csv
from packproof.evals.report.frontier import build_frontier, frontier_sentence, pareto
from packproof.evals.report.html.page import render_html
from packproof.evals.report.markdown import render_markdown
from packproof.evals.report.model import ReportContext, build_report
from packproof.evals.report.plots.frontier import frontier
from packproof.evals.report.renderers import RENDERERS
from packproof.evals.schemafiles import validator
from packproof.packer.errors import InputError

SPECS = ("chronological", "bm25")
PROFILE = Profile("breakpoints", 0.1, 1.25, 0, 1, 300.0, True, 20, True, "test", "2026-11")
MANIFEST = {
    "name": "replay-test",
    "run_id": "r1",
    "packproof_version": "0",
    "git_commit": None,
    "python": "3.11",
    "platform": "test",
    "config": {"file": "cfg.yaml", "sha256": "0" * 64},
    "suites": [{"file": "replays.jsonl", "sha256": "0" * 64}],
    "strategies": list(SPECS),
    "budgets": [100],
    "token_counters": [],
    "seed": 0,
    "bootstrap_resamples": 50,
    "confidence": 0.95,
}


def step(
    scenario: str,
    turn: int,
    spec: str,
    n: int,
    cached: int,
    written: int,
    cost: float,
    *,
    probe: bool = False,
    prefix_break: bool = False,
    kept: int = 0,
    recall: float | None = None,
    stability: tuple[float | None, float | None] = (None, None),
) -> dict[str, Any]:
    """One record in the runner's format; uncached = n - cached - written."""
    return {
        "key": f"replays/{scenario}#{turn}|{spec}|100",
        "suite": "replays",
        "scenario": scenario,
        "turn": turn,
        "tags": [],
        "strategy": spec,
        "spec": spec,
        "budget": 100,
        "budget_tokens": 100,
        "status": "ok",
        "mode": "budget",
        "selected": [],
        "failures": [],
        "metrics": {
            "evidence_recall": recall,
            "prefix_stability": stability[0],
            "prefix_stability_tokens": stability[1],
        },
        "latency_ms": 1.0,
        "t": float(turn),
        "probe": probe,
        "segments": [],
        **({"question_tokens": 10} if probe else {}),
        "prefix_break": prefix_break,
        "kept_prefix_tokens": kept,
        "cache": {
            "p": {
                "0": {
                    "cached": cached,
                    "written": written,
                    "uncached": n - cached - written,
                    "cost": cost,
                }
            }
        },
    }


def records() -> list[dict[str, Any]]:
    c, b = SPECS
    return [
        # chronological: every pack extends the one before
        step("s1", 0, c, 100, 0, 100, 125.0),
        step("s1", 1, c, 200, 100, 100, 135.0, kept=100, stability=(1.0, 1.0)),
        step("s1", 2, c, 300, 200, 100, 145.0, kept=200, stability=(1.0, 1.0)),
        step("s1", 3, c, 310, 300, 0, 40.0, probe=True, recall=0.8),
        step("s2", 0, c, 100, 0, 100, 125.0),
        step("s2", 1, c, 200, 100, 100, 135.0, kept=100, stability=(1.0, 1.0)),
        step("s2", 2, c, 210, 200, 0, 30.0, probe=True, recall=1.0),
        # bm25: the second step breaks the prefix in both conversations
        step("s1", 0, b, 100, 0, 100, 125.0),
        step("s1", 1, b, 200, 0, 200, 250.0, prefix_break=True, kept=50, stability=(0.5, 0.25)),
        step("s1", 2, b, 300, 200, 100, 145.0, kept=200, stability=(1.0, 1.0)),
        step("s1", 3, b, 310, 0, 0, 310.0, probe=True, recall=1.0, prefix_break=True),
        step("s2", 0, b, 100, 0, 100, 125.0),
        step("s2", 1, b, 200, 0, 200, 250.0, prefix_break=True, kept=0, stability=(0.0, 0.0)),
        step("s2", 2, b, 210, 0, 0, 210.0, probe=True, recall=1.0, prefix_break=True),
    ]


REPLAY_KEYS = ("t", "probe", "segments", "question_tokens", "prefix_break", "kept_prefix_tokens")


def plain_records() -> list[dict[str, Any]]:
    """The conversation steps without their replay fields (an ordinary run)."""
    out = [r for r in records() if not r["probe"]]
    for r in out:
        for key in (*REPLAY_KEYS, "cache"):
            r.pop(key, None)
    return out


def report(recs: list[dict[str, Any]] | None = None, **kwargs: Any) -> dict[str, Any]:
    options: dict[str, Any] = {
        "cache_profiles": {"p": PROFILE},
        "static_prefix_tokens": (0,),
        **kwargs,
    }
    return build_report(
        records() if recs is None else recs,
        specs=SPECS,
        labels={s: s for s in SPECS},
        budgets=[100],
        baseline="chronological",
        resamples=50,
        confidence=0.95,
        seed=0,
        manifest=MANIFEST,
        run={"executor": "serial", "jobs": 1},
        **options,
    )


@pytest.fixture(scope="module")
def summary() -> dict[str, Any]:
    return report()


def group(summary: dict[str, Any], spec: str) -> dict[str, Any]:
    return next(g for g in summary["replay"]["groups"] if g["spec"] == spec)


def mean(stat: dict[str, Any] | None) -> float | None:
    return None if stat is None else stat["mean"]


def test_chain_figures_match_the_hand_computed_values(summary: dict[str, Any]) -> None:
    c = group(summary, "chronological")
    assert (c["chains"], c["steps"], c["probes"]) == (2, 5, 2)
    assert mean(c["cache_hit_rate"]) == pytest.approx((600 / 910 + 300 / 510) / 2)
    assert mean(c["relative_cost"]) == pytest.approx((445 / 910 + 290 / 510) / 2)
    assert mean(c["input_cost"]) == pytest.approx(367.5)  # steps and probes
    assert mean(c["conversation_cost"]) == pytest.approx(332.5)  # (405 + 260) / 2
    assert mean(c["probe_cost"]) == pytest.approx(35)  # (40 + 30) / 2
    assert mean(c["input_tokens"]) == pytest.approx(710)
    assert mean(c["prefix_breaks"]) == 0 and mean(c["break_share"]) == 0
    assert c["first_break"] is None and c["divergence_tokens"] is None
    assert mean(c["prefix_stability"]) == 1.0 and mean(c["prefix_stability_tokens"]) == 1.0
    assert mean(c["probe_recall"]) == pytest.approx(0.9)
    assert mean(c["probe_hit_rate"]) == pytest.approx((300 / 310 + 200 / 210) / 2)
    assert mean(c["probe_relative_cost"]) == pytest.approx((40 / 310 + 30 / 210) / 2)

    b = group(summary, "bm25")
    assert mean(b["cache_hit_rate"]) == pytest.approx((200 / 910 + 0) / 2)
    assert mean(b["relative_cost"]) == pytest.approx((830 / 910 + 585 / 510) / 2)
    assert mean(b["input_cost"]) == pytest.approx(707.5)
    assert (mean(b["conversation_cost"]), mean(b["probe_cost"])) == (447.5, 260)
    assert b["placements"] is None and b["cheapest_placement"] is None  # no breakpoints
    assert mean(b["prefix_breaks"]) == 1.0
    assert mean(b["break_share"]) == pytest.approx((1 / 2 + 1 / 1) / 2)
    assert mean(b["first_break"]) == 1.0  # the second step of both chains
    assert mean(b["divergence_tokens"]) == pytest.approx(25)  # kept 50 and 0
    assert mean(b["prefix_stability"]) == pytest.approx((0.75 + 0.0) / 2)
    assert mean(b["prefix_stability_tokens"]) == pytest.approx((0.625 + 0.0) / 2)
    assert mean(b["probe_recall"]) == 1.0 and mean(b["probe_hit_rate"]) == 0.0
    assert b["cache_hit_rate"]["n"] == 2 and b["probe_recall"]["n"] == 2


def test_main_groups_average_each_conversations_mean_stability(summary: dict[str, Any]) -> None:
    by_spec = {g["spec"]: g for g in summary["groups"]}
    assert mean(by_spec["chronological"]["prefix_stability"]) == 1.0
    assert mean(by_spec["bm25"]["prefix_stability"]) == pytest.approx(0.375)
    assert mean(by_spec["bm25"]["prefix_stability_tokens"]) == pytest.approx(0.3125)
    assert by_spec["bm25"]["prefix_stability"]["n"] == 2  # conversations, not turns


def test_the_frontier_and_the_cheapest_spec_within_90_percent(summary: dict[str, Any]) -> None:
    (f,) = summary["replay"]["frontiers"]
    assert (f["profile"], f["static_prefix_tokens"], f["budget"]) == ("p", 0, 100)
    assert [(p["spec"], p["input_cost"], p["recall"], p["pareto"]) for p in f["points"]] == [
        ("chronological", 367.5, 0.9, True),
        ("bm25", 707.5, 1.0, True),
    ]
    assert f["best_recall"] == 1.0
    choice = f["cheapest_within_90"]
    # 0.9 is exactly 0.9 x the best recall: within
    assert (choice["spec"], choice["threshold"], choice["cost_vs_cheapest"]) == (
        "chronological",
        0.9,
        1.0,
    )
    assert f["best"]["spec"] == "bm25"
    assert f["best"]["cost_vs_choice"] == pytest.approx(707.5 / 367.5)
    assert frontier_sentence(f) == (
        "Under p at 100 tokens, chronological is the cheapest spec within 90% of the best "
        "probe recall (recall 0.90, 368 input-token units per conversation); bm25, the best, "
        "costs 1.93x as much for +0.10 recall."
    )


def placed_records() -> list[dict[str, Any]]:
    """bm25's requests also priced under the two placements a caller would choose
    (``cache_placements``): static+stable+end costs 10 less per step and 5 less
    per probe than the default; static+stable 20 less per step, 40 more per probe."""
    recs = records()
    for r in recs:
        if r["spec"] != "bm25":
            continue
        f = r["cache"]["p"]["0"]
        end, stable = (-5, 40) if r["probe"] else (-10, -20)
        r["cache_placements"] = {
            name: {"p": {"0": {**f, "cost": f["cost"] + d}}}
            for name, d in (("static+stable+end", end), ("static+stable", stable))
        }
    return recs


def test_each_placement_is_priced_and_the_cheapest_is_named() -> None:
    summary = report(placed_records())
    b = group(summary, "bm25")
    # s1: 3 steps and a probe, s2: 2 steps and a probe; default 830 and 585
    assert {p: mean(stat) for p, stat in b["placements"].items()} == {
        "default": 707.5,
        "static+stable+end": pytest.approx((830 - 35 + 585 - 25) / 2),  # 677.5
        "static+stable": pytest.approx((830 - 20 + 585 + 0) / 2),  # 697.5
    }
    assert b["cheapest_placement"] == "static+stable+end"
    assert mean(b["input_cost"]) == 707.5  # every other figure is the default placement's
    c = group(summary, "chronological")
    assert c["placements"] is None and c["cheapest_placement"] is None
    assert validator("eval-summary.v1.json").is_valid(summary)
    md = render_markdown(ReportContext(summary, placed_records(), {}))
    assert (
        "| strategy | default | static+stable+end | static+stable | cheapest |\n"
        "|---|---|---|---|---|\n"
        "| `bm25` | 708 [585, 830] | 678 [560, 795] | 698 [585, 810] | static+stable+end |"
    ) in md
    assert "<td>static+stable+end</td>" in render_html(ReportContext(summary, placed_records(), {}))


def test_a_placement_not_priced_on_every_request_is_left_out_and_ties_go_to_the_default() -> None:
    recs = placed_records()
    probe = next(r for r in recs if r["spec"] == "bm25" and r["probe"])
    del probe["cache_placements"]["static+stable+end"]  # one request not priced under it
    b = group(report(recs), "bm25")
    assert list(b["placements"]) == ["default", "static+stable"]  # same conversations only
    assert b["cheapest_placement"] == "static+stable"
    for r in recs:
        for by in r.get("cache_placements", {}).values():
            by["p"]["0"]["cost"] = r["cache"]["p"]["0"]["cost"]  # as dear as the default
    assert group(report(recs), "bm25")["cheapest_placement"] == "default"  # a tie


def points(*rows: tuple[str, float, float]) -> list[dict[str, Any]]:
    return [{"spec": s, "label": s, "input_cost": c, "recall": r} for s, c, r in rows]


def test_pareto_drops_dominated_points_and_keeps_equal_ones() -> None:
    assert pareto(points(("a", 1, 0.5), ("b", 2, 0.5), ("c", 2, 0.9), ("d", 3, 0.8))) == [
        True,
        False,  # as good as a, dearer
        True,
        False,  # dearer and worse than c
    ]
    assert pareto(points(("a", 1, 0.5), ("b", 1, 0.5))) == [True, True]  # equal: both on it
    assert pareto(points(("a", 1, 0.5), ("b", 1, 0.6))) == [False, True]  # same cost, better


def groups(*rows: tuple[str, float, float]) -> list[dict[str, Any]]:
    def stat(x: float) -> dict[str, Any]:
        return {"mean": x, "low": x, "high": x, "n": 1}

    return [
        {
            "spec": s,
            "label": s,
            "input_cost": stat(c),
            "probe_recall": stat(r),
            "cache_hit_rate": None,
        }
        for s, c, r in rows
    ]


def test_cheapest_within_90_breaks_ties_by_spec_order() -> None:
    f = build_frontier(groups(("x", 5, 0.95), ("y", 5, 0.95), ("z", 9, 1.0)), "p", 0, 100)
    assert f["cheapest_within_90"]["spec"] == "x"
    f = build_frontier(groups(("y", 5, 0.95), ("x", 5, 0.95), ("z", 9, 1.0)), "p", 0, 100)
    assert f["cheapest_within_90"]["spec"] == "y"
    # at equal cost the higher recall wins, whatever the order
    f = build_frontier(groups(("x", 5, 0.92), ("y", 5, 0.95), ("z", 9, 1.0)), "p", 0, 100)
    assert f["cheapest_within_90"]["spec"] == "y"
    # the best recall shared: the cheaper of the two is "best"
    f = build_frontier(groups(("a", 5, 0.5), ("b", 4, 1.0), ("c", 3, 1.0)), "p", 0, 100)
    assert (f["best"]["spec"], f["cheapest_within_90"]["spec"]) == ("c", "c")
    assert f["cheapest_within_90"]["cost_vs_cheapest"] == 1.0
    assert frontier_sentence(f).endswith("comes within 90% of it: it is also the cheapest.")
    # a cheaper spec below 90% of the best recall is never chosen
    f = build_frontier(groups(("a", 2, 0.5), ("b", 4, 1.0)), "p", 0, 100)
    assert (f["cheapest_within_90"]["spec"], f["cheapest_within_90"]["cost_vs_cheapest"]) == (
        "b",
        2.0,
    )
    assert (f["cheapest"]["spec"], f["cheapest"]["cost_vs_choice"]) == ("a", 0.5)
    assert frontier_sentence(f) == (
        "Under p at 100 tokens, b has the best probe recall (1.00, 4 input-token units per "
        "conversation) and no cheaper spec comes within 90% of it; a, the cheapest, costs "
        "0.50x as much for -0.50 recall."
    )


def test_no_probe_recall_means_no_points_and_a_sentence_that_says_so() -> None:
    recs = records()
    for r in recs:
        r["metrics"]["evidence_recall"] = None
    (f,) = report(recs)["replay"]["frontiers"]
    assert f["points"] == [] and f["cheapest_within_90"] is None and f["best_recall"] is None
    assert "no probe with gold evidence" in frontier_sentence(f)


def test_an_unpriced_profile_and_prefix_leave_the_costs_null() -> None:
    other = Profile("prefix", 0.25, 1.0, 1024, 128, 300.0, False, 0, False)
    summary = report(cache_profiles={"p": PROFILE, "q": other}, static_prefix_tokens=(0, 2000))
    replay = summary["replay"]
    assert replay["static_prefix_tokens"] == [0, 2000]
    assert list(replay["profiles"]) == ["p", "q"] and replay["profiles"]["q"]["granularity"] == 128
    keys = [(g["profile"], g["static_prefix_tokens"], g["spec"]) for g in replay["groups"]]
    assert keys == [(p, s, spec) for p in "pq" for s in (0, 2000) for spec in SPECS]
    unpriced = [g for g in replay["groups"] if g["profile"] == "q" or g["static_prefix_tokens"]]
    assert all(g["input_cost"] is None and g["cache_hit_rate"] is None for g in unpriced)
    assert all(g["probe_recall"] is not None for g in unpriced)  # recall needs no price
    assert validator("eval-summary.v1.json").is_valid(summary)


def test_the_summary_is_valid_and_without_replays_has_no_replay_section(
    summary: dict[str, Any],
) -> None:
    errors = list(validator("eval-summary.v1.json").iter_errors(summary))
    assert errors == []
    plain = report(plain_records())
    assert "replay" not in plain and validator("eval-summary.v1.json").is_valid(plain)


def context(summary: dict[str, Any]) -> ReportContext:
    return ReportContext(summary, records(), {})


def test_markdown_leads_each_budget_with_the_answer(summary: dict[str, Any]) -> None:
    md = render_markdown(context(summary))
    assert "## Prompt-cache economics" in md and "### p, budget 100 tokens" in md
    section = md.split("### p, budget 100 tokens", 1)[1]
    assert section.lstrip().startswith("Under p at 100 tokens, chronological is the cheapest")
    assert (
        "| `bm25` | 1.000 | 0.110 [0.000, 0.220] | 1.030 [0.912, 1.147] | 708 [585, 830] "
        "| 448 [375, 520] | 260 [210, 310] |" in section  # input cost = steps' + probes'
    )
    assert (
        "Cheapest within 90% of the best probe recall (1.000; threshold 0.900): chronological, "
        "recall 0.900, input cost 368, the cheapest spec." in section
    )
    assert "under each breakpoint placement" not in md  # no pack suggested breakpoints
    assert "| `p` | breakpoints | 0.1 | 1.25 |" in md


def test_csv_has_one_row_per_replay_group_after_the_cells(summary: dict[str, Any]) -> None:
    summary = copy.deepcopy(summary)
    summary["replay"]["groups"][1]["label"] = "=HYPERLINK(1)"  # a formula is neutralised
    rows = list(csv.DictReader(io.StringIO(render_csv(context(summary)))))
    assert len(rows) == len(records()) + 2
    cells, replay = rows[:-2], rows[-2:]
    assert all(r["profile"] == "" and r["cache_hit_rate"] == "" for r in cells)
    assert replay[0]["key"] == "replay|p|0|chronological|100"
    assert (replay[0]["profile"], replay[0]["static_prefix_tokens"]) == ("p", "0")
    assert float(replay[0]["input_cost"]) == 367.5 and float(replay[0]["probe_recall"]) == 0.9
    assert (float(replay[0]["conversation_cost"]), float(replay[0]["probe_cost"])) == (332.5, 35)
    assert float(replay[1]["prefix_stability_tokens"]) == 0.3125
    assert replay[1]["strategy"] == "'=HYPERLINK(1)" and replay[1]["first_break"] == "1.0"
    assert replay[0]["first_break"] == ""


def test_html_section_and_the_frontier_plot(summary: dict[str, Any]) -> None:
    from PIL import Image

    ctx = context(summary)
    page = render_html(ctx)
    assert '<section id="cache">' in page and 'href="#cache"' in page
    assert "Under p at 100 tokens, chronological is the cheapest spec" in page
    assert "(chosen)" in page
    png = frontier(ctx)
    assert RENDERERS["frontier.png"] is frontier
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    with Image.open(io.BytesIO(png)) as im:
        assert im.size[0] > 400 and im.size[1] > 300
        assert len(im.convert("RGB").getcolors(1 << 20) or []) > 20
    assert f'src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}"' in page


def test_without_replays_there_is_no_plot_and_no_section() -> None:
    ctx = ReportContext(report(plain_records()), plain_records(), {})
    assert frontier(ctx) is None  # no frontier.png is written
    assert 'id="cache"' not in render_html(ctx)
    assert "Prompt-cache economics" not in render_markdown(ctx)


# ---------------------------------------------------------------- the gate


def gated(**metrics: float) -> Gates:
    return Gates(max_drop=metrics, source="test")


def rows(
    baseline: dict[str, Any], current: dict[str, Any], gates: Gates
) -> dict[tuple[str, str], str]:
    result = compare(baseline, current, gates)
    return {(c.strategy, c.metric): c.verdict for c in result.checks if "@" in c.strategy}


def test_a_rise_in_cost_regresses_and_a_fall_does_not(summary: dict[str, Any]) -> None:
    gates = gated(evidence_recall=0.02, input_cost=10.0, relative_cost=0.01)
    dearer = copy.deepcopy(summary)
    group(dearer, "bm25")["input_cost"]["mean"] += 10.5
    group(dearer, "chronological")["relative_cost"]["mean"] -= 0.5
    assert rows(summary, dearer, gates) == {
        ("chronological@p/0", "relative_cost"): "ok",
        ("chronological@p/0", "input_cost"): "ok",
        ("bm25@p/0", "relative_cost"): "ok",
        ("bm25@p/0", "input_cost"): "REGRESSED",
    }
    check = next(c for c in compare(summary, dearer, gates).regressions)
    assert check.cells()[:3] == ("bm25@p/0", "100", "input_cost")
    assert check.cells()[5] == "+10.5000"  # the rise, shown as how far it got worse
    assert rows(dearer, summary, gates)[("bm25@p/0", "input_cost")] == "ok"  # cheaper


def test_a_fall_in_hit_rate_regresses_and_a_rise_does_not(summary: dict[str, Any]) -> None:
    gates = gated(cache_hit_rate=0.02)
    colder = copy.deepcopy(summary)
    group(colder, "chronological")["cache_hit_rate"]["mean"] -= 0.03
    assert rows(summary, colder, gates)[("chronological@p/0", "cache_hit_rate")] == "REGRESSED"
    assert rows(colder, summary, gates)[("chronological@p/0", "cache_hit_rate")] == "ok"
    assert compare(summary, summary, gates).passed


def test_replay_groups_missing_or_new_and_ungated(summary: dict[str, Any]) -> None:
    gates = gated(cache_hit_rate=0.02)
    fewer = copy.deepcopy(summary)
    fewer["replay"]["groups"] = fewer["replay"]["groups"][:1]
    assert rows(summary, fewer, gates)[("bm25@p/0", "*")] == "MISSING"
    assert rows(fewer, summary, gates)[("bm25@p/0", "*")] == "new"
    assert rows(summary, fewer, gated(evidence_recall=0.02)) == {}  # replay metrics not gated


def test_gates_file_accepts_cost_thresholds_and_summary_keys_are_checked(
    summary: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "gates.yaml"
    path.write_text(
        "schema: packproof.gates.v1\nmetrics: {cache_hit_rate: 0.02, input_cost: 500, "
        "relative_cost: 0.05}\nhard_invariants: 0\nexpectations: all\n"
    )
    gates = load_gates(path)
    assert gates.max_drop == {"cache_hit_rate": 0.02, "input_cost": 500.0, "relative_cost": 0.05}
    assert gates.describe() == (
        "allowed drop cache_hit_rate 0.02; allowed rise input_cost 500, relative_cost 0.05; "
        "hard invariants 0; expectations all"
    )
    path.write_text(path.read_text().replace("cache_hit_rate: 0.02", "cache_hit_rate: 2"))
    with pytest.raises(InputError, match="/metrics/cache_hit_rate"):
        load_gates(path)
    doubled = copy.deepcopy(summary)
    doubled["replay"]["groups"].append(copy.deepcopy(doubled["replay"]["groups"][0]))
    (tmp_path / "s.json").write_text(json.dumps(doubled))
    with pytest.raises(InputError, match="/replay/groups/2: duplicate group"):
        load_summary(tmp_path / "s.json", "current")


def test_replays_with_no_profile_priced_say_so() -> None:
    bare = report(cache_profiles={})
    assert bare["replay"] == {
        "profiles": {},
        "static_prefix_tokens": [0],
        "groups": [],
        "frontiers": [],
    }
    ctx = ReportContext(bare, records(), {})
    assert "No cache profile was priced in this run." in render_markdown(ctx)
    assert "No cache profile was priced in this run." in render_html(ctx)
    assert frontier(ctx) is None


def test_the_same_records_give_the_same_bytes_in_every_format() -> None:
    first, second = context(report()), context(report())
    for name, render in RENDERERS.items():
        assert render(first) == render(second), name


def test_the_gate_command_names_a_cost_regression(
    summary: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from packproof.cli import main

    dearer = copy.deepcopy(summary)
    group(dearer, "chronological")["relative_cost"]["mean"] += 0.2
    files = {"base.json": summary, "cur.json": dearer}
    for name, data in files.items():
        (tmp_path / name).write_text(json.dumps(data))
    (tmp_path / "g.yaml").write_text(
        "schema: packproof.gates.v1\nmetrics: {relative_cost: 0.05}\n"
        "hard_invariants: 0\nexpectations: all\n"
    )
    args = ["--baseline", str(tmp_path / "base.json"), "--current", str(tmp_path / "cur.json")]
    assert main(["gate", *args, "--gates", str(tmp_path / "g.yaml")]) == 1
    out = capsys.readouterr().out
    (line,) = [line for line in out.splitlines() if line.startswith("regressed: ")]
    assert line == (
        "regressed: chronological@p/0 @ 100: relative_cost 0.5288 -> 0.7288 "
        "(+0.2000, allowed +0.05)"
    )
