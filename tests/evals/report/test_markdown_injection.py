"""Every Markdown output with hostile data in every field a user can reach:
summary.md (a real run whose scenarios hold hostile item ids and tags, in a
suite with a hostile file name, then every label, spec, scenario, run and file
name replaced by a hostile string; and a replay report for the prompt-cache
section), the gate's pull-request comment and compare.md (every string of their
results hostile). Read back with a real Markdown parser, none has a raw HTML
node, a link or an image, and every hostile string reads whole from one
paragraph, item, heading or table cell: no extra cell or row, no new block."""

from __future__ import annotations

import glob
import json
from collections.abc import Iterator, Mapping
from itertools import count
from typing import Any

import pytest

from packproof.evals.compare.flips import Flip
from packproof.evals.compare.markdown import markdown as compare_markdown
from packproof.evals.compare.model import Change, Comparison, Side
from packproof.evals.compare.shared import Shared
from packproof.evals.gate.checks import (
    FAILED,
    MISSING,
    NOT_SIGNIFICANT,
    REGRESSED,
    Check,
    GateResult,
)
from packproof.evals.gate.known import KnownFailure
from packproof.evals.gate.markdown import render_markdown as gate_markdown
from packproof.evals.gate.ratchet import FIXED, KNOWN, NEW_FAILURE, STILL, CellGroup, Judgement
from packproof.evals.report.markdown import render_markdown
from packproof.evals.report.model import ReportContext
from packproof.evals.run.evaluate import evaluate
from packproof.evals.scenarios.compile import compile_sources, load_sources, write_compiled
from tests.evals.report.mdparse import HOSTILE, hostile, live_nodes, missing
from tests.evals.report.test_replay_report import report

SUITE = "s <b>`x`[a](b)"  # a file name may hold markup too
SCENARIOS = {
    "schema": "packproof.scenarios.v1",
    "defaults": {"request": {"fresh_tail": {"count": 1}}},
    "scenarios": [
        {
            "id": "hostile-ids-and-tags",
            "why": "Item ids and tags that are markup; the expectation fails to list them.",
            "tags": [f"t:{hostile(i)}" for i in range(len(HOSTILE))],
            "request": {
                "budget_tokens": 24,
                "prompt": "deploy branch?",
                "items": [
                    [hostile(i), "assistant", 4, f"deploy note {i}"] for i in range(len(HOSTILE))
                ]
                + [["q", "user", 2, "deploy branch?"]],
            },
            "relevant": [hostile(0), hostile(4)],
            "expect": {"*": {"selected": [hostile(2), hostile(12)]}},  # wrong on purpose
        }
    ],
}


def poisoned(data: Any, olds: list[str], numbers: Iterator[int]) -> tuple[Any, dict[str, str]]:
    """``data`` with every string equal to one of ``olds`` (keys too) replaced by a
    hostile string, the same one for the same old, so the summary stays whole."""
    table = {old: hostile(next(numbers)) for old in dict.fromkeys(olds)}

    def walk(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {table.get(k, k): walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return table.get(value, value) if isinstance(value, str) else value

    return walk(data), table


def assert_inert(markdown: str, values: list[str], ours: tuple[str, ...] = ()) -> None:
    """No raw HTML, link or image but ``ours``; every value read back whole."""
    assert live_nodes(markdown) == list(ours)
    assert missing(markdown, values) == []


@pytest.fixture(scope="module")
def run_summary(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("md")
    source = root / "scenarios" / f"{SUITE}.yaml"
    source.parent.mkdir(parents=True)
    source.write_text(json.dumps(SCENARIOS))  # JSON is YAML
    (compiled,) = write_compiled(compile_sources(load_sources([source])))
    config = root / "cfg.yaml"
    config.write_text(
        json.dumps(
            {
                "schema": "packproof.eval.v1",
                "name": "md",
                "suites": [glob.escape(str(compiled))],
                "strategies": ["chronological", "bm25", "hybrid"],
                "budgets": ["scenario", 16],
                "bootstrap": {"resamples": 100},
                "breakdown_tags": ["t:"],  # a column per tag, headed by the rest of it
            }
        )
    )
    run = evaluate(config, out_root=root / "reports", jobs=1, executor="serial", resume=False)
    summary: dict[str, Any] = json.loads((run / "summary.json").read_text("utf-8"))
    return summary


def test_summary_md_shows_hostile_ids_tags_and_file_names_as_text(
    run_summary: dict[str, Any],
) -> None:
    markdown = render_markdown(ReportContext(run_summary, [], {}))
    assert "## Failures: " in markdown and "## Evidence recall by t" in markdown
    assert_inert(markdown, [hostile(i) for i in range(len(HOSTILE))] + [f"{SUITE}.jsonl"])


def test_summary_md_shows_hostile_labels_scenarios_and_names_as_text(
    run_summary: dict[str, Any],
) -> None:
    m = run_summary["manifest"]
    olds = [s["label"] for s in run_summary["strategies"]]
    olds += [s["spec"] for s in run_summary["strategies"]]
    olds += [e["scenario"] for e in run_summary["failures"]["scenarios"]]
    olds += [f["key"] for f in run_summary["expectation_failures"]]
    olds += [m["name"], m["run_id"], m["config"]["file"], m["platform"], m["python"]]
    olds += [m["packproof_version"], *(x["file"] for x in m["suites"])]
    summary, table = poisoned(run_summary, olds, count(100))
    markdown = render_markdown(ReportContext(summary, [], {}))
    original = render_markdown(ReportContext(run_summary, [], {}))
    shown = [new for old, new in table.items() if old in original]
    assert len(shown) >= len(HOSTILE)  # every kind of attack is in the page
    assert_inert(markdown, shown)


def test_the_prompt_cache_section_shows_hostile_labels_and_profiles_as_text() -> None:
    summary = report()
    olds = [s["label"] for s in summary["strategies"]] + [s["spec"] for s in summary["strategies"]]
    olds += list(summary["replay"]["profiles"])
    olds += [p["source"] for p in summary["replay"]["profiles"].values()]
    poisoned_summary, table = poisoned(summary, olds, count(200))
    markdown = render_markdown(ReportContext(poisoned_summary, [], {}))
    assert "## Prompt-cache economics" in markdown
    assert_inert(markdown, list(table.values()))


class Hostile:
    """Hostile strings, one per field, and the ones the output must show whole
    (a field shown cut short, or not at all, is still hostile, but not expected)."""

    def __init__(self, start: int) -> None:
        self.numbers = count(start)
        self.shown: list[str] = []

    def __call__(self, shown: bool = True) -> str:
        value = hostile(next(self.numbers))
        if shown:
            self.shown.append(value)
        return value


def gate_result(new: Hostile) -> GateResult:
    """A failing gate result with every string it holds hostile."""
    test = {"mean": -0.1, "low": -0.2, "high": -0.05, "p_value": 0.01, "clusters": 9}
    checks = (
        Check(new(), new(), "evidence_recall", 0.8, 0.7, -0.1, 0.02, REGRESSED, test=test),
        Check(new(), new(), "hard_invariants", 0.0, 2.0, 2.0, 0.0, FAILED),
        Check(new(), new(), "*", None, None, None, None, MISSING),
        Check(new(), new(), "mrr", 0.5, 0.4, -0.1, 0.02, NOT_SIGNIFICANT, untested=new()),
        Check("*", "*", "expectation_failures", 1.0, 2.0, None, None, FAILED),
    )
    groups = (
        CellGroup(NEW_FAILURE, "expectations", new(), new(), new(), (0, 2), new(), new()),
        CellGroup(KNOWN, "hard_invariants", new(), new(), new(), (1,), new(), new()),
        CellGroup(STILL, "cell_failures", new(), new(), new(), (3,), new(), new(False), new()),
        CellGroup(FIXED, "expectations", new(), new(), new(), (0,), new(), new(False)),
    )
    stale = (KnownFailure(new(), new(False), label=new(), where=new()),)
    return GateResult(
        checks,
        header=(new(), new()),
        notes=(new(),),
        failures=(f"{new()}: {new()}",),
        alpha=0.05,
        confidence=0.95,
        cells=Judgement(groups=groups, stale=stale),
    )


def test_the_gate_comment_shows_every_hostile_string_as_text() -> None:
    new = Hostile(300)
    result = gate_result(new)
    markdown = gate_markdown(result)
    assert markdown.startswith("## ❌ packproof gate: FAILED\n")
    assert len(new.shown) >= len(HOSTILE)
    # the one HTML of the comment is its own: every check, collapsed
    details = f"html_block: <details><summary>Every check ({len(result.checks)})</summary>\n"
    assert_inert(markdown, new.shown, ours=(details, "html_block: </details>\n"))


def comparison(new: Hostile) -> Comparison:
    """A comparison with every string it holds hostile."""
    metric, budget, label = new(), new(), new()
    stat = {"mean": -0.2, "low": -0.3, "high": -0.1, "p_value": 0.01, "n": 8, "clusters": 4}

    def side(role: Any) -> Side:
        config = {"file": new(), "sha256": new(False)}  # shown cut to 12 characters
        path, run_id = new(), new()
        return Side(role, path, run_id, config, new(False), {new(): "a" * 64}, (label, new()))

    return Comparison(
        a=side("A"),
        b=side("B"),
        metrics=(metric,),
        budgets=(budget,),
        labels=(label,),
        alpha=0.05,
        confidence=0.95,
        resamples=100,
        seed=0,
        changes=(Change(label, budget, metric, 1, 0.8, 0.6, stat, "worse", True),),
        flips=(Flip(label, budget, new(), "pass", "fail", (new(), new(False))),),
        scenarios={"compared": 4, "pass_to_fail": 1, "fail_to_pass": 0, "failing_in_both": 0},
        shared=Shared(both=(new(False),), added=(new(),), removed=(new(),), changed=(new(),)),
        notes=(new(), new()),
    )


def test_compare_md_shows_every_hostile_string_as_text() -> None:
    new = Hostile(400)
    markdown = compare_markdown(comparison(new))
    assert markdown.startswith("# Compare: ")
    assert len(new.shown) >= len(HOSTILE)
    assert_inert(markdown, new.shown)
