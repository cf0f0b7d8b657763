"""``summary.md``: the report as Markdown. Its first line says PASSED or FAILED
(``# FAILED · packproof eval: <name>``), followed by the failing cells by class
and where they failed (status.py); then the verdict per budget (text.py says it
in words), then per budget every strategy's means with their
intervals (the best value in bold; arrows say which way is better), the oracle
ceiling and the paired differences; the ranking metrics that do not change with
the budget, once; the prompt-cache economics of replays; evidence recall by
tag; latency; the failures (every failing scenario marked ✗, then every
failing cell); and last the provenance (config, suites, canonical specs,
platform).

Every value from the data (ids, labels, tags, file names, commands, messages)
goes through md.py: :func:`~packproof.evals.report.md.code` in a code span, or
:func:`~packproof.evals.report.md.text`; a scenario file is a contributor's, and
this file is rendered wherever Markdown is."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from packproof.evals.report import md
from packproof.evals.report.failures import LISTED, describe
from packproof.evals.report.frame import tag_column
from packproof.evals.report.markdown_cache import cache_section
from packproof.evals.report.model import PAIRED, ReportContext
from packproof.evals.report.status import (
    CLASS_NAMES,
    TURNS_LISTED,
    budget_name,
    headline,
    turn_numbers,
    where,
    word,
)
from packproof.evals.report.text import (
    VERDICT_HEAD,
    Column,
    answer_ceiling,
    best_rows,
    budget_columns,
    budget_title,
    floor_note,
    fmt_p,
    fmt_stat,
    metric_name,
    plural,
    ranking_columns,
    spec_text,
    tag_recall,
    verdict_note,
    verdict_row,
)

__all__ = ["render_markdown"]


_fmt = fmt_stat


def _code(value: object) -> str:
    """A value from the data as code, outside a table."""
    return md.code(str(value))


def _value(column: Column, group: Mapping[str, Any]) -> str:
    value = column.read(group)
    if column.key == "expectations":
        return f"{value['passed']}/{value['total']}" if value["total"] else "–"
    if isinstance(value, int):
        return str(value)
    return _fmt(value)


def _table(columns: Sequence[Column], rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """A results table: one row per group, the best value of each column bold."""
    best = [best_rows(rows, c) for c in columns]
    lines = [
        "| strategy | " + " | ".join(c.heading for c in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for i, g in enumerate(rows):
        cells = [
            f"**{_value(c, g)}**" if i in best[k] else _value(c, g) for k, c in enumerate(columns)
        ]
        lines.append(f"| {md.cell(g['label'])} | " + " | ".join(cells) + " |")
    return lines


def _units_line(summary: Mapping[str, Any]) -> str:
    m = summary["manifest"]
    conf = round(summary["confidence"] * 100)
    return (
        f"Means with {conf}% percentile-bootstrap intervals ({m['bootstrap_resamples']} "
        f"resamples, seed {m['seed']}). Where a suite's cells cluster (the turns of one "
        "conversation), intervals resample whole conversations and tests pair "
        "conversations (sign-flip permutation); elsewhere they resample cells and pair "
        "cells (Wilcoxon signed-rank). ↑ higher is better, ↓ lower is better; the best "
        "value is in bold."
    )


def _paired(summary: Mapping[str, Any], budget: Any, metrics: Sequence[str]) -> list[str]:
    rows = [
        p for p in summary["paired"] if str(p["budget"]) == str(budget) and p["metric"] in metrics
    ]
    if not rows:
        return []
    lines = [
        "Paired differences (strategy - against; the cells both have a value for):",
        "",
        "| strategy | against | metric | difference (cells) | p (Wilcoxon) "
        "| difference (conversations) | p (sign-flip) | cells | conversations |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in rows:
        c = p.get("cluster")
        lines.append(
            f"| {md.cell(p['label'])} | {md.cell(p['against_label'])} ({md.or_dash(p['why'])}) | "
            f"{md.or_dash(metric_name(p['metric']))} | {_fmt(p)} | {p['p_value']:.3g} | "
            f"{_fmt(c) if c else '–'} | {fmt_p(c)} "
            f"| {p['n']} | {c['clusters'] if c else '–'} |"
        )
    return [*lines, ""]


def _by_tag(summary: Mapping[str, Any]) -> list[str]:
    rows = summary.get("breakdown") or []
    if not rows:
        return []
    lines = []
    prefixes = summary.get("breakdown_tags") or [""]
    for prefix in prefixes:
        tags = sorted({b["tag"] for b in rows if b["tag"].startswith(prefix)})
        if not tags:
            continue
        name = tag_column(prefix) if prefix else "tag"
        lines += [f"## Evidence recall by {md.or_dash(name)}", ""]
        for budget in summary["budgets"]:
            here = [b for b in rows if str(b["budget"]) == str(budget) and b["tag"] in tags]
            if not here:
                continue
            lines += [
                f"### {md.or_dash(budget_title(budget))}",
                "",
                "| strategy | " + " | ".join(md.or_dash(t[len(prefix) :]) for t in tags) + " |",
                "|---|" + "---|" * len(tags),
            ]
            for s in summary["strategies"]:
                cell = {b["tag"]: b for b in here if b["spec"] == s["spec"]}
                lines.append(
                    f"| {md.cell(s['label'])} | "
                    + " | ".join(
                        f"{_fmt(tag_recall(cell[t]))} (n={cell[t]['cells']})" if t in cell else "–"
                        for t in tags
                    )
                    + " |"
                )
            lines.append("")
    return lines


def failures_section(summary: Mapping[str, Any]) -> list[str]:
    """The failing cells: the same count as junit.xml's failures and as the
    exit code of ``packproof eval`` (failures.py), by class, then each one."""
    tally = summary.get("failures")
    fails = summary["expectation_failures"]
    judged = sum(g["expectations"]["total"] for g in summary["groups"])
    if tally is None:  # a summary written before failures were counted
        return [f"## Expectation failures: {len(fails)}", ""]
    lines = [f"## Failures: {tally['cells']}", ""]
    if tally["cells"]:
        lines += [
            f"{md.or_dash(describe(tally))}; junit.xml has the same {tally['cells']} failed cases.",
            "",
        ]
    elif not judged:
        lines += [
            "No cell failed or broke a hard invariant; none was judged against expectations.",
            "",
        ]
    else:
        lines += [
            f"Every one of the {judged} judged cells met its expectations, and no cell "
            "failed or broke a hard invariant.",
            "",
        ]
    lines += _failing_scenarios(tally.get("scenarios", []))
    listed = tally.get("listed", [])
    lines += [f"- {_code(f['key'])}: {md.or_dash('; '.join(f['problems']))}" for f in listed]
    if len(listed) < tally["cells"] - tally["expectations"]:
        lines.append("- ... (summary.json lists the first ones)")
    return lines


def _failing_scenarios(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every failing scenario, marked, by strategy, budget and failure class."""
    if not entries:
        return []
    lines = [
        f"Failing scenarios: {len({e['scenario'] for e in entries})} (turns from 0, as in "
        "the cell keys):",
        "",
        "| | scenario | strategy | budget | failed | turns |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| ✗ FAILED | {md.cell(e['scenario'])} | {md.cell(e['label'])} "
        f"| {budget_name(str(e['budget']), md.cell)} | {CLASS_NAMES[e['class']]} "
        f"| {turn_numbers(e['turns'], TURNS_LISTED)} |"
        for e in entries[:LISTED]
    ]
    if len(entries) > LISTED:
        lines.append(f"| | ... and {len(entries) - LISTED} more (summary.json lists all) | | | | |")
    return [*lines, ""]


def _status(summary: Mapping[str, Any]) -> list[str]:
    """PASSED or FAILED with the failing cells by class, and where they failed."""
    status = word(summary)
    lines = [f"**{status}**: {md.or_dash(headline(summary))}.", ""]
    places = where(summary, _code)
    if places:
        lines += [*(f"- ✗ {line}" for line in places), ""]
        lines += ['"Failures" below lists the failing scenarios and cells.', ""]
    return lines


def _provenance(summary: Mapping[str, Any]) -> list[str]:
    m = summary["manifest"]
    config = m.get("config") or {}
    labels = {s["spec"]: s["label"] for s in summary["strategies"]}
    lines = [
        "## Provenance",
        "",
        f"- run {_code(m.get('run_id', '?'))}; packproof {md.or_dash(m['packproof_version'])}, "
        f"commit {_code(m['git_commit'] or '?')}; Python {md.or_dash(m.get('python', '?'))} on "
        f"{md.or_dash(m.get('platform', '?'))}",
        f"- config {_code(config.get('file', '?'))} (sha256 {_code(config.get('sha256', '?'))})",
        f"- baseline {_code(labels[summary['baseline']])}",
    ]
    lines += [
        f"- suite {_code(x.get('file', '?'))} (sha256 {_code(x.get('sha256', '?'))})"
        for x in m["suites"]
    ]
    lines += ["", "| strategy | canonical spec |", "|---|---|"]
    lines += [f"| {md.cell(s['label'])} | {md.cell(spec_text(s))} |" for s in summary["strategies"]]
    return [*lines, ""]


def render_markdown(ctx: ReportContext) -> str:
    """summary.md (see the module docstring for its order)."""
    summary = ctx.summary
    m = summary["manifest"]
    invariant = summary.get("budget_invariant", [])
    lines = [
        f"# {word(summary)} · packproof eval: {md.or_dash(m['name'])}",
        "",
        *_status(summary),
        f"{summary['cells']} cells: {len(summary['strategies'])} strategies, "
        f"{len(summary['budgets'])} budgets, {plural(len(m['suites']), 'suite')}. "
        + _units_line(summary),
        "",
        "## Verdict",
        "",
    ]
    verdicts = summary.get("verdict", [])
    lines += [
        "| " + " | ".join(VERDICT_HEAD) + " |",
        "|---" * len(VERDICT_HEAD) + "|",
        *("| " + " | ".join(verdict_row(v, md.cell)) + " |" for v in verdicts),
        "",
        verdict_note(verdicts),
        "",
    ]
    note = floor_note(verdicts)
    if note:
        lines += [note, ""]
    columns = budget_columns(summary)
    for budget in summary["budgets"]:
        rows = [g for g in summary["groups"] if str(g["budget"]) == str(budget)]
        lines += [f"## {md.or_dash(budget_title(budget).capitalize())}", "", *_table(columns, rows)]
        oracle = next(
            (g["metrics"]["oracle_recall"] for g in rows if g["metrics"]["oracle_recall"]), None
        )
        lines += ["", f"Oracle ceiling (best achievable evidence recall): {_fmt(oracle)}", ""]
        first = budget == summary["budgets"][0]
        lines += _paired(summary, budget, [m for m in PAIRED if first or m not in invariant])
    ranking = ranking_columns(summary)
    if ranking:
        first = summary["budgets"][0]
        rows = [g for g in summary["groups"] if str(g["budget"]) == str(first)]
        lines += [
            "## Ranking quality (the same at every budget)",
            "",
            "Over the evictable candidates only (the fresh tail and the anchors are kept "
            "whatever the strategy; `packproof docs metrics`).",
            "",
            *_table(ranking, rows),
            "",
        ]
    ceiling = answer_ceiling(summary)
    if ceiling:
        lines += [
            f"Answer-token ceiling (the gold answers' content words present anywhere in the "
            f"conversation): {_fmt(ceiling)}",
            "",
        ]
    if summary.get("replay"):
        lines += cache_section(summary["replay"])
    lines += _by_tag(summary)
    lines += [
        "## Latency (per cell; differs run to run)",
        "",
        "| strategy | p50 ms | p95 ms |",
        "|---|---|---|",
    ]
    for label, lat in summary["run"]["latency"].items():
        lines.append(f"| {md.cell(label)} | {lat['p50_ms']:.3f} | {lat['p95_ms']:.3f} |")
    lines += ["", *failures_section(summary)]
    fails = summary["expectation_failures"]
    lines += [f"- {_code(f['key'])}: {md.or_dash('; '.join(f['failures']))}" for f in fails[:50]]
    if len(fails) > 50:
        lines.append(f"- ... and {len(fails) - 50} more (summary.json lists all)")
    lines += ["", *_provenance(summary)]
    return "\n".join(lines).rstrip() + "\n"
