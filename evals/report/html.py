"""``report.html``: the whole eval report as one self-contained, offline page.

Inline CSS, the plots embedded as ``data:`` PNG images, no JavaScript and no
external resource (a Content-Security-Policy forbids both, as a second line of
defence). Every piece of text that comes from data (ids, whys, prompts, item
texts, failure messages, strategy labels, manifest fields) goes through
:func:`html.escape`, so an item holding ``<script>`` is shown, never run.
The same report gives the same bytes.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ctxpack.evals.run.runner import SCENARIO_BUDGET

if TYPE_CHECKING:  # report.py registers these renderers: no import cycle at run time
    from ctxpack.evals.report.model import ReportContext

__all__ = ["MAX_FAILURES", "MAX_SCENARIOS", "MAX_TURNS", "render_html"]

MAX_SCENARIOS: Final = 200  # scenarios shown with their packs
MAX_FAILURES: Final = 500  # expectation failures listed (summary.json has all)
MAX_TEXT: Final = 2000  # characters of one item text shown
MAX_TURNS: Final = 20  # turns of one conversation shown with their packs

_CSS: Final = """
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0;
  --head: #f6f8fa; --bad: #b42318; --badbg: #fef3f2; --good: #1a7f37; --accent: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 64px; color: var(--fg); background: #fff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue",
  Arial, sans-serif; }
main { max-width: 1240px; margin: 0 auto; }
h1 { font-size: 1.8em; margin: 0 0 4px; }
h2 { font-size: 1.35em; margin: 40px 0 12px; padding-bottom: 6px;
  border-bottom: 1px solid var(--line); }
h3 { font-size: 1.1em; margin: 24px 0 8px; }
h4 { font-size: 1em; margin: 16px 0 6px; }
p { margin: 8px 0; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
code { font: 0.88em/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas,
  "DejaVu Sans Mono", monospace; background: var(--head); padding: 1px 4px;
  border-radius: 4px; overflow-wrap: anywhere; }
.muted, .ci { color: var(--muted); }
.ci { font-size: 0.85em; white-space: nowrap; }
.lead { color: var(--muted); margin-bottom: 20px; }
nav { display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 16px 0 8px; padding: 10px 14px;
  background: var(--head); border: 1px solid var(--line); border-radius: 8px; }
nav a { white-space: nowrap; }
.scroll { overflow-x: auto; }
dl.manifest { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px;
  margin: 12px 0; }
dl.manifest dt { font-weight: 600; color: var(--muted); }
dl.manifest dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 8px 0 12px; font-size: 0.92em; }
th, td { border: 1px solid var(--line); padding: 5px 9px; vertical-align: top;
  text-align: left; }
th { background: var(--head); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.num .ci { display: block; }
table.paired td.num .ci { display: inline; }
tbody tr:nth-child(even) { background: #fbfcfd; }
td.bad { color: var(--bad); background: var(--badbg); font-weight: 600; }
.strat { white-space: nowrap; }
.strat code { overflow-wrap: normal; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px;
  margin-right: 6px; vertical-align: baseline; }
.plots { display: grid; grid-template-columns: 1fr; gap: 16px; }
figure { margin: 0; padding: 10px; border: 1px solid var(--line); border-radius: 8px;
  background: #fff; }
figure img { display: block; max-width: 100%; height: auto; margin: 0 auto; }
figcaption { color: var(--muted); font-size: 0.88em; margin-top: 6px; }
ul.failures li { margin: 3px 0; }
ul.failures .msg { color: var(--bad); }
details.scenario { border: 1px solid var(--line); border-radius: 8px; margin: 8px 0;
  background: #fff; }
details.scenario > summary { cursor: pointer; padding: 8px 12px; background: var(--head);
  border-radius: 8px; }
details.scenario[open] > summary { border-bottom: 1px solid var(--line);
  border-radius: 8px 8px 0 0; }
details.scenario > div { padding: 4px 14px 12px; }
.why { color: var(--fg); }
blockquote.prompt { margin: 6px 0 10px; padding: 6px 12px; border-left: 4px solid var(--accent);
  background: #f3f8ff; white-space: pre-wrap; overflow-wrap: anywhere; }
table.packs { width: 100%; }
table.packs td.strategy { white-space: nowrap; width: 1%; }
ol.items { margin: 0; padding-left: 22px; }
ol.items li { margin: 2px 0; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
.role { color: var(--muted); font-size: 0.85em; }
.gold { color: var(--good); font-weight: 700; }
.fail { color: var(--bad); }
.empty { color: var(--muted); font-style: italic; }
"""


def _e(value: object) -> str:
    """Text from data, escaped for HTML text and attribute values."""
    return html.escape(str(value), quote=True)


def _stat(stat: Mapping[str, Any] | None, digits: int = 3) -> str:
    """A mean with its bootstrap interval (as summary.md writes it)."""
    if not stat:
        return "–"
    mean = f"{stat['mean']:.{digits}f}"
    if stat["low"] == stat["high"]:
        return mean
    return f'{mean} <span class="ci">[{stat["low"]:.{digits}f}, {stat["high"]:.{digits}f}]</span>'


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "") -> str:
    """A table; ``head`` and the cells are HTML already (escape data first).
    A cell starting with ``\\x00num``/``\\x00bad`` gets that class."""
    out = ['<div class="scroll">', f'<table class="{cls}">' if cls else "<table>", "<thead><tr>"]
    out += [f"<th>{h}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>")
        for cell in row:
            if cell.startswith("\x00"):
                kind, _, body = cell[1:].partition("\x00")
                out.append(f'<td class="{kind}">{body}</td>')
            else:
                out.append(f"<td>{cell}</td>")
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _cell(kind: str, body: str) -> str:
    return f"\x00{kind}\x00{body}"


class _Page:
    """Shared lookups for one report."""

    def __init__(self, ctx: ReportContext, colours: Mapping[str, str]) -> None:
        self.ctx = ctx
        self.summary = ctx.summary
        self.colours = colours
        self.labels: dict[str, str] = {s["spec"]: s["label"] for s in ctx.summary["strategies"]}

    def strategy(self, label: str) -> str:
        colour = self.colours.get(label)
        swatch = f'<span class="swatch" style="background:{_e(colour)}"></span>' if colour else ""
        return f'<span class="strat">{swatch}<code>{_e(label)}</code></span>'

    def budget_title(self, budget: Any) -> str:
        return (
            "each scenario's own budget" if budget == SCENARIO_BUDGET else f"budget {budget} tokens"
        )


def _head(summary: Mapping[str, Any]) -> str:
    title = f"ctxpack eval: {summary['manifest'].get('name', '?')}"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "img-src data:; style-src 'unsafe-inline'\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="ctxpack eval">\n'
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n"
    )


def _header(page: _Page) -> str:
    s = page.summary
    m = s["manifest"]
    conf = round(float(s["confidence"]) * 100)
    fields: list[tuple[str, str]] = [
        ("name", _e(m.get("name", "?"))),
        ("run id", f"<code>{_e(m.get('run_id', '?'))}</code>"),
        ("ctxpack version", _e(m.get("ctxpack_version", "?"))),
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
        "<header>",
        f"<h1>ctxpack eval: {_e(m.get('name', '?'))}</h1>",
        f'<p class="lead">{_e(s["cells"])} cells, {len(s["strategies"])} strategies, '
        f"{len(s['budgets'])} budgets, {len(m.get('suites', []))} suites</p>",
        _nav(page),
        '<h2 id="run">Run</h2>',
        '<dl class="manifest">',
        *(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in fields),
        "</dl>",
        "<h3>Strategies</h3>",
        _table(
            ["label", "canonical spec"],
            ([page.strategy(x["label"]), f"<code>{_e(x['spec'])}</code>"] for x in s["strategies"]),
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
        "</header>",
    ]
    return "\n".join(out)


def _anchor(budget: Any) -> str:
    return "budget-" + "".join(c if c.isalnum() else "-" for c in str(budget))


def _nav(page: _Page) -> str:
    links = [("run", "Run"), ("plots", "Plots")]
    links += [(_anchor(b), page.budget_title(b)) for b in page.summary["budgets"]]
    if page.summary.get("breakdown"):
        links.append(("by-tag", "By tag"))
    links += [("latency", "Latency"), ("failures", "Expectation failures")]
    links += [("scenarios", "Scenarios")]
    return "<nav>" + "".join(f'<a href="#{_e(a)}">{_e(t)}</a>' for a, t in links) + "</nav>"


def _png(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def _plots(plots: Sequence[tuple[str, bytes, str, str]]) -> str:
    out = ['<section id="plots">', "<h2>Plots</h2>", '<div class="plots">']
    for name, data, alt, caption in plots:
        out.append(
            f'<figure><img src="{_png(data)}" alt="{_e(alt)}">'
            f"<figcaption>{_e(caption)} (<code>{_e(name)}</code>)</figcaption></figure>"
        )
    out += ["</div>", "</section>"]
    return "\n".join(out)


def _budget_section(page: _Page, budget: Any) -> str:
    s = page.summary
    rows = [g for g in s["groups"] if str(g["budget"]) == str(budget)]
    body = []
    for g in rows:
        mm = g["metrics"]
        hard = sum(g["hard_invariants"].values())
        exp = g["expectations"]
        exp_bad = exp["passed"] != exp["total"]
        body.append(
            [
                page.strategy(g["label"]),
                _cell("num", _stat(mm.get("evidence_recall"))),
                _cell("num", _stat(mm.get("evidence_hit"))),
                _cell("num", _stat(mm.get("ndcg@10"))),
                _cell("num", _stat(mm.get("mrr"))),
                _cell("num", _stat(mm.get("regret"))),
                _cell("num", _stat(g.get("prefix_stability"))),
                _cell("num bad" if exp_bad else "num", f"{exp['passed']}/{exp['total']}"),
                _cell("num bad" if hard else "num", str(hard)),
            ]
        )
    head = [
        "strategy",
        "evidence recall",
        "full hit",
        "nDCG@10",
        "MRR",
        "regret",
        "prefix stability",
        "expectations",
        "hard invariants",
    ]
    oracle = next(
        (g["metrics"]["oracle_recall"] for g in rows if g["metrics"].get("oracle_recall")), None
    )
    out = [
        f'<section id="{_anchor(budget)}">',
        f"<h2>{_e(page.budget_title(budget).capitalize())}</h2>",
        _table(head, body),
        f"<p>Oracle ceiling (best achievable evidence recall): {_stat(oracle)}</p>",
    ]
    diffs = [p for p in s["paired"] if str(p["budget"]) == str(budget)]
    if diffs:
        base = page.labels.get(s["baseline"], s["baseline"])
        out.append(
            f"<h3>Paired differences against <code>{_e(base)}</code> (Wilcoxon signed-rank p)</h3>"
        )
        out.append(
            _table(
                ["strategy", "metric", "difference", "p", "cells"],
                (
                    [
                        page.strategy(p["label"]),
                        _e(p["metric"]),
                        _cell("num", _stat(p)),
                        _cell(
                            "num",
                            "–" if p.get("p_value") is None else f"{p['p_value']:.3g}",
                        ),
                        _cell("num", _e(p.get("n", "–"))),
                    ]
                    for p in diffs
                ),
                cls="paired",
            )
        )
    out.append("</section>")
    return "\n".join(out)


def _by_tag(page: _Page) -> str:
    """Evidence recall per tag (e.g. LoCoMo question category), per budget."""
    rows: Sequence[Mapping[str, Any]] = page.summary.get("breakdown") or []
    if not rows:
        return ""
    tags = sorted({r["tag"] for r in rows})
    out = ['<section id="by-tag">', "<h2>Evidence recall by tag</h2>"]
    for budget in page.summary["budgets"]:
        here = [r for r in rows if str(r["budget"]) == str(budget)]
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
                            "num", f"{_stat(mine[t]['evidence_recall'])} (n={_e(mine[t]['cells'])})"
                        )
                        if t in mine
                        else "–"
                        for t in tags
                    ),
                ]
            )
        out.append(_table(["strategy", *(_e(t) for t in tags)], table))
    out.append("</section>")
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
    fails: Sequence[Mapping[str, Any]] = page.summary["expectation_failures"]
    out = ['<section id="failures">', f"<h2>Expectation failures: {len(fails)}</h2>"]
    if not fails:
        out.append('<p class="empty">None: every expectation held.</p>')
    else:
        out.append('<ul class="failures">')
        out += [
            f'<li><code>{_e(f["key"])}</code>: <span class="msg">'
            f"{'; '.join(_e(x) for x in f['failures'])}</span></li>"
            for f in fails[:MAX_FAILURES]
        ]
        out.append("</ul>")
        if len(fails) > MAX_FAILURES:
            out.append(
                f'<p class="muted">... and {len(fails) - MAX_FAILURES} more '
                "(summary.json lists all)</p>"
            )
    out.append("</section>")
    return "\n".join(out)


def _item_text(text: Any) -> str:
    text = "" if text is None else str(text)
    if not text:
        return '<span class="empty">(empty text)</span>'
    if len(text) > MAX_TEXT:
        rest = len(text) - MAX_TEXT
        return (
            f'<span class="text">{_e(text[:MAX_TEXT])}</span>'
            f'<span class="muted"> … ({rest} more characters)</span>'
        )
    return f'<span class="text">{_e(text)}</span>'


def _pack_cell(
    record: Mapping[str, Any], items: Mapping[str, Mapping[str, Any]], gold: set[str]
) -> str:
    selected: Sequence[str] = record.get("selected") or []
    if not selected:
        body = '<span class="empty">(nothing packed)</span>'
    else:
        lis = []
        for item_id in selected:
            it = items.get(item_id)
            star = ' <span class="gold" title="gold evidence">★</span>' if item_id in gold else ""
            if it is None:
                lis.append(
                    f"<li><code>{_e(item_id)}</code>{star} "
                    '<span class="empty">(not an item of the request)</span></li>'
                )
                continue
            tokens = it.get("tokens")
            meta = _e(it.get("role", "?")) + (
                f", {_e(tokens)} tokens" if tokens is not None else ""
            )
            lis.append(
                f'<li><code>{_e(item_id)}</code>{star} <span class="role">{meta}</span> '
                f"{_item_text(it.get('text'))}</li>"
            )
        body = '<ol class="items">' + "".join(lis) + "</ol>"
    if record.get("failures"):
        body += "".join(f'<div class="fail">✗ {_e(x)}</div>' for x in record["failures"])
    return body


def _scenario_budget(summary: Mapping[str, Any]) -> Any:
    budgets = list(summary["budgets"])
    if SCENARIO_BUDGET in budgets or not budgets:
        return SCENARIO_BUDGET
    return budgets[0]


def _scenarios(page: _Page) -> str:
    ctx = page.ctx
    budget = _scenario_budget(page.summary)
    by_turn: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
    order: dict[str, str] = {}  # scenario id -> suite, in cell-key order
    for r in ctx.records:
        order.setdefault(r["scenario"], r["suite"])
        if str(r["budget"]) == str(budget):
            by_turn.setdefault((r["scenario"], int(r["turn"])), []).append(r)
    ids = list(order) + [i for i in ctx.scenarios if i not in order]
    shown = ids[:MAX_SCENARIOS]
    out = [
        '<section id="scenarios">',
        f"<h2>Scenarios: {len(ids)}</h2>",
        f'<p class="muted">Each turn\'s prompt and what every strategy packed at '
        f"{_e(page.budget_title(budget))}, in pack order "
        '(<span class="gold">★</span> marks gold evidence). '
        + (f"The first {MAX_SCENARIOS} scenarios are shown. " if len(ids) > MAX_SCENARIOS else "")
        + "Click a scenario to open it.</p>",
    ]
    for sid in shown:
        sc = ctx.scenarios.get(sid)
        suite = order.get(sid) or (sc.file if sc else "?")
        why = sc.why if sc else ""
        head = (
            f"<summary><code>{_e(sid)}</code> "
            f'<span class="muted">({_e(suite)})</span> '
            f'<span class="why">{_e(why)}</span></summary>'
        )
        parts = [f'<details class="scenario" id="sc-{_e(sid)}">', head, "<div>"]
        if sc is not None:
            tags = ", ".join(f"<code>{_e(t)}</code>" for t in sc.tags) or "none"
            parts.append(
                f'<p class="muted">source {_e(sc.file)} line {_e(sc.line)}; tags {tags}</p>'
            )
        n_turns = len(sc.turns) if sc else 1 + max((t for (s, t) in by_turn if s == sid), default=0)
        for k in range(min(n_turns, MAX_TURNS)):
            turn = sc.turns[k] if sc else None
            request = turn.request if turn else {}
            items = {str(it["id"]): it for it in request.get("items", [])}
            gold = set(turn.relevant) if turn else set()
            cells = by_turn.get((sid, k), [])
            budget_tokens = request.get("budget_tokens")
            if cells and cells[0].get("budget_tokens") is not None:
                budget_tokens = cells[0]["budget_tokens"]
            bits = [f"{len(items)} items"]
            if budget_tokens is not None:
                bits.append(f"budget {_e(budget_tokens)} tokens")
            if gold:
                bits.append("gold " + ", ".join(f"<code>{_e(g)}</code>" for g in sorted(gold)))
            title = f"Turn {k + 1} of {n_turns}" if n_turns > 1 else "Request"
            parts.append(f'<h4>{title} <span class="muted">({"; ".join(bits)})</span></h4>')
            prompt = request.get("prompt")
            shown_prompt = _e(prompt) if prompt else '<span class="empty">(no prompt)</span>'
            parts.append(f'<blockquote class="prompt">{shown_prompt}</blockquote>')
            if not cells:
                parts.append('<p class="empty">No cell at this budget.</p>')
                continue
            parts.append(
                _table(
                    ["strategy", "mode", "packed items (id, role, tokens, text)"],
                    (
                        [
                            _cell("strategy", page.strategy(page.labels.get(r["spec"], r["spec"]))),
                            _e(r.get("mode", "?")),
                            _pack_cell(r, items, gold),
                        ]
                        for r in cells
                    ),
                    cls="packs",
                )
            )
        if n_turns > MAX_TURNS:  # a long conversation (LoCoMo): the page stays readable
            parts.append(
                f'<p class="muted">... and {n_turns - MAX_TURNS} more turns '
                "(metrics.csv has every cell).</p>"
            )
        parts += ["</div>", "</details>"]
        out.append("\n".join(parts))
    if len(ids) > MAX_SCENARIOS:
        out.append(
            f'<p class="muted">... and {len(ids) - MAX_SCENARIOS} more scenarios '
            "(results.jsonl has every cell)</p>"
        )
    out.append("</section>")
    return "\n".join(out)


def render_html(ctx: ReportContext) -> str:
    """report.html: the run header (manifest), the plots, per budget the table of
    summary.md and the paired differences, latency, expectation failures, and
    the first scenarios with every strategy's pack (ids and texts)."""
    from ctxpack.evals.report.plots import (
        latency,
        recall_vs_budget,
        recall_vs_stability,
        strategy_colours,
    )

    page = _Page(ctx, strategy_colours(ctx))
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
            "At each scenario's own budget: mean evidence recall against mean prefix "
            "stability across conversation turns; up and right is better.",
        ),
        (
            "latency.png",
            latency(ctx),
            "Box plot of per-cell packing latency per strategy",
            "Per-cell packing latency per strategy (log scale; differs run to run).",
        ),
    ]
    body = [
        _header(page),
        _plots(plots),
        *(_budget_section(page, b) for b in page.summary["budgets"]),
        _by_tag(page),
        _latency(page),
        _failures(page),
        _scenarios(page),
    ]
    return (
        _head(ctx.summary)
        + "<body>\n<main>\n"
        + "\n".join(body)
        + '\n<footer><p class="muted">Generated by ctxpack eval; '
        "summary.json, summary.md and metrics.csv hold the same figures.</p></footer>\n"
        + "</main>\n</body>\n</html>\n"
    )
