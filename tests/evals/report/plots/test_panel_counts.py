"""The multi-panel plots stay legible from 1 to 40 panels: the figure's title
and every legend entry lie whole inside the figure, no text covers another, and
no wrapped line cuts a word or a number.

The panels hold the crowded case of test_plots.py (eleven strategies with long
labels, merged entries, most on one spot in some panels), or three short labels
(a legend in columns, where a long fixed entry is squeezed hardest): the frontier
as profiles x budgets (1 x 1 up to 10 x 4, the LoCoMo replay run's grid), the
recall-vs-stability plot as one panel per budget."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from packproof.evals.report.model import ReportContext
from packproof.evals.report.plots.frontier import frontier_figure
from packproof.evals.report.plots.recall import recall_vs_stability_figure
from tests.evals.report.plots.test_plots import (
    LABELS,
    cut_inside,
    drawn_texts,
    overlaps,
    stat,
    value,
)

COUNTS = (1, 2, 5, 10, 20, 40)
# Frontier panels as (profiles, budgets): one budget under two profiles is the
# narrowest figure with the longest title.
GRID = {1: (1, 1), 2: (2, 1), 5: (5, 1), 10: (5, 2), 20: (5, 4), 40: (10, 4)}
PROFILES = [
    "anthropic",
    "anthropic-1h",
    "anthropic-2048",
    "anthropic-4096",
    "openai",
    "openai-gpt4o",
    "openai-gpt5",
    "gemini",
    "gemini-2.5",
    "deepseek",
]
SHORT = ["chronological", "bm25", "hybrid"]
FRONTIER_TITLE = "Probe evidence recall vs input cost per conversation (static prefix 2,000 tokens)"


def panels(count: int, labels: list[str]) -> ReportContext:
    """A run of ``labels`` (some of :data:`LABELS`) whose recall-vs-stability
    plot has ``count`` panels (one per budget) and whose frontier has ``count``
    panels (:data:`GRID`)."""
    budgets: list[Any] = [128 * (i + 1) for i in range(count - 1)] + ["scenario"]
    groups = []
    for (i, label), (k, b) in itertools.product(enumerate(labels), enumerate(budgets)):
        recall, stability = value(label, 512, k % 5), value(label, 1024, (k + 5) % 7)
        if k % 3 == 2 and i < 9:  # most strategies on one spot
            recall, stability = 0.9, 1.0
        groups.append(
            {
                "spec": f"spec:{label}",
                "label": label,
                "budget": b,
                "metrics": {"evidence_recall": stat(recall)},
                "prefix_stability": stat(stability, 0.2),
            }
        )
    n_profiles, n_budgets = GRID[count]
    frontiers = []
    for p, b in itertools.product(PROFILES[:n_profiles], [1024 * 2**j for j in range(n_budgets)]):
        points = [
            {
                "label": label,
                "input_cost": 250_000.0 * (1 + 4 * value(label, 1024, b % 7)),
                "recall": 0.9 if b > 1024 and i < 5 else value(label, 512, 1),
                "pareto": i % 3 == 0,
            }
            for i, label in enumerate(labels)
        ]
        choice = min(points, key=lambda q: (q["input_cost"], -q["recall"]))
        frontiers.append(
            {
                "profile": p,
                "budget": b,
                "static_prefix_tokens": 2000,
                "points": points,
                "cheapest_within_90": {**choice, "threshold": 0.9 * choice["recall"]},
            }
        )
    summary = {
        "confidence": 0.95,
        "strategies": [{"label": label, "spec": f"spec:{label}"} for label in labels],
        "groups": groups,
        "replay": {"static_prefix_tokens": [2000, 0], "frontiers": frontiers},
    }
    return ReportContext(summary=summary, records=[], scenarios={})


FIGURES = {"frontier": frontier_figure, "recall_vs_stability": recall_vs_stability_figure}


@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("labels", ["crowded", "short"])
@pytest.mark.parametrize("name", FIGURES)
def test_title_and_legend_are_whole_inside_the_figure_at_every_panel_count(
    name: str, labels: str, count: int
) -> None:
    fig = FIGURES[name](panels(count, LABELS if labels == "crowded" else SHORT))
    panels_drawn = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels_drawn) == count
    texts = drawn_texts(fig)
    width, height = fig.bbox.width, fig.bbox.height
    outside = [
        text
        for text, box in texts
        if box.x0 < -1 or box.y0 < -1 or box.x1 > width + 1 or box.y1 > height + 1
    ]
    assert outside == []
    clashes = [(a, b) for (a, x), (b, y) in itertools.combinations(texts, 2) if overlaps(x, y)]
    assert clashes == []
    # the title is drawn, whole: its lines put back together are the title
    heading = fig.get_suptitle()
    assert heading in [t for t, _ in texts]
    expected = FRONTIER_TITLE if name == "frontier" else "Evidence recall vs prefix stability"
    assert " ".join(heading.split("\n")) == expected
    # every legend entry is drawn and no wrapped line cuts a word or a number
    (legend,) = fig.legends
    entries = [t.get_text() for t in legend.get_texts()]
    assert all(e in [t for t, _ in texts] for e in entries)
    cuts = [
        (upper, lower)
        for entry in entries
        for upper, lower in itertools.pairwise(entry.split("\n"))
        if cut_inside(upper, lower)
    ]
    assert cuts == []
