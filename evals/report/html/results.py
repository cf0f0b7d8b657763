"""The results sections of ``report.html``: per budget the table of every
strategy (arrows say which way is better, the best value is highlighted), the
oracle ceiling and the paired differences; the ranking metrics that do not
change with the budget, once; and evidence recall by tag."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from packproof.evals.report.frame import tag_column
from packproof.evals.report.html.base import _cell, _e, _Page, _stat, _table
from packproof.evals.report.model import PAIRED
from packproof.evals.report.text import (
    Column,
    answer_ceiling,
    best_rows,
    budget_columns,
    fmt_p,
    metric_name,
    ranking_columns,
    tag_recall,
)

__all__ = ["anchor", "budget_section", "by_tag", "ranking_section"]


def anchor(budget: Any) -> str:
    return "budget-" + "".join(c if c.isalnum() else "-" for c in str(budget))


def _value(column: Column, group: Mapping[str, Any]) -> tuple[str, bool]:
    """(HTML, whether the value is bad: a failed expectation or a broken invariant)."""
    value = column.read(group)
    if column.key == "expectations":
        if not value["total"]:
            return "–", False
        return f"{value['passed']}/{value['total']}", value["passed"] != value["total"]
    if isinstance(value, int):
        return str(value), column.key == "hard_invariants" and value > 0
    return _stat(value), False


def results_table(page: _Page, columns: Sequence[Column], rows: Sequence[Mapping[str, Any]]) -> str:
    best = [best_rows(rows, c) for c in columns]
    body = []
    for i, g in enumerate(rows):
        cells = [page.strategy(g["label"])]
        for k, c in enumerate(columns):
            html, bad = _value(c, g)
            kind = "num bad" if bad else "num best" if i in best[k] else "num"
            cells.append(_cell(kind, html))
        body.append(cells)
    return _table(["strategy", *(_e(c.heading) for c in columns)], body)


def _paired(page: _Page, budget: Any, metrics: Sequence[str]) -> str:
    rows = [
        p
        for p in page.summary["paired"]
        if str(p["budget"]) == str(budget) and p["metric"] in metrics
    ]
    if not rows:
        return ""
    table = _table(
        [
            "strategy",
            "against",
            "metric",
            "difference (cells)",
            "p (Wilcoxon)",
            "difference (conversations)",
            "p (sign-flip)",
            "cells",
            "conversations",
        ],
        (
            [
                page.strategy(p["label"]),
                f'{page.strategy(p["against_label"])} <span class="muted">({_e(p["why"])})</span>',
                _e(metric_name(p["metric"])),
                _cell("num", _stat(p)),
                _cell("num", fmt_p(p)),
                _cell("num", _stat(p.get("cluster"))),
                _cell("num", fmt_p(p.get("cluster"))),
                _cell("num", _e(p.get("n", "–"))),
                _cell("num", _e((p.get("cluster") or {}).get("clusters", "–"))),
            ]
            for p in rows
        ),
        cls="paired",
    )
    return (
        "<details><summary>Paired differences (strategy − against, over the cells both "
        f"have a value for): {len(rows)} comparisons</summary>{table}</details>"
    )


def budget_section(page: _Page, budget: Any) -> str:
    s = page.summary
    rows = [g for g in s["groups"] if str(g["budget"]) == str(budget)]
    oracle = next(
        (g["metrics"]["oracle_recall"] for g in rows if g["metrics"].get("oracle_recall")), None
    )
    invariant = s.get("budget_invariant", [])
    first = str(budget) == str(s["budgets"][0])
    return "\n".join(
        [
            f'<section id="{anchor(budget)}">',
            f"<h2>{_e(page.budget_title(budget).capitalize())}</h2>",
            results_table(page, budget_columns(s), rows),
            f"<p>Oracle ceiling (best achievable evidence recall): {_stat(oracle)}</p>",
            _paired(page, budget, [m for m in PAIRED if first or m not in invariant]),
            "</section>",
        ]
    )


def ranking_section(page: _Page) -> str:
    s = page.summary
    columns = ranking_columns(s)
    if not columns:
        return ""
    rows = [g for g in s["groups"] if str(g["budget"]) == str(s["budgets"][0])]
    ceiling = answer_ceiling(s)
    out = [
        '<section id="ranking">',
        "<h2>Ranking quality (the same at every budget)</h2>",
        '<p class="muted">Over the evictable candidates only: the fresh tail and the anchors '
        "are kept whatever the strategy (<code>packproof docs metrics</code>).</p>",
        results_table(page, columns, rows),
    ]
    if ceiling:
        out.append(
            "<p>Answer-token ceiling (the gold answers' content words present anywhere in "
            f"the conversation): {_stat(ceiling)}</p>"
        )
    out.append("</section>")
    return "\n".join(out)


def by_tag(page: _Page) -> str:
    """Evidence recall per tag (e.g. LoCoMo question category), per budget."""
    rows: Sequence[Mapping[str, Any]] = page.summary.get("breakdown") or []
    if not rows:
        return ""
    out = ['<section id="by-tag">']
    for prefix in page.summary.get("breakdown_tags") or [""]:
        tags = sorted({r["tag"] for r in rows if r["tag"].startswith(prefix)})
        if not tags:
            continue
        out.append(f"<h2>Evidence recall by {_e(tag_column(prefix) if prefix else 'tag')}</h2>")
        for budget in page.summary["budgets"]:
            here = [r for r in rows if str(r["budget"]) == str(budget) and r["tag"] in tags]
            if not here:
                continue
            out.append(f"<h3>{_e(page.budget_title(budget).capitalize())}</h3>")
            table = []
            for s in page.summary["strategies"]:
                mine = {r["tag"]: r for r in here if r["spec"] == s["spec"]}
                table.append(
                    [
                        page.strategy(s["label"]),
                        *(
                            _cell(
                                "num",
                                f"{_stat(tag_recall(mine[t]))} (n={_e(mine[t]['cells'])})",
                            )
                            if t in mine
                            else "–"
                            for t in tags
                        ),
                    ]
                )
            out.append(_table(["strategy", *(_e(t[len(prefix) :]) for t in tags)], table))
    out.append("</section>")
    return "\n".join(out)
