"""junit.xml: one test case per scenario expectation, counts that add up, a
``<failure>`` for a failed expectation, markup escaped, deterministic bytes."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from packproof.evals.report.junit import render_junit
from packproof.evals.report.model import ReportContext, order_records
from packproof.evals.report.renderers import RENDERERS
from packproof.evals.run.config import load_config
from packproof.evals.run.evaluate import evaluate
from packproof.evals.run.journal import read_results
from packproof.evals.run.runner import tasks
from tests.evals.run.test_runner import write_config


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ReportContext]:
    """A tiny eval's run directory and the context its reports were rendered from."""
    tmp = tmp_path_factory.mktemp("eval")
    cfg = write_config(
        tmp,
        name="junit-test",
        strategies=["chronological", "bm25(stopwords=english)"],
        budgets=["scenario", 16],
        bootstrap={"resamples": 100},
    )
    run_dir = evaluate(cfg, out_root=tmp / "reports", jobs=1, executor="serial", resume=False)
    loaded = load_config(cfg)
    summary = json.loads((run_dir / "summary.json").read_text("utf-8"))
    records = order_records(
        read_results(run_dir / "results.jsonl.gz"), loaded.specs, loaded.budgets
    )
    scenarios = {t.scenario.id: t.scenario for t in tasks(loaded)}
    return run_dir, ReportContext(summary, records, scenarios)


def cases(root: ET.Element) -> list[ET.Element]:
    return root.findall("./testsuite/testcase")


def with_failure(ctx: ReportContext, failures: list[str]) -> tuple[ReportContext, dict[str, Any]]:
    """``ctx`` with the first expectation record turned into a failure."""
    records = copy.deepcopy(list(ctx.records))
    record = next(
        r
        for r in records
        if r["budget"] == "scenario" and r["metrics"]["expectation_pass"] is not None
    )
    record["metrics"]["expectation_pass"] = 0.0
    record["failures"] = failures
    return ReportContext(ctx.summary, records, ctx.scenarios), record


def test_registered_and_written_with_the_other_reports(run: tuple[Path, ReportContext]) -> None:
    run_dir, ctx = run
    assert "junit.xml" in RENDERERS
    text = (run_dir / "junit.xml").read_text("utf-8")
    assert text == render_junit(ctx) == render_junit(ctx)  # deterministic bytes
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    assert "time=" not in text and "timestamp" not in text


def test_counts_match_the_expectations(run: tuple[Path, ReportContext]) -> None:
    _, ctx = run
    root = ET.fromstring(render_junit(ctx))
    expected = [
        r
        for r in ctx.records
        if r["budget"] == "scenario" and r["metrics"]["expectation_pass"] is not None
    ]
    total = sum(g["expectations"]["total"] for g in ctx.summary["groups"])
    assert root.tag == "testsuites"
    assert int(root.get("tests", "")) == len(cases(root)) == len(expected) == total > 0
    assert root.get("failures") == "0" and not root.findall(".//failure")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["conversations", "lossless-claw"]
    for suite in suites:
        inside = suite.findall("testcase")
        assert int(suite.get("tests", "")) == len(inside) > 0
        assert {c.get("classname") for c in inside} == {suite.get("name")}
        assert suite.get("failures") == "0"


def test_case_names(run: tuple[Path, ReportContext]) -> None:
    _, ctx = run
    found = [
        (c.get("classname"), c.get("name", "")) for c in cases(ET.fromstring(render_junit(ctx)))
    ]
    names = [n for _, n in found]
    assert len(names) == len(set(names))
    # a conversation's turn is named; labels, not full specs, in brackets
    assert any("#1[chronological]" in n for n in names)
    assert any(n.endswith("[bm25(stopwords=english)]") for n in names)
    assert not any("stem=none" in n for n in names)
    single = [n for suite, n in found if suite == "lossless-claw"]  # one turn each
    assert single and all("#" not in n for n in single)


def test_failed_expectation_is_a_failure_element(run: tuple[Path, ReportContext]) -> None:
    _, ctx = run
    failing, record = with_failure(
        ctx, ["selected ['a'], expected ['b']", "mode budget, expected x"]
    )
    root = ET.fromstring(render_junit(failing))
    assert root.get("failures") == "1"
    suite = next(s for s in root.findall("testsuite") if s.get("name") == record["suite"])
    assert suite.get("failures") == "1"
    (case,) = [c for c in cases(root) if c.find("failure") is not None]
    assert case.get("classname") == record["suite"]
    assert case.get("name", "").startswith(record["scenario"])
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("message") == "selected ['a'], expected ['b']; mode budget, expected x"
    assert failure.text == "selected ['a'], expected ['b']\nmode budget, expected x"


def test_markup_in_messages_is_escaped(run: tuple[Path, ReportContext]) -> None:
    _, ctx = run
    nasty = 'n1: reasons ["<b>&amp;</b>"] lack [\'x\']]]> "quoted" \x07bell'
    failing, _ = with_failure(ctx, [nasty])
    text = render_junit(failing)
    assert "<b>" not in text and "]]>" not in text
    root = ET.fromstring(text)  # still well-formed XML
    (failure,) = root.findall(".//failure")
    expected = nasty.replace("\x07", "\\u0007")  # XML 1.0 cannot carry C0 controls
    assert failure.get("message") == expected
    assert failure.text == expected
