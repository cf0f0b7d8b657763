"""The eval runner: same reports whichever executor; resume loses nothing; bad
configs and corrupt results are one clear line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from packproof.evals.run import runner
from packproof.evals.run.config import load_config
from packproof.evals.run.evaluate import evaluate, validate_summary
from packproof.evals.run.journal import LEGACY_RESULTS, RESULTS, gzip_member, read_results
from packproof.evals.run.runner import parsed_turns, run_cells, run_task, tasks
from packproof.evals.scenarios.format import load_compiled
from packproof.packer import InputError
from packproof.packer.request import parse_items, parse_request, request_to_json
from packproof.packer.text import Analyzer
from tests.journal import stored_lines
from tests.paths import ROOT


def suite_turns(name: str) -> int:
    """Turns in a compiled suite: one cell per turn, spec and budget."""
    return sum(len(s.turns) for s in load_compiled(ROOT / "scenarios/compiled" / f"{name}.jsonl"))


# write_config's suites: lossless-claw (one turn a scenario) and 5 conversations x 3 turns
TURNS = suite_turns("lossless-claw") + suite_turns("conversations")


def write_config(tmp: Path, **extra: object) -> Path:
    (tmp / "evals").mkdir(exist_ok=True)
    config = {
        "schema": "packproof.eval.v1",
        "name": "t",
        "suites": [
            str(ROOT / "scenarios/compiled/lossless-claw.jsonl"),
            str(ROOT / "scenarios/compiled/conversations.jsonl"),
        ],
        "strategies": ["chronological", "bm25", "hybrid(w_usage=0.3)"],
        "budgets": ["scenario", 16, 48],
        "bootstrap": {"resamples": 200},
        **extra,
    }
    path = tmp / "evals" / "cfg.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


def reports(run_dir: Path) -> dict[str, str]:
    out = {}
    for name in ("metrics.csv", "summary.json", "summary.md"):
        text = (run_dir / name).read_text()
        if name == "summary.json":
            data = json.loads(text)
            data.pop("run")  # latency, executor and jobs: the one run-dependent block
            text = json.dumps(data, sort_keys=True)
        if name == "summary.md":
            text = text.split("## Latency")[0]
        out[name] = text
    return out


def test_reports_are_byte_identical_whichever_executor(tmp_path: Path) -> None:
    cfg = write_config(tmp_path)
    serial = evaluate(cfg, out_root=tmp_path / "a", jobs=1, executor="serial", resume=False)
    pooled = evaluate(cfg, out_root=tmp_path / "b", jobs=2, executor="process", resume=False)
    assert reports(serial) == reports(pooled)
    summary = json.loads((serial / "summary.json").read_text())
    assert validate_summary(summary) == []
    assert summary["cells"] == TURNS * 9  # 3 specs x 3 budgets
    assert all(sum(g["hard_invariants"].values()) == 0 for g in summary["groups"])
    assert serial.parent.parent == tmp_path / "a"  # <out>/<config name>/<run id>
    assert (serial.parent / "latest" / "summary.md").exists()


def test_resume_after_an_interruption_loses_nothing(tmp_path: Path) -> None:
    cfg = write_config(tmp_path)
    full = evaluate(cfg, out_root=tmp_path / "full", jobs=1, executor="serial", resume=False)
    lines = stored_lines(full)
    part = tmp_path / "part" / full.parent.name / full.name  # <out>/<config name>/<run id>
    part.mkdir(parents=True)
    # half the records, then a batch torn by a crash mid-write
    torn = gzip_member(lines[len(lines) // 2 :])
    (part / RESULTS).write_bytes(gzip_member(lines[: len(lines) // 2]) + torn[: len(torn) // 2])
    resumed = evaluate(cfg, out_root=tmp_path / "part", jobs=1, executor="serial", resume=True)
    assert reports(resumed) == reports(full)
    keys = [json.loads(x)["key"] for x in stored_lines(resumed)]
    assert len(keys) == len(set(keys)) == len(lines)


def test_a_run_journaled_in_plain_lines_reads_and_resumes_as_it_is(tmp_path: Path) -> None:
    """A run written before the journal was gzipped (``results.jsonl``) is read,
    and resumed in plain lines, and reports what an uninterrupted run does."""
    cfg = write_config(tmp_path)
    full = evaluate(cfg, out_root=tmp_path / "full", jobs=1, executor="serial", resume=False)
    lines = stored_lines(full)
    part = tmp_path / "part" / full.parent.name / full.name  # <out>/<config name>/<run id>
    part.mkdir(parents=True)
    (part / LEGACY_RESULTS).write_bytes(b"".join(lines[: len(lines) // 2]))
    resumed = evaluate(cfg, out_root=tmp_path / "part", jobs=1, executor="serial", resume=True)
    assert reports(resumed) == reports(full)
    assert not (resumed / RESULTS).exists()
    plain = (resumed / LEGACY_RESULTS).read_bytes().splitlines(keepends=True)
    assert plain[: len(lines) // 2] == lines[: len(lines) // 2]  # kept as they were
    assert sorted(json.loads(x)["key"] for x in plain) == sorted(
        json.loads(x)["key"] for x in lines
    )


def test_corrupt_results_line_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text('{"key": "a", "metrics": {}}\n{oops\n{"key": "b", "metrics": {}}\n')
    with pytest.raises(InputError, match=r"results.jsonl:2: line 1 column 2: invalid JSON"):
        read_results(path)


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"strategies": ["bm26"]}, "/strategies/0: unknown strategy"),
        ({"strategies": ["bm25(k9=1)"]}, "unknown parameter"),
        ({"strategies": ["bm25", "bm25(k1=1.2)"]}, "duplicate strategy spec"),
        ({"suites": ["no/such/*.jsonl"]}, "no scenario file matches"),
        ({"budgets": [0]}, "schema violation"),
        ({"colour": "red"}, "schema violation"),
        ({"baseline_strategy": "clarity"}, "not one of the configured strategies"),
    ],
)
def test_bad_config_is_one_line(tmp_path: Path, extra: dict[str, object], needle: str) -> None:
    cfg = write_config(tmp_path, **extra)
    with pytest.raises(InputError, match=r"cfg\.yaml: line"):
        load_config(cfg)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "packproof",
            "eval",
            "--config",
            str(cfg),
            "--out",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 2 and needle in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and not (tmp_path / "r").exists()


def test_every_cell_is_run_once(tmp_path: Path) -> None:
    cfg = load_config(write_config(tmp_path))
    records = run_cells(cfg, tmp_path / "o", executor="serial")
    assert len({r["key"] for r in records}) == len(records) == TURNS * 9
    assert {r["spec"] for r in records} == set(cfg.specs)


COMPILED = sorted((ROOT / "scenarios/compiled").glob("*.jsonl"))


@pytest.mark.parametrize("path", COMPILED, ids=lambda p: p.stem)
@pytest.mark.parametrize("counter", [None, "chars4"])
def test_turns_sharing_one_parse_equal_turns_parsed_alone(path: Path, counter: str | None) -> None:
    for scenario in load_compiled(path):
        turns = range(len(scenario.turns))
        for k, shared, recounted in parsed_turns(scenario, turns, counter):
            request = scenario.turns[k].request
            if recounted:
                items = [{f: v for f, v in it.items() if f != "tokens"} for it in request["items"]]
                request = {**request, "token_counter": counter, "items": items}
            alone = parse_request(request)
            assert request_to_json(shared) == request_to_json(alone), (scenario.id, k)
            for tokenizer in (Analyzer(), Analyzer(stopwords="english")):
                query = ["the", "a", "you", "数据"]
                a, b = shared.items.term_stats(tokenizer), alone.items.term_stats(tokenizer)
                assert a.lengths.tolist() == b.lengths.tolist()
                assert [x.tolist() for x in a.frequencies(query)] == [
                    x.tolist() for x in b.frequencies(query)
                ]


def test_a_conversation_is_parsed_once_per_task(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def counting(raw: list[object], counter: str) -> object:
        calls.append(len(raw))
        return parse_items(raw, counter)

    monkeypatch.setattr(runner, "parse_items", counting)
    cfg = load_config(ROOT / "evals/default.yaml")
    conversations = [t for t in tasks(cfg) if t.scenario.shared_items is not None]
    assert conversations
    for task in conversations:
        calls.clear()
        records = run_task(task, ["bm25", "clarity"], [64])
        assert calls == [len(task.scenario.shared_items or [])]
        assert len(records) == 2 * len(task.turns)


def test_token_counter_override_recounts_and_does_not_judge(tmp_path: Path) -> None:
    suite = str(ROOT / "scenarios/compiled/tokens-unicode.jsonl")
    as_compiled = load_config(
        write_config(tmp_path, suites=[suite], strategies=["bm25"], budgets=["scenario"])
    )
    (tmp_path / "evals" / "cfg.yaml").unlink()
    chars4 = load_config(
        write_config(
            tmp_path,
            suites=[suite],
            strategies=["bm25"],
            budgets=["scenario"],
            token_counter="chars4",
        )
    )
    a = {r["key"]: r for r in run_cells(as_compiled, tmp_path / "a", executor="serial")}
    b = {r["key"]: r for r in run_cells(chars4, tmp_path / "b", executor="serial")}
    key = next(k for k in a if "tokens-lcm-cjk-message-costs-12" in k)
    # chars4 counts the 8 Chinese characters as 2 tokens, lcm as 12
    assert b[key]["metrics"]["tokens_used"] != a[key]["metrics"]["tokens_used"]
    assert a[key]["metrics"]["expectation_pass"] == 1.0
    assert b[key]["metrics"]["expectation_pass"] is None  # recounted: measured, not judged
    same = next(k for k in b if "tokens-chars4-cjk-message-costs-2" in k)
    assert b[same]["metrics"]["expectation_pass"] == 1.0  # compiled with chars4: still judged


def test_named_expectations_judge_only_the_default_parameters(tmp_path: Path) -> None:
    suite = str(ROOT / "scenarios/compiled/hybrid-signals.jsonl")
    cfg = load_config(
        write_config(
            tmp_path,
            suites=[suite],
            budgets=["scenario"],
            strategies=["hybrid", "hybrid(w_recency=0)"],
        )
    )
    records = run_cells(cfg, tmp_path / "o", executor="serial")
    default = [r for r in records if r["spec"] == cfg.specs[0]]
    other = [r for r in records if r["spec"] == cfg.specs[1]]
    assert all(r["metrics"]["expectation_pass"] == 1.0 for r in default)
    # hybrid-signals' expectations name hybrid (written for its defaults) or "*"
    judged = [r for r in other if r["metrics"]["expectation_pass"] is not None]
    assert len(judged) < len(default)


def test_a_policy_strategy_is_judged_on_its_own_expectations_at_every_budget(
    tmp_path: Path,
) -> None:
    """openclaw-mem decides its whole pack from the turn's one reservation; its
    default and spec-keyed expectations are judged, "*"'s (the shared pipeline's)
    are not."""
    suites = [str(ROOT / f"scenarios/compiled/{name}.jsonl") for name in ("openclaw-mem", "trust")]
    spec = "openclaw-mem(tail_budget_tokens=6,tail_max_items=2)"
    cfg = load_config(
        write_config(
            tmp_path, suites=suites, budgets=["scenario", 8], strategies=["openclaw-mem", spec]
        )
    )
    records = run_cells(cfg, tmp_path / "o", executor="serial")
    assert all(r["status"] == "ok" for r in records)
    judged = [r for r in records if r["metrics"]["expectation_pass"] is not None]
    assert {r["scenario"] for r in judged} == {
        "ocm-fusion-filters-and-composite-order",
        "ocm-synthesis-card-replaces-its-sources",
        "ocm-event-cap-and-quarantined-twice",
        "ocm-protected-tail-has-its-own-budget",
        "ocm-bm25-lane-without-retrieval",
        "ocm-lifecycle-gate-and-its-switches",
        "ocm-quota-reserves-a-decision-first",
        "ocm-an-unreadable-time-is-oldest-or-newest",
        "ocm-importance-read-two-ways",
    }  # not ocm-tail-slots-taken-by-lines-that-do-not-fit: only another spec's
    assert all(r["metrics"]["expectation_pass"] == 1.0 for r in judged)
    assert all(r["budget"] == "scenario" for r in judged)
    assert all(r["metrics"]["budget_violations"] == 0 for r in records)
