"""The report's model from the cells' DataFrame: cluster statistics against
brute force, the typed frame and ``load_run``, the aggregation by hand, the
budget-invariant metrics, the verdict and the config's ``compare`` pairs."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from packproof.evals import load_run
from packproof.evals.report.aggregate import Stats, budget_invariant, compare, groups
from packproof.evals.report.frame import cells_frame
from packproof.evals.report.model import METRICS, build_report
from packproof.evals.report.stats import cluster_ci, cluster_paired, clustered
from packproof.evals.report.text import VERDICT_HEAD, floor_note, verdict_row
from packproof.evals.report.verdict import verdicts
from packproof.evals.run.config import load_config
from packproof.packer.errors import InputError

STATS = Stats(resamples=999, confidence=0.95, seed=0)


def sign_flip_p(means: list[float]) -> float:
    """Two-sided exact sign-flip p by enumeration, as scipy defines it:
    2 * min(P(T >= t), P(T <= t)), capped at 1."""
    t = float(np.mean(means))
    null = [
        float(np.mean([s * m for s, m in zip(signs, means, strict=True)]))
        for signs in itertools.product((1, -1), repeat=len(means))
    ]
    eps = 1e-12
    ge = sum(x >= t - eps for x in null) / len(null)
    le = sum(x <= t + eps for x in null) / len(null)
    return min(1.0, 2 * min(ge, le))


def test_five_conversations_cannot_go_below_0_0625() -> None:
    clusters = np.repeat(np.array(["a", "b", "c", "d", "e"], dtype=object), 40)
    a = np.full(200, 0.9)
    b = np.full(200, 0.1)
    out = cluster_paired(a, b, clusters, 999, 0.95, 0)
    assert out is not None
    assert out["p_value"] == pytest.approx(0.0625)
    assert out["clusters"] == 5 and out["n"] == 200
    assert out["mean"] == pytest.approx(0.8)


@pytest.mark.parametrize(
    "means", [[1.0, 2.0, -0.5, 3.0, 1.0], [0.2, -0.1, 0.05, -0.3], [1.0, 1.0, -1.0]]
)
def test_the_cluster_test_is_the_exact_sign_flip_test(means: list[float]) -> None:
    # two cells per cluster, each cluster's cells averaging its mean
    clusters = np.repeat(np.arange(len(means)).astype(str).astype(object), 2)
    diff = np.repeat(np.array(means), 2) + np.tile([0.1, -0.1], len(means))
    out = cluster_paired(diff, np.zeros_like(diff), clusters, 999, 0.95, 0)
    assert out is not None
    assert out["p_value"] == pytest.approx(sign_flip_p(means))


def test_no_difference_anywhere_is_p_1() -> None:
    clusters = np.array(["a", "a", "b"], dtype=object)
    out = cluster_paired(np.ones(3), np.ones(3), clusters, 999, 0.95, 0)
    assert out is not None and out["p_value"] == 1.0 and out["low"] == out["high"] == 0.0


def test_the_cluster_interval_resamples_clusters() -> None:
    rng = np.random.default_rng(3)
    # 6 clusters whose levels differ a lot, 50 near-identical cells each: the cell
    # bootstrap sees 300 values, the cluster bootstrap 6; its interval is wider
    levels = rng.random(6)
    values = np.repeat(levels, 50) + rng.normal(0, 0.01, 300)
    clusters = np.repeat(np.arange(6).astype(str).astype(object), 50)
    from packproof.evals.report.stats import mean_ci

    cell = mean_ci(values, 999, 0.95, 0)
    cluster = cluster_ci(values, clusters, 999, 0.95, 0)
    assert cell is not None and cluster is not None
    assert cluster["mean"] == pytest.approx(values.mean())
    assert cluster["low"] <= cluster["mean"] <= cluster["high"]
    assert cluster["high"] - cluster["low"] > 3 * (cell["high"] - cell["low"])
    # the interval lies within the cluster means' range (a mean of cluster means)
    assert levels.min() - 0.01 <= cluster["low"] and cluster["high"] <= levels.max() + 0.01


def test_equal_cluster_means_and_one_cluster_are_degenerate() -> None:
    one = cluster_ci(np.array([0.2, 0.4]), np.array(["a", "a"], dtype=object), 999, 0.95, 0)
    assert one == {
        "mean": pytest.approx(0.3),
        "low": pytest.approx(0.3),
        "high": pytest.approx(0.3),
        "n": 2,
        "clusters": 1,
    }
    assert not clustered(np.array(["a", "b", "c"], dtype=object))
    assert clustered(np.array(["a", "b", "a"], dtype=object))


def record(
    scenario: str,
    turn: int,
    spec: str,
    budget: Any,
    *,
    tags: tuple[str, ...] = (),
    **metrics: Any,
) -> dict[str, Any]:
    base = {
        "evidence_recall": None,
        "expectation_pass": None,
        "ndcg@10": None,
        "tail_lost": 0,
        "tokens_used": 10,
        "prefix_stability": None,
        "prefix_stability_tokens": None,
    }
    return {
        "key": f"s/{scenario}#{turn}|{spec}|{budget}",
        "suite": "s",
        "scenario": scenario,
        "turn": turn,
        "tags": list(tags),
        "strategy": spec,
        "spec": spec,
        "budget": budget,
        "budget_tokens": 100 if budget == "scenario" else budget,
        "status": "ok",
        "mode": "full-fit",
        "selected": [],
        "failures": [],
        "latency_ms": 0.1,
        "metrics": {**base, **metrics},
    }


LABELS = {"a": "a", "b": "b", "c": "c"}


def test_the_frame_is_typed_and_in_config_order() -> None:
    records = [
        record("x", 0, "b", 64, tags=("category:temporal",), evidence_recall=0.5),
        record("x", 0, "a", 64, tags=("category:temporal", "category:z"), evidence_recall=1.0),
        record("y", 0, "a", "scenario", evidence_recall=None, tail_lost=1),
    ]
    frame = cells_frame(
        records,
        specs=["a", "b"],
        labels=LABELS,
        budgets=["scenario", 64],
        breakdown_tags=["category:"],
    )
    assert list(frame["spec"].cat.categories) == ["a", "b"] and frame["spec"].cat.ordered
    assert list(frame["budget"].cat.categories) == ["scenario", 64]
    assert str(frame["evidence_recall"].dtype) == "float64"
    assert np.isnan(frame["evidence_recall"].iloc[2])
    assert str(frame["tail_lost"].dtype) == "Int64" and str(frame["tokens_used"].dtype) == "Int64"
    assert str(frame["turn"].dtype) == "int64"
    assert frame["category"].tolist()[:2] == ["temporal", "temporal"]
    assert frame["category"].isna().iloc[2]
    assert frame["cluster"].tolist() == ["s/x", "s/x", "s/y"]
    means = frame.groupby(["label", "budget"], observed=True)["evidence_recall"].mean()
    assert means[("a", 64)] == 1.0 and means[("b", 64)] == 0.5


def conversation(values: dict[str, list[float]], budget: Any = 64) -> list[dict[str, Any]]:
    """One record per (spec, scenario, turn): values[spec] lists recall per
    cell, scenarios of two turns each."""
    out = []
    for spec, recalls in values.items():
        for i, r in enumerate(recalls):
            out.append(record(f"c{i // 2}", i % 2, spec, budget, evidence_recall=r))
    return out


def test_groups_by_hand() -> None:
    records = [
        record("c0", 0, "a", 64, evidence_recall=1.0, expectation_pass=1.0, prefix_stability=None),
        record("c0", 1, "a", 64, evidence_recall=0.0, expectation_pass=0.0, prefix_stability=0.5),
        record("c0", 2, "a", 64, evidence_recall=0.5, prefix_stability=1.0, tail_lost=2),
        record("c1", 0, "a", 64, evidence_recall=1.0, prefix_stability=None),
        record("c1", 1, "a", 64, evidence_recall=1.0, prefix_stability=0.0),
    ]
    frame = cells_frame(records, specs=["a"], labels=LABELS, budgets=[64])
    (g,) = groups(frame, LABELS, METRICS, STATS)
    assert g["cells"] == 5
    assert g["metrics"]["evidence_recall"]["mean"] == pytest.approx(0.7)
    assert g["cluster"]["evidence_recall"]["clusters"] == 2
    assert g["expectations"] == {"passed": 1, "total": 2}
    assert g["hard_invariants"]["tail_lost"] == 2
    # per conversation (c0: 0.75, c1: 0.0), then across: 0.375 (not the turn mean 0.5)
    assert g["prefix_stability"]["mean"] == pytest.approx(0.375)
    assert g["prefix_stability"]["n"] == 2


def test_compare_pairs_cells_and_clusters() -> None:
    records = conversation({"a": [1, 1, 1, 0, 1, 1], "b": [0, 0, 1, 0, 0, 1]})
    frame = cells_frame(records, specs=["a", "b"], labels=LABELS, budgets=[64])
    (row,) = compare(frame, [("a", "b", "config")], 64, ["evidence_recall"], LABELS, STATS)
    assert row["mean"] == pytest.approx(3 / 6) and row["n"] == 6 and row["unit"] == "cell"
    assert row["against"] == "b" and row["why"] == "config"
    # conversation mean differences: c0 1.0, c1 0.0, c2 0.5 -> exact sign flip
    assert row["cluster"]["clusters"] == 3
    assert row["cluster"]["p_value"] == pytest.approx(sign_flip_p([1.0, 0.0, 0.5]))


def test_a_metric_is_budget_invariant_only_when_every_cell_agrees() -> None:
    records = []
    for budget in (16, 64):
        records.append(record("x", 0, "a", budget, **{"ndcg@10": 0.5}, evidence_recall=budget / 64))
        records.append(record("y", 0, "a", budget, **{"ndcg@10": 0.25}, mrr=budget / 64))
    frame = cells_frame(records, specs=["a"], labels=LABELS, budgets=[16, 64])
    assert budget_invariant(frame, [16, 64]) == ["ndcg@10"]
    assert budget_invariant(frame.iloc[:2], [16]) == []  # one budget: nothing to fold


def group(spec: str, recall: float, stability: float | None, budget: Any = 64) -> dict[str, Any]:
    stat = {"mean": recall, "low": recall, "high": recall, "n": 4}
    stab = (
        None
        if stability is None
        else {"mean": stability, "low": stability, "high": stability, "n": 2}
    )
    return {
        "spec": spec,
        "label": spec.upper(),
        "budget": budget,
        "metrics": {
            "evidence_recall": stat,
            "tokens_used": {"mean": 50.0, "low": 50.0, "high": 50.0, "n": 4},
        },
        "prefix_stability": stab,
        "prefix_stability_tokens": stab,
    }


def test_the_verdict_by_hand() -> None:
    rows = [
        group("base", 0.2, 0.9),
        group("best", 0.8, 0.1),
        group("tie", 0.8, 0.3),  # ties with best: config order keeps best first
        group("cheap", 0.75, 0.6),  # within 90% of 0.8 (0.72) and the most stable there
        group("far", 0.7, 0.95),  # most stable of all, but below 90%
    ]
    calls = []

    def paired(a: str, b: str, metric: str, budget: Any) -> dict[str, Any]:
        calls.append((a, b))
        return {
            "mean": 0.1,
            "low": 0.0,
            "high": 0.2,
            "n": 8,
            "p_value": 0.5,
            "cluster": {
                "mean": 0.1,
                "low": -0.1,
                "high": 0.3,
                "n": 8,
                "clusters": 5,
                "p_value": 0.0625,
            },
        }

    (v,) = verdicts(rows, budgets=[64], baseline="base", paired=paired, replay=None)
    assert v["best"]["spec"] == "best" and v["runner_up"]["spec"] == "tie"
    assert v["baseline"]["spec"] == "base"
    assert calls == [("best", "tie"), ("best", "base")]
    assert v["runner_up"]["difference"]["unit"] == "conversation"
    assert v["runner_up"]["difference"]["n"] == 5
    assert v["cost_basis"] == "uncached_share"
    assert v["cheapest_within_90"]["spec"] == "cheap"
    assert v["cheapest_within_90"]["cost"] == pytest.approx(0.4)
    cells = verdict_row(v, lambda label: f"`{label}`")
    assert len(cells) == len(VERDICT_HEAD) and "`CHEAP`" in cells[-1]
    assert "p = 0.0625" in cells[2]
    note = floor_note([v])
    assert note is not None and "0.0625" in note
    # without conversations, the cost is the tokens packed
    (v,) = verdicts(
        [group("a", 0.5, None), group("b", 0.5, None)],
        budgets=[64],
        baseline="a",
        paired=paired,
        replay=None,
    )
    assert v["cost_basis"] == "tokens_used" and v["baseline"] is None


def test_build_report_compares_baseline_best_and_config_pairs() -> None:
    records = conversation({"a": [1, 0, 1, 0], "b": [1, 1, 1, 1], "c": [0, 0, 1, 1]})
    summary = report(records, ["a", "b", "c"], compare=[("c", "b"), ("b", "c")])
    pairs = [
        (p["spec"], p["against"], p["why"])
        for p in summary["paired"]
        if p["metric"] == "evidence_recall"
    ]
    # each spec against the baseline, then against the best (b), then the config's
    # pairs; a pair already made either way round is not repeated
    assert pairs == [("b", "a", "baseline"), ("c", "a", "baseline"), ("c", "b", "best")]
    assert summary["verdict"][0]["best"]["spec"] == "b"


def write_run(tmp: Path, records: list[dict[str, Any]], **summary: Any) -> Path:
    run = tmp / "run"
    run.mkdir()
    (run / "summary.json").write_text(
        json.dumps(
            {
                "strategies": [{"spec": "a", "label": "A"}, {"spec": "b", "label": "B"}],
                "budgets": [64],
                **summary,
            }
        )
    )
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return run


def test_load_run_reads_a_run_folder(tmp_path: Path) -> None:
    records = conversation({"b": [1, 0], "a": [0.5, 0.5]})
    run = write_run(tmp_path, records, breakdown_tags=[])
    frame = load_run(run)
    assert frame["label"].tolist() == ["A", "B", "A", "B"]  # cell-key order
    assert frame["evidence_recall"].tolist() == [0.5, 1.0, 0.5, 0.0]


def test_load_run_refuses_what_is_not_a_complete_run(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"cannot read summary\.json"):
        load_run(tmp_path)
    run = write_run(tmp_path, [])
    (run / "INCOMPLETE").write_text("")
    with pytest.raises(InputError, match="has not finished"):
        load_run(run)
    (run / "INCOMPLETE").unlink()
    (run / "results.jsonl").write_text("{not json\n")
    with pytest.raises(InputError, match="line 1"):
        load_run(run)


def config_file(tmp: Path, compare: str) -> Path:
    suite = tmp / "s.jsonl"
    suite.write_text("")
    path = tmp / "c.yaml"
    path.write_text(
        "schema: packproof.eval.v1\nsuites: [s.jsonl]\n"
        "strategies: [chronological, bm25, 'hybrid(w_usage=0)']\n" + compare
    )
    return path


def test_compare_pairs_resolve_by_spec_or_label(tmp_path: Path) -> None:
    config = load_config(config_file(tmp_path, "compare: [[bm25, 'hybrid(w_usage=0)']]\n"))
    ((a, b),) = config.compare
    assert a.startswith("bm25(") and b.startswith("hybrid(") and "w_usage=0" in b


@pytest.mark.parametrize(
    ("compare", "needle"),
    [
        ("compare: [[bm25, clarity]]\n", "/compare/0/1"),
        ("compare: [[bm25, bm25]]\n", "compares"),
        ("compare: [[bm25]]\n", "/compare/0"),
    ],
)
def test_bad_compare_pairs_are_one_line(tmp_path: Path, compare: str, needle: str) -> None:
    with pytest.raises(InputError) as exc:
        load_config(config_file(tmp_path, compare))
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def report(records: list[dict[str, Any]], specs: list[str], **kwargs: Any) -> dict[str, Any]:
    return build_report(
        records,
        specs=specs,
        labels=LABELS,
        budgets=[64],
        baseline="a",
        resamples=999,
        confidence=0.95,
        seed=0,
        manifest={
            "name": "t",
            "packproof_version": "0",
            "git_commit": None,
            "suites": [],
            "bootstrap_resamples": 999,
            "seed": 0,
            "run_id": "r",
        },
        run={"executor": "serial", "jobs": 1},
        **kwargs,
    )


def small_report() -> dict[str, Any]:
    return report(conversation({"a": [1, 0, 1, 0], "b": [1, 1, 1, 1]}), ["a", "b"])


def test_summary_md_leads_with_passed_then_the_verdict_and_ends_with_provenance() -> None:
    from packproof.evals.report.markdown import render_markdown
    from packproof.evals.report.model import ReportContext

    text = render_markdown(ReportContext(small_report(), [], {}))
    lines = text.splitlines()
    assert lines[0] == "# PASSED · packproof eval: t"
    assert lines[2] == (
        "**PASSED**: no cell failed or broke a hard invariant "
        "(none was judged against expectations)."
    )
    heads = [line for line in lines if line.startswith("## ")]
    assert heads[0] == "## Verdict" and heads[-1] == "## Provenance"
    assert text.index("| budget 64 tokens | `b`: evidence recall 1.000") > 0
    # the best value of a column is bold, and the direction is in the heading
    assert "evidence recall ↑" in text and "**1.000**" in text and "regret ↓" in text
    # no expectation was judged: the report does not claim that every one held
    assert "none was judged against expectations." in text
    assert "every one of" not in text.lower()


def test_report_html_leads_with_passed_then_the_verdict_and_highlights_the_best() -> None:
    from packproof.evals.report.html.page import render_html
    from packproof.evals.report.model import ReportContext

    page = render_html(ReportContext(small_report(), [], {}))
    assert "<title>PASSED · packproof eval: t</title>" in page
    body = page.split("<body>", 1)[1]
    assert body.index('<span class="badge passed">PASSED</span>') < body.index('id="status"')
    assert page.index('id="status"') < page.index('id="verdict"') < page.index('id="plots"')
    assert page.index('id="plots"') < page.index('id="run"')
    assert '<td class="num best">1.000' in page
    assert "evidence recall ↑" in page
    assert "none was judged against expectations." in page
