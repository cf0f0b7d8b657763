"""Cache-aware packing in the eval: each replay step gets the previous pack of
its (spec, budget) chain and the seconds since, so the chain appends, compacts
and re-selects cold exactly as hand-computed; chains run in parallel with the
same records on every executor; an external packer gets the same requests."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from packproof.evals.bench.cacheaware import cost_breakdown
from packproof.evals.run.evaluate import evaluate
from tests.evals.scenarios.test_scenario_errors import packproof
from tests.journal import records as journal_records

# Six 300-token messages: 10 s apart, then a 960 s pause (past the 300 s
# lifetime), then a question about the first.
CHAIN = """\
scenarios:
  - id: chain
    why: Six 300-token steps under a 1,000-token budget, a pause, then a probe.
    request:
      budget_tokens: 1000
      fresh_tail: {count: 1}
      items: []
    turns:
      - {t: 0, items: [[m1, user, 300, the zebra lives in the east paddock]]}
      - {t: 10, items: [[m2, assistant, 300, lunch closes at noon]]}
      - {t: 20, items: [[m3, user, 300, deploys use the release branch]]}
      - {t: 30, items: [[m4, assistant, 300, card css switched]]}
      - {t: 40, items: [[m5, user, 300, database password rotates]]}
      - {t: 1000, items: [[m6, assistant, 300, back after the break]]}
      - {t: 1010, probe: true, prompt: where does the zebra live, relevant: [m1]}
"""
CHRONO = "chronological+cache(low_water=0.5)"
BM25 = "bm25+cache(low_water=0.5,recall_share=0.3)"


def _config(tmp: Path, strategies: list[str], extra: str = "") -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "r.yaml").write_text(CHAIN)
    assert packproof("scenarios", "compile", "r.yaml", cwd=tmp).returncode == 0
    path = tmp / "cfg.yaml"
    path.write_text(
        f"""\
name: chain
suites: [compiled/r.jsonl]
strategies: {json.dumps(strategies)}
budgets: [1000]
bootstrap: {{resamples: 200}}
cache:
  profiles: [anthropic]
{extra}"""
    )
    return path


def _records(run: Path, spec: str | None = None) -> list[dict[str, Any]]:
    records = journal_records(run)
    if spec is not None:
        records = [r for r in records if r["spec"].startswith(spec.split("(")[0] + "(")]
    return sorted(records, key=lambda r: (r["spec"], r["turn"]))


def _stable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "latency_ms"} for r in records]


def test_the_chain_appends_compacts_and_reselects_cold(tmp_path: Path) -> None:
    cfg = _config(tmp_path, [CHRONO])
    run = evaluate(cfg, out_root=tmp_path / "out", jobs=1, executor="serial", resume=False)
    records = _records(run)
    # The fresh tail reaches back to the newest user message: [m3, m4] at step 3,
    # [m5, m6] at step 5. Step 3 would hold 1,200 > 1,000 tokens: compacted to
    # 500 (the 600-token tail alone); step 5 comes 960 s later: cold, re-selected.
    assert [r["cache_action"] for r in records] == [
        "first",
        "append",
        "append",
        "compact",
        "append",
        "cold",
        "append",  # the probe: the previous pack, nothing new
    ]
    assert [[s[0] for s in r["segments"]] for r in records] == [
        ["m1"],
        ["m1", "m2"],
        ["m1", "m2", "m3"],
        ["m3", "m4"],
        ["m3", "m4", "m5"],
        ["m5", "m6"],
        ["m5", "m6"],
    ]
    assert [r["prefix_break"] for r in records] == [False, False, False, True, False, True, False]
    # prompts under anthropic's 1,024-token minimum are neither written nor read
    cache = [r["cache"]["anthropic"]["0"] for r in records]
    assert all((c["cached"], c["written"]) == (0, 0) for c in cache)
    assert all(r["recall_tokens"] == 0 for r in records)


def test_the_recall_block_serves_the_probe(tmp_path: Path) -> None:
    cfg = _config(tmp_path, [BM25])
    run = evaluate(cfg, out_root=tmp_path / "out", jobs=1, executor="serial", resume=False)
    records = _records(run)
    # High-water 700 (30% of 1,000 is the recall room): each step that would
    # pass it compacts to the tail; the recall block then takes bm25's best
    # match for the step's text that the stable part lacks (300 tokens fit).
    assert [(r["cache_action"], [s[0] for s in r["segments"]]) for r in records] == [
        ("first", ["m1"]),
        ("append", ["m1", "m2"]),
        ("compact", ["m3", "m1"]),  # "the" matches m1 first (no stopwords)
        ("compact", ["m3", "m4", "m2"]),
        ("compact", ["m5", "m4"]),
        ("cold", ["m5", "m6", "m1"]),
        ("compact", ["m5", "m6", "m1"]),  # the probe: its question's best match, m1
    ]
    probe = records[-1]
    assert probe["probe"]
    assert probe["recall_tokens"] == 300
    assert probe["metrics"]["evidence_recall"] == 1.0


def test_chains_run_in_parallel_with_the_same_records(tmp_path: Path) -> None:
    specs = [CHRONO, BM25, "bm25"]
    serial = evaluate(
        _config(tmp_path / "s", specs),
        out_root=tmp_path / "s" / "out",
        jobs=1,
        executor="serial",
        resume=False,
    )
    pool = evaluate(
        _config(tmp_path / "p", specs),
        out_root=tmp_path / "p" / "out",
        jobs=2,
        executor="process",
        resume=False,
    )
    assert _stable(_records(pool)) == _stable(_records(serial))


def test_an_external_packer_gets_the_previous_pack(tmp_path: Path) -> None:
    builtin = _records(
        evaluate(
            _config(tmp_path / "a", [BM25]),
            out_root=tmp_path / "a" / "out",
            jobs=1,
            executor="serial",
            resume=False,
        )
    )
    external = _records(
        evaluate(
            _config(tmp_path / "b", [BM25]),
            out_root=tmp_path / "b" / "out",
            jobs=1,
            executor="serial",
            resume=False,
            packer=f"cmd:{sys.executable} -m packproof serve",
        )
    )
    keys = ("segments", "prefix_break", "cache")
    assert [{k: r[k] for k in keys} for r in external] == [{k: r[k] for k in keys} for r in builtin]


@pytest.mark.parametrize(
    ("spec", "text"),
    [
        ("bm25+cache(low_water=2)", "/strategies/0: cache_aware/low_water: out of range"),
        ("bm25+cache(low_water=0.9,recall_share=0.3)", "exceeds 1"),
        ("bm25+cash", "unknown spec part"),
    ],
)
def test_a_bad_cache_spec_in_a_config_is_one_line(tmp_path: Path, spec: str, text: str) -> None:
    cfg = _config(tmp_path, [spec])
    out = packproof("eval", "--config", str(cfg), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0] and "cfg.yaml" in lines[0], lines
    assert not (tmp_path / "out").exists()


def test_cost_breakdown_by_step_kind_by_hand() -> None:
    def step(turn: int, t: float, brk: bool, cost: float, probe: bool = False) -> dict[str, Any]:
        return {
            "spec": "s",
            "budget": 2048,
            "suite": "x",
            "scenario": "c",
            "turn": turn,
            "t": t,
            "probe": probe,
            "status": "ok",
            "prefix_break": brk,
            "cache": {"anthropic": {"0": {"cost": cost}}},
        }

    rows = cost_breakdown(
        [
            step(0, 0, False, 10),
            step(1, 10, True, 6),
            step(2, 20, False, 1),
            step(3, 900, True, 3),
            step(4, 1000, True, 5, probe=True),  # a probe costs too, apart
        ],
        ttl_s=300,
    )
    (row,) = rows
    assert row["input_cost"] == 25
    assert (row["cold_steps"], row["break_steps"], row["append_steps"]) == (2, 1, 1)
    assert row["probe_steps"] == 1 and row["probe_share"] == pytest.approx(5 / 25)
    assert row["cold_share"] == pytest.approx(13 / 25)
    assert row["break_share"] == pytest.approx(6 / 25)
    assert row["append_share"] == pytest.approx(1 / 25)


def test_chains_run_on_dask_with_the_same_records(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="the Dask executor needs the dask extra")
    specs = [CHRONO, BM25]
    runs = [
        evaluate(
            _config(tmp_path / name, specs),
            out_root=tmp_path / name / "out",
            jobs=2 if name == "dask" else 1,
            executor=name,
            resume=False,
        )
        for name in ("serial", "dask")
    ]
    serial, dask = (_stable(_records(run)) for run in runs)
    assert dask == serial


# ------------------------------------------------------- the cache-aware bench


def _group(label: str, recall: float, cost: float, **placed: float) -> dict[str, Any]:
    def stat(x: float) -> dict[str, Any]:
        return {"mean": x, "low": x, "high": x, "n": 1}

    return {
        "spec": label,
        "label": label,
        "profile": "anthropic",
        "static_prefix_tokens": 0,
        "budget": 2048,
        "probe_recall": stat(recall),
        "input_cost": stat(cost),
        "placements": {
            "default": stat(cost),
            **{k.replace("_", "+"): stat(v) for k, v in placed.items()},
        }
        if placed
        else None,
    }


def test_the_target_is_met_by_a_spec_under_a_placement_a_caller_chooses() -> None:
    """bm25+cache keeps 0.75 / 0.8 of bm25's recall; by default it costs 70 / 50
    = 1.4x the cheapest, with breakpoints after the static prefix, the stable
    part and the end 60 / 50 = 1.2x: met by that configuration."""
    from packproof.evals.bench.cacheaware import target

    groups = [
        _group("bm25", 0.8, 100),
        _group("chronological+cache", 0.1, 50, static_stable_end=52, static_stable=51),
        _group("bm25+cache", 0.75, 70, static_stable_end=60, static_stable=64),
    ]
    (row,) = target({"replay": {"groups": groups}})
    assert row["met"] and row["cheapest"]["label"] == "chronological+cache"
    assert row["cheapest"]["placement"] == "default"
    best = row["best"]
    assert (best["label"], best["placement"]) == ("bm25+cache", "static+stable+end")
    assert best["recall_share_of_bm25"] == pytest.approx(0.9375)
    assert best["cost_vs_cheapest"] == pytest.approx(1.2)
    configs = {(c["label"], c["placement"]): c for c in row["configurations"]}
    assert len(configs) == 7  # bm25 has one placement, the cache-aware specs three each
    assert not configs["bm25+cache", "default"]["met"]  # 1.4x
    # without the placements, the same run misses the target
    for g in groups:
        g["placements"] = None
    (row,) = target({"replay": {"groups": groups}})
    assert not row["met"] and row["best"]["placement"] == "default"


TALK = """\
scenarios:
  - id: talk
    why: Ten 400-token messages 30 s apart, then two probes about the first two.
    request:
      budget_tokens: 2048
      fresh_tail: {count: 1}
      items: []
    turns:
      - {t: 0, items: [[m1, user, 400, the zebra lives in the east paddock]]}
      - {t: 30, items: [[m2, assistant, 400, lunch closes at noon]]}
      - {t: 60, items: [[m3, user, 400, deploys use the release branch]]}
      - {t: 90, items: [[m4, assistant, 400, card css switched]]}
      - {t: 120, items: [[m5, user, 400, database password rotates weekly]]}
      - {t: 150, items: [[m6, assistant, 400, the cat sleeps on the sofa]]}
      - {t: 180, items: [[m7, user, 400, invoices go out on fridays]]}
      - {t: 210, items: [[m8, assistant, 400, the printer is on floor two]]}
      - {t: 240, items: [[m9, user, 400, coffee beans come from kenya]]}
      - {t: 270, items: [[m10, assistant, 400, the zebra eats hay]]}
      - {t: 300, probe: true, prompt: where does the zebra live, relevant: [m1]}
      - {t: 300, probe: true, prompt: when does lunch close, relevant: [m2]}
"""


def test_the_bench_prints_a_line_per_static_prefix_and_budget_with_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from packproof.evals.bench.cacheaware import main
    from packproof.packer.tokens import count_tokens

    (tmp_path / "r.yaml").write_text(TALK)
    assert packproof("scenarios", "compile", "r.yaml", cwd=tmp_path).returncode == 0
    (tmp_path / "cfg.yaml").write_text(
        """\
name: talk
suites: [compiled/r.jsonl]
strategies:
  - bm25
  - chronological+cache(low_water=0.4)
  - bm25+cache(low_water=0.4,recall_share=0.3)
budgets: [2048, 4096]
bootstrap: {resamples: 200}
cache:
  profiles: [anthropic]
  static_prefix_tokens: [0, 2000]
"""
    )
    run = evaluate(
        tmp_path / "cfg.yaml", out_root=tmp_path / "out", jobs=1, executor="serial", resume=False
    )
    out = tmp_path / "ca.json"
    suite = tmp_path / "compiled" / "r.jsonl"
    assert main([str(run), "--scenarios", str(suite), "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    heads = [line for line in lines if line.startswith("anthropic, ")]
    assert [h.split(":")[0] for h in heads] == [
        f"anthropic, static prefix {s}, budget {b}" for s in (0, 2000) for b in (2048, 4096)
    ]
    assert all(" target met by " in h or " target not met (best: " in h for h in heads)
    report = json.loads(out.read_text())
    q = sum(
        int(n) for n in count_tokens(["where does the zebra live", "when does lunch close"], "lcm")
    )
    for row in report["results"]:
        limit = row["physical_limit"]
        # each step sends its new 400-token item; each probe its own evidence and question
        if row["static_prefix_tokens"] == 0:  # every prompt under anthropic's 1,024 minimum
            assert limit["input_cost"] == 10 * 400 + 2 * 400 + q
            assert (limit["write"], limit["read"], limit["uncached"]) == (0, 0, 4800 + q)
        else:  # the static prefix written once (1.25 x 2,000), then read (0.1 x 2,000)
            assert limit["input_cost"] == pytest.approx(2500 + 11 * 200 + 12 * 400 + q)
        assert limit["designs"]["evidence on demand"] == limit["input_cost"]
        assert limit["cost_vs_cheapest"] == pytest.approx(
            limit["input_cost"] / row["cheapest"]["input_cost"]
        )
        if not row["met"]:
            assert row["stopped_by"] in ("write", "read", "uncached")
    # a line under each miss: the cost terms, then the limit
    for i, head in enumerate(lines):
        if " target not met " in head:
            assert lines[i + 1].lstrip().startswith("per conversation, write ")
            assert " stops it" in lines[i + 1]
            assert lines[i + 2].lstrip().startswith("physical limit: ")
    # the suite is found by its manifest name and sha256 when it lies in the run folder
    (run / "r.jsonl").write_bytes(suite.read_bytes())
    assert main([str(run)]) == 0
    assert capsys.readouterr().out.splitlines() == lines


def test_the_target_bench_refuses_a_folder_that_is_not_a_run_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from packproof.evals.bench.cacheaware import main

    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a run folder (expected summary.json in it)" in err
