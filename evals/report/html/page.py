"""``report.html``: the whole eval report as one self-contained, offline page.

Inline CSS, the plots embedded as ``data:`` PNG images, no JavaScript and no
external resource (a Content-Security-Policy forbids both, as a second line of
defence). Every piece of text that comes from data (ids, whys, prompts, item
texts, failure messages, strategy labels, manifest fields) goes through
:func:`html.escape`, so an item holding ``<script>`` is shown, never run.
The same report gives the same bytes.

The page leads with the answer: PASSED or FAILED (the failing cells by class
and where they failed, linked to the scenario drill-down, where each failing
scenario is marked), the verdict per budget, then the plots (those with data), the
results per budget, the ranking metrics, the prompt-cache economics, the tags,
latency, failures and the scenario drill-down; the provenance (manifest,
canonical specs, suites) comes last. This module lays out the page and its
verdict, plots, latency, failures and provenance; base.py holds the
building blocks they share (stylesheet, escaping, tables), results.py the
results tables, cache.py the prompt-cache economics of replays (with
``frontier.png``) and scenarios.py the scenario drill-down.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any, Final

from packproof.evals.report.failures import LISTED, describe
from packproof.evals.report.html.base import _breakable, _cell, _e, _head, _ms, _Page, _table
from packproof.evals.report.html.cache import ANCHOR, cache_section
from packproof.evals.report.html.results import anchor, budget_section, by_tag, ranking_section
from packproof.evals.report.html.scenarios import scenarios_section
from packproof.evals.report.model import ReportContext
from packproof.evals.report.plots.base import run_colours
from packproof.evals.report.plots.frontier import frontier
from packproof.evals.report.plots.latency import latency
from packproof.evals.report.plots.recall import recall_vs_budget, recall_vs_stability
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
    floor_note,
    plural,
    spec_text,
    verdict_note,
    verdict_row,
)

__all__ = ["MAX_FAILURES", "render_html"]

MAX_FAILURES: Final = 500  # expectation failures listed (summary.json has all)


def _top(page: _Page, plots: bool) -> str:
    """The title with PASSED or FAILED, where it failed, what the run is, the
    navigation (``plots``: whether the page has any) and the verdict per budget."""
    s = page.summary
    m = s["manifest"]
    conf = round(float(s["confidence"]) * 100)
    verdicts = s.get("verdict", [])
    note = floor_note(verdicts)
    status = word(s)
    out = [
        "<header>",
        f'<h1><span class="badge {_CLASS[status]}">{status}</span> '
        f"packproof eval: {_e(m.get('name', '?'))}</h1>",
        _status(page),
        f'<p class="lead">{_e(s["cells"])} cells, {len(s["strategies"])} strategies, '
        f"{len(s['budgets'])} budgets, {plural(len(m.get('suites', [])), 'suite')}. "
        f"Means with {conf}% bootstrap intervals; where a suite's cells cluster (the turns "
        "of one conversation), intervals resample conversations and tests pair "
        "conversations. ↑ higher is better, "
        "↓ lower is better; the best value is highlighted.</p>",
        _nav(page, plots),
        "</header>",
        '<section id="verdict">',
        "<h2>Verdict</h2>",
    ]
    out.append(
        _table(
            [_e(h) for h in VERDICT_HEAD],
            (verdict_row(v, page.strategy) for v in verdicts),
            "verdict",
        )
    )
    out.append(f'<p class="note">{_e(verdict_note(verdicts))}</p>')
    if note:
        out.append(f'<p class="note">{_e(note)}</p>')
    out.append("</section>")
    return "\n".join(out)


_CLASS: Final = {"PASSED": "passed", "FAILED": "failed"}


def _status(page: _Page) -> str:
    """PASSED or FAILED with the failing cells by class, and where they failed."""
    s = page.summary
    status = word(s)
    out = [
        f'<div class="status {_CLASS[status]}" id="status">',
        f"<p><strong>{status}</strong>: {_e(headline(s))}.</p>",
    ]
    places = where(s, page.strategy, page.scenario)
    if places:
        out += ["<ul>", *(f"<li>✗ {line}</li>" for line in places), "</ul>"]
        out.append(
            '<p class="muted"><a href="#failures">Failures</a> lists the failing scenarios '
            'and cells; <a href="#scenarios">Scenarios</a> marks each failing one.</p>'
        )
    out.append("</div>")
    return "\n".join(out)


def _failing_scenarios(page: _Page) -> str:
    """Every failing scenario, marked and linked, by strategy, budget and class."""
    entries = (page.summary.get("failures") or {}).get("scenarios", [])
    if not entries:
        return ""
    rows = [
        [
            '<span class="badge failed">✗ FAILED</span>',
            page.scenario(e["scenario"]),
            page.strategy(e["label"]),
            _e(budget_name(e["budget"], str)),
            _e(CLASS_NAMES[e["class"]]),
            _e(turn_numbers(e["turns"], TURNS_LISTED)),
        ]
        for e in entries[:LISTED]
    ]
    more = (
        f'<p class="muted">... and {len(entries) - LISTED} more (summary.json lists all)</p>'
        if len(entries) > LISTED
        else ""
    )
    head = ["", "scenario", "strategy", "budget", "failed", "turns (from 0)"]
    count = len({e["scenario"] for e in entries})
    return f"<h3>Failing scenarios: {count}</h3>" + _table(head, rows, "failing") + more


def _provenance(page: _Page) -> str:
    s = page.summary
    m = s["manifest"]
    conf = round(float(s["confidence"]) * 100)
    fields: list[tuple[str, str]] = [
        ("name", _e(m.get("name", "?"))),
        ("run id", f"<code>{_e(m.get('run_id', '?'))}</code>"),
        ("packproof version", _e(m.get("packproof_version", "?"))),
        ("commit", f"<code>{_e(m.get('git_commit') or '?')}</code>"),
        ("python", _e(m.get("python", "?"))),
        ("platform", _e(m.get("platform", "?"))),
    ]
    if m.get("config"):
        fields.append(
            (
                "config",
                f"<code>{_e(m['config'].get('file', '?'))}</code> "
                f'<span class="muted">sha256 <code>{_e(m["config"].get("sha256", "?"))}</code>'
                "</span>",
            )
        )
    fields += [
        (
            "statistics",
            f"means with {conf}% percentile-bootstrap intervals "
            f"({_e(m.get('bootstrap_resamples', '?'))} resamples, seed {_e(m.get('seed', '?'))}); "
            f"baseline <code>{_e(page.labels.get(s['baseline'], s['baseline']))}</code>",
        ),
        ("budgets", ", ".join(_e(page.budget_title(b)) for b in s["budgets"])),
    ]
    if m.get("token_counters"):
        fields.append(("token counters", ", ".join(_e(c) for c in m["token_counters"])))
    run = s.get("run", {})
    if "executor" in run:
        fields.append(("executor", f"{_e(run['executor'])}, {_e(run.get('jobs', '?'))} jobs"))
    out = [
        '<section id="run">',
        "<h2>Provenance</h2>",
        '<dl class="manifest">',
        *(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in fields),
        "</dl>",
        "<h3>Strategies</h3>",
        _table(
            ["label", "canonical spec"],
            (
                [page.strategy(x["label"]), f"<code>{_breakable(spec_text(x))}</code>"]
                for x in s["strategies"]
            ),
        ),
        "<h3>Suites</h3>",
        _table(
            ["file", "sha256"],
            (
                [
                    f"<code>{_e(x.get('file', '?'))}</code>",
                    f"<code>{_e(x.get('sha256', '?'))}</code>",
                ]
                for x in m.get("suites", [])
            ),
        ),
        "</section>",
    ]
    return "\n".join(out)


def _nav(page: _Page, plots: bool) -> str:
    links = [("verdict", "Verdict")]
    if plots:
        links.append(("plots", "Plots"))
    links += [(anchor(b), page.budget_title(b)) for b in page.summary["budgets"]]
    if page.summary.get("budget_invariant"):
        links.append(("ranking", "Ranking"))
    if page.summary.get("replay"):
        links.append((ANCHOR, "Prompt-cache economics"))
    if page.summary.get("breakdown"):
        links.append(("by-tag", "By tag"))
    links += [("latency", "Latency"), ("failures", "Failures")]
    links += [("scenarios", "Scenarios"), ("run", "Provenance")]
    return "<nav>" + "".join(f'<a href="#{_e(a)}">{_e(t)}</a>' for a, t in links) + "</nav>"


def _png(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def _plots(plots: Sequence[tuple[str, bytes | None, str, str]]) -> str:
    """The plots that have data (a renderer returns None for one without)."""
    if not any(data for _, data, _, _ in plots):
        return ""
    out = ['<section id="plots">', "<h2>Plots</h2>", '<div class="plots">']
    for name, data, alt, caption in plots:
        if data is None:
            continue
        out.append(
            f'<figure><img src="{_png(data)}" alt="{_e(alt)}">'
            f"<figcaption>{_e(caption)} (<code>{_e(name)}</code>)</figcaption></figure>"
        )
    out += ["</div>", "</section>"]
    return "\n".join(out)


def _latency(page: _Page) -> str:
    lat: Mapping[str, Mapping[str, Any]] = page.summary["run"]["latency"]
    known = [s["label"] for s in page.summary["strategies"] if s["label"] in lat]
    order = [(label, lat[label]) for label in [*known, *(x for x in lat if x not in known)]]
    return "\n".join(
        [
            '<section id="latency">',
            "<h2>Latency</h2>",
            '<p class="muted">Per cell; differs from run to run.</p>',
            _table(
                ["strategy", "p50 ms", "p95 ms"],
                (
                    [
                        page.strategy(label),
                        _cell("num", _ms(v.get("p50_ms"))),
                        _cell("num", _ms(v.get("p95_ms"))),
                    ]
                    for label, v in order
                ),
            ),
            "</section>",
        ]
    )


def _failures(page: _Page) -> str:
    """The failing cells, counted as summary.md and junit.xml count them."""
    fails: Sequence[Mapping[str, Any]] = page.summary["expectation_failures"]
    tally = page.summary.get("failures") or {"cells": len(fails), "listed": []}
    judged = sum(g["expectations"]["total"] for g in page.summary["groups"])
    out = ['<section id="failures">', f"<h2>Failures: {tally['cells']}</h2>"]
    if tally["cells"] and "expectations" in tally:
        out.append(f"<p>{_e(describe(tally))}; junit.xml has the same failed cases.</p>")
    elif not judged:
        out.append(
            '<p class="empty">No cell failed or broke a hard invariant; none was judged '
            "against expectations.</p>"
        )
    elif not tally["cells"]:
        out.append(
            f'<p class="empty">None: every one of the {judged} judged cells met its '
            "expectations, and no cell failed or broke a hard invariant.</p>"
        )
    out.append(_failing_scenarios(page))
    listed = [(f["key"], f["problems"]) for f in tally["listed"]]
    listed += [(f["key"], f["failures"]) for f in fails]
    if listed:
        out.append("<h3>Failing cells</h3>")
        out.append('<ul class="failures">')
        out += [
            f'<li><code>{_e(key)}</code>: <span class="msg">'
            f"{'; '.join(_e(x) for x in lines)}</span></li>"
            for key, lines in listed[:MAX_FAILURES]
        ]
        out.append("</ul>")
        if len(listed) > MAX_FAILURES:
            out.append(
                f'<p class="muted">... and {len(listed) - MAX_FAILURES} more '
                "(summary.json lists them)</p>"
            )
    out.append("</section>")
    return "\n".join(out)


def render_html(ctx: ReportContext) -> str:
    """report.html: PASSED or FAILED and where, the run header (manifest), the
    verdict, the plots with data, per budget the table of
    summary.md and the paired differences, the prompt-cache economics of
    replays, latency, expectation failures, and the first scenarios with every
    strategy's pack (ids and texts)."""
    page = _Page(ctx, run_colours(ctx))
    plots = [
        (
            "recall_vs_budget.png",
            recall_vs_budget(ctx),
            "Mean evidence recall against token budget per strategy",
            "Mean evidence recall per strategy against the token budget (log2 scale), "
            "with bootstrap bands and the oracle ceiling (dashed).",
        ),
        (
            "recall_vs_stability.png",
            recall_vs_stability(ctx),
            "Evidence recall against prefix stability per strategy",
            "One panel per budget: mean evidence recall against mean prefix stability "
            "across conversation turns (per conversation, then across conversations); "
            "up and right is better.",
        ),
        (
            "latency.png",
            latency(ctx),
            "Box plot of per-cell packing latency per strategy",
            "Per-cell packing latency per strategy (log scale; differs run to run).",
        ),
    ]
    frontier_png = frontier(ctx)
    body = [
        _top(page, any(data for _, data, _, _ in plots)),
        _plots(plots),
        *(budget_section(page, b) for b in page.summary["budgets"]),
        ranking_section(page),
        cache_section(page, _png(frontier_png) if frontier_png else ""),
        by_tag(page),
        _latency(page),
        _failures(page),
        scenarios_section(page),
        _provenance(page),
    ]
    return (
        _head(ctx.summary)
        + "<body>\n<main>\n"
        + "\n".join(body)
        + '\n<footer><p class="muted">Generated by packproof eval; '
        "summary.json, summary.md and metrics.csv hold the same figures.</p></footer>\n"
        + "</main>\n</body>\n</html>\n"
    )
