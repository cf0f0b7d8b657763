"""Every report format, by output file name: :data:`RENDERERS`.

Each renderer turns the one :class:`~packproof.evals.report.model.ReportContext`
into one file of the run directory, or returns None when that file would have
nothing to show (a plot without data: no replay, no frontier.png), and the run
writes no file for it; the renderers live one module per format
(markdown.py, csv_json.py, junit.py), one folder for report.html (html/) and one
module per plot family (plots/). This module is the only one that imports them all.
"""

from __future__ import annotations

from collections.abc import Callable

from packproof.evals.report.csv_json import render_csv, render_json
from packproof.evals.report.html.page import render_html
from packproof.evals.report.junit import render_junit
from packproof.evals.report.markdown import render_markdown
from packproof.evals.report.model import ReportContext
from packproof.evals.report.plots.frontier import frontier
from packproof.evals.report.plots.latency import latency
from packproof.evals.report.plots.recall import recall_vs_budget, recall_vs_stability

__all__ = ["RENDERERS", "Renderer"]

# Renderers by output file name; a renderer returns text (str), bytes (images)
# or None (no file: the plot has no data).
Renderer = Callable[[ReportContext], str | bytes | None]
RENDERERS: dict[str, Renderer] = {
    "junit.xml": render_junit,
    "metrics.csv": render_csv,
    "summary.json": render_json,
    "summary.md": render_markdown,
    "report.html": render_html,
    "recall_vs_budget.png": recall_vs_budget,
    "recall_vs_stability.png": recall_vs_stability,
    "latency.png": latency,
    "frontier.png": frontier,  # only with replays
}
