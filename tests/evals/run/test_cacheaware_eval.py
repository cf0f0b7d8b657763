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
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
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
    def step(turn: int, t: float, brk: bool, cost: float) -> dict[str, Any]:
        return {
            "spec": "s",
            "budget": 2048,
            "suite": "x",
            "scenario": "c",
            "turn": turn,
            "t": t,
            "probe": False,
            "status": "ok",
            "prefix_break": brk,
            "cache": {"anthropic": {"0": {"cost": cost}}},
        }

    rows = cost_breakdown(
        [step(0, 0, False, 10), step(1, 10, True, 6), step(2, 20, False, 1), step(3, 900, True, 3)],
        ttl_s=300,
    )
    (row,) = rows
    assert row["input_cost"] == 20
    assert (row["cold_steps"], row["break_steps"], row["append_steps"]) == (2, 1, 1)
    assert row["cold_share"] == pytest.approx(13 / 20)
    assert row["break_share"] == pytest.approx(6 / 20)
    assert row["append_share"] == pytest.approx(1 / 20)


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
