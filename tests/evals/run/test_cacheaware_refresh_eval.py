"""Issue 28 in the eval: a chain whose recall block is not carried gives the
next step its stable part and the block apart, every replay record carries the
pack's suggested breakpoints, an external packer gets and gives the same, and a
probe's request is the one a non-probe step would get (no peeking)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

from packproof.evals.run import runner
from packproof.evals.run.evaluate import evaluate
from packproof.evals.run.runner import Task, run_task
from packproof.evals.run.suites import load_suite
from packproof.packer.pipeline import decide
from packproof.packer.request import request_to_json
from tests.evals.run.test_cacheaware_eval import _config, _records

# low_water 0.5, recall_share 0.3 of 1,000: H = 700, L = 500, R = 300 (one item)
UNCARRIED = (
    "bm25+cache(low_water=0.5,recall_share=0.3,carry_recall=false,recall_refresh=compaction)"
)
CARRIED = "bm25+cache(low_water=0.5,recall_share=0.3)"


def test_an_uncarried_chain_keeps_its_block_apart_and_records_breakpoints(
    tmp_path: Path,
) -> None:
    run = evaluate(
        _config(tmp_path, [UNCARRIED, "bm25"]),
        out_root=tmp_path / "out",
        jobs=1,
        executor="serial",
        resume=False,
    )
    records = _records(run)
    plain = [r for r in records if "+cache" not in r["spec"]]
    assert all("breakpoints" in r and r["breakpoints"] is None for r in plain)
    chain = [r for r in records if "+cache" in r["spec"]]
    # Step 3: the stable part [m3] appends m4 (600 <= 700) and the block [m1],
    # kept (no compaction), follows; carried, [m3, m1] + m4 = 900 would compact
    # (tests/evals/run/test_cacheaware_eval.py). Step 4: [m3, m4] + m5 compacts
    # to the tail [m5]; the block is recomputed. The probe: the block [m1] kept.
    assert [
        (r["cache_action"], [s[0] for s in r["segments"]], r["breakpoints"]) for r in chain
    ] == [
        ("first", ["m1"], [1]),
        ("append", ["m1", "m2"], [2]),
        ("compact", ["m3", "m1"], [1, 2]),
        ("append", ["m3", "m4", "m1"], [2, 3]),
        ("compact", ["m5", "m4"], [1, 2]),
        ("cold", ["m5", "m6", "m1"], [2, 3]),
        ("append", ["m5", "m6", "m1"], [2, 3]),
    ]
    assert chain[-1]["probe"] and chain[-1]["metrics"]["evidence_recall"] == 1.0


def test_an_external_packer_gets_the_block_apart(tmp_path: Path) -> None:
    runs = [
        _records(
            evaluate(
                _config(tmp_path / name, [UNCARRIED]),
                out_root=tmp_path / name / "out",
                jobs=1,
                executor="serial",
                resume=False,
                packer=packer,
            )
        )
        for name, packer in (("a", None), ("b", f"cmd:{sys.executable} -m packproof serve"))
    ]
    keys = ("segments", "prefix_break", "breakpoints", "cache")
    builtin, external = ([{k: r[k] for k in keys} for r in records] for records in runs)
    assert external == builtin


@pytest.mark.parametrize("spec", [UNCARRIED, CARRIED, "bm25"])
def test_a_probe_is_packed_from_the_request_a_step_would_get(
    tmp_path: Path, spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last turn of the chain packed as a probe and as a plain step: the
    runner sends the same request, so the pack is the same."""
    _config(tmp_path, [spec])
    (scenario,) = load_suite(tmp_path / "compiled" / "r.jsonl")
    last = scenario.turns[-1]
    assert last.probe
    as_step = dataclasses.replace(
        scenario, turns=(*scenario.turns[:-1], dataclasses.replace(last, probe=False))
    )
    seen: list[dict[str, Any]] = []

    def recording(req: Any, reserved: Any, ranked: Any) -> Any:
        seen.append(request_to_json(req))
        return decide(req, reserved, ranked)

    monkeypatch.setattr(runner, "decide", recording)
    packs = []
    for sc in (scenario, as_step):
        seen.clear()
        n = len(sc.turns)
        records = run_task(Task("r", sc, tuple(range(n)), (spec,)), [spec], [1000])
        packs.append((seen[-1], records[-1]["segments"], records[-1].get("breakpoints")))
    assert packs[0] == packs[1]
