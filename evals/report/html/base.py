"""The building blocks of ``report.html`` shared by its sections (page.py) and
its scenario drill-down (scenarios.py): the inline stylesheet and the
document head (its title leads with PASSED or FAILED), escaping (:func:`_e`,
through which every piece of text from data goes; :func:`_breakable` for spec
labels, which have no space to wrap at), number formatting, tables, and
:class:`_Page`, the lookups of one report. Package-private: only the HTML
modules use these names.

The stylesheet keeps every table inside the page: cells wrap (a spec label at
its commas, parentheses and ``+``), and a table still too wide scrolls
sideways in its own box rather than widen the page.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from packproof.evals.report.model import ReportContext
from packproof.evals.report.status import word
from packproof.evals.run.config import SCENARIO_BUDGET

# Where a spec label may break across lines (``<wbr>``): after a comma or a
# spec's opening parenthesis and before a "+", never inside a number; the
# plots' legends break labels at the same points (plots/base.py).
_LABEL_BREAKS: Final = re.compile(r"(?<=,)(?!\d)|(?<=\S\()|(?=\+)")

_CSS: Final = """
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0;
  --head: #f6f8fa; --bad: #b42318; --badbg: #fef3f2; --good: #1a7f37; --accent: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 64px; color: var(--fg); background: #fff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue",
  Arial, sans-serif; }
main { max-width: 1440px; margin: 0 auto; }
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
.scroll { overflow-x: auto; max-width: 100%; }
dl.manifest { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px;
  margin: 12px 0; }
dl.manifest dt { font-weight: 600; color: var(--muted); }
dl.manifest dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 8px 0 12px; font-size: 0.92em; }
th, td { border: 1px solid var(--line); padding: 5px 9px; vertical-align: top;
  text-align: left; overflow-wrap: break-word; }
th { background: var(--head); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.num .ci { display: block; }
table.paired td.num .ci { display: inline; }
tbody tr:nth-child(even) { background: #fbfcfd; }
td.bad { color: var(--bad); background: var(--badbg); font-weight: 600; }
td.best { font-weight: 700; background: #eaf6ec; }
section#verdict { background: #f6f8fa; border: 1px solid var(--line); border-radius: 8px;
  padding: 4px 18px 10px; margin-top: 20px; }
section#verdict h2 { margin-top: 12px; }
.verdict h3 { margin: 14px 0 4px; }
.verdict ul { margin: 4px 0; padding-left: 22px; }
.verdict li { margin: 3px 0; }
p.note { color: var(--muted); font-size: 0.92em; }
details > summary { cursor: pointer; }
details.why { display: inline; margin-left: 6px; font-size: 0.85em; }
details.why > summary { display: inline; color: var(--accent); }
details.why[open] { display: block; margin: 2px 0 4px 12px; }
div.missed { color: var(--bad); margin-top: 6px; }
.strat { white-space: nowrap; }
.strat code { white-space: normal; overflow-wrap: break-word; }
.badge { display: inline-block; padding: 1px 9px; border-radius: 6px; color: #fff;
  font-weight: 700; font-size: 0.78em; letter-spacing: 0.04em; vertical-align: 0.15em;
  white-space: nowrap; }
.badge.passed { background: var(--good); }
.badge.failed { background: var(--bad); }
div.status { border: 1px solid; border-radius: 8px; padding: 6px 16px; margin: 12px 0 16px; }
div.status.passed { border-color: #a6d8b4; background: #f0f9f2; }
div.status.failed { border-color: #f1b5ae; background: var(--badbg); }
div.status ul { margin: 4px 0; padding-left: 22px; }
div.status li { margin: 3px 0; }
div.status.passed strong { color: var(--good); }
div.status.failed strong { color: var(--bad); }
.classes { color: var(--bad); font-size: 0.9em; margin-left: 6px; }
details.scenario.failed { border-color: var(--bad); }
details.scenario.failed > summary { background: var(--badbg); }
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
table.packs td.strategy { width: 16em; }
ol.items { margin: 0; padding-left: 22px; }
ol.items li { margin: 2px 0; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
.role { color: var(--muted); font-size: 0.85em; }
.gold { color: var(--good); font-weight: 700; }
.fail { color: var(--bad); }
.empty { color: var(--muted); font-style: italic; }
p.answer { padding: 6px 12px; border-left: 4px solid var(--good); background: #f0f9f2; }
"""


def _e(value: object) -> str:
    """Text from data, escaped for HTML text and attribute values."""
    return html.escape(str(value), quote=True)


def _breakable(text: str) -> str:
    """``text`` escaped, with a ``<wbr>`` at each of a spec label's break points."""
    return "<wbr>".join(_e(piece) for piece in _LABEL_BREAKS.split(text) if piece)


def _stat(stat: Mapping[str, Any] | None, digits: int = 3) -> str:
    """A mean with its bootstrap interval (as summary.md writes it)."""
    if not stat:
        return "–"
    mean = f"{stat['mean']:,.{digits}f}"
    if stat["low"] == stat["high"]:
        return mean
    return f'{mean} <span class="ci">[{stat["low"]:,.{digits}f}, {stat["high"]:,.{digits}f}]</span>'


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
        """A strategy label in its colour, breakable at its spec's break points."""
        colour = self.colours.get(label)
        swatch = f'<span class="swatch" style="background:{_e(colour)}"></span>' if colour else ""
        return f'<span class="strat">{swatch}<code>{_breakable(label)}</code></span>'

    def scenario(self, scenario: str) -> str:
        """A failing scenario (``suite/id``), linked to its drill-down."""
        sid = scenario.split("/", 1)[-1]
        return f'<a href="#sc-{_e(sid)}"><code>{_e(scenario)}</code></a>'

    def budget_title(self, budget: Any) -> str:
        return (
            "each scenario's own budget" if budget == SCENARIO_BUDGET else f"budget {budget} tokens"
        )


def _head(summary: Mapping[str, Any]) -> str:
    title = f"{word(summary)} · packproof eval: {summary['manifest'].get('name', '?')}"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "img-src data:; style-src 'unsafe-inline'\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="packproof eval">\n'
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n"
    )
