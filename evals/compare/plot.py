"""compare.png: a forest plot of a :class:`~packproof.evals.compare.model.Comparison`.

One panel per metric shown (the main metric, then each other metric with a
marked change, at most :data:`PANELS`): a row per (strategy label, budget), the
paired mean difference B - A as a dot with its cluster-bootstrap interval as
an error bar, a zero line. A dot is filled where the change is significant
(the interval excludes 0 and p <= alpha), hollow where it is not; a row whose
paired cells are all equal has no bar. Labels are told apart by their colour
(colours.py, as in the runs' own plots) and named in the legend below, the
budgets are the tick labels, so no text sits next to the data (report/plots/base.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from packproof.evals.compare.model import ALL_BUDGETS
from packproof.evals.compare.text import SAME_RUN, arrow, budget_name, mark
from packproof.evals.report.plots.base import (
    empty,
    figure,
    legend_below,
    png,
    style,
    tex,
    text_width,
    within,
    wrap,
)
from packproof.evals.report.plots.colours import colours_for
from packproof.evals.report.plots.configdir import ready
from packproof.evals.report.text import metric_name

if TYPE_CHECKING:
    from packproof.evals.compare.model import Change, Comparison

__all__ = ["PANELS", "compare_figure", "compare_png", "panel_metrics"]

PANELS: Final = 4
_ROW: Final = 0.24  # inches a row
_PANEL_WIDTH: Final = 3.4  # inches
_SIGNIFICANT: Final = ("better", "worse", "changed")


def panel_metrics(cmp: Comparison) -> list[str]:
    """The main metric, then the other metrics with a marked change."""
    marked = {c.metric for c in cmp.changes if mark(c) not in ("", "=")}
    return [cmp.main, *(m for m in cmp.metrics[1:] if m in marked)][:PANELS]


def _rows(cmp: Comparison) -> dict[tuple[str, str], float]:
    """The y of each (label, budget) row, the first on top; a label's ``all``
    row (a ranking metric shown once) sits at the middle of its block, so the
    blocks line up across panels."""
    ys: dict[tuple[str, str], float] = {}
    count = len(cmp.labels) * len(cmp.budgets)
    for i, label in enumerate(cmp.labels):
        block = [count - 1 - (i * len(cmp.budgets) + j) for j in range(len(cmp.budgets))]
        ys.update({(label, b): float(y) for b, y in zip(cmp.budgets, block, strict=True)})
        ys[(label, ALL_BUDGETS)] = sum(block) / len(block)
    return ys


def _style(c: Change) -> dict[str, Any]:
    """Filled when significant, half filled when only the interval excludes 0."""
    if c.verdict in _SIGNIFICANT:
        return {}
    return {"fillstyle": "left"} if c.excludes_zero else {"markerfacecolor": "white"}


def _panel(
    ax: Any,
    rows: Sequence[Change],
    ys: Mapping[tuple[str, str], float],
    rules: Sequence[float],
    colours: Mapping[str, str],
) -> None:
    for c in rows:
        y, colour, stat = ys[(c.label, c.budget)], colours[c.label], c.stat
        if c.verdict != "same":
            ax.errorbar(
                stat["mean"],
                y,
                xerr=[[stat["mean"] - stat["low"]], [stat["high"] - stat["mean"]]],
                fmt="none",
                ecolor=colour,
                elinewidth=1.6,
                capsize=3,
                zorder=2,
            )
        ax.plot(
            stat["mean"],
            y,
            "o",
            markersize=6.5,
            color=colour,
            markerfacecoloralt="white",
            markeredgewidth=1.6,
            zorder=3,
            **_style(c),
        )
    for y in rules:  # a faint rule between two labels' blocks
        ax.axhline(y, color="0.75", linewidth=0.8, zorder=1)
    ax.axvline(0, color="black", linewidth=1.0, zorder=1)
    ax.set_yticks(
        [ys[(c.label, c.budget)] for c in rows], [tex(budget_name(c.budget)) for c in rows]
    )
    ax.tick_params(axis="y", labelsize=9)
    ax.set_ylim(-0.7, max(ys.values()) + 0.7)
    ax.grid(False, axis="y")
    low = min(min(c.stat["low"] for c in rows), 0.0)
    high = max(max(c.stat["high"] for c in rows), 0.0)
    pad = (high - low) * 0.08 if high - low > 1e-9 else 0.05
    ax.set_xlim(low - pad, high + pad)


def compare_figure(cmp: Comparison) -> Any:
    """The forest plot (see the module docstring) as a matplotlib Figure."""
    ready()  # matplotlib's folders settled before it is imported
    from matplotlib.lines import Line2D

    metrics = panel_metrics(cmp)
    colours = colours_for(cmp.b.labels)
    panels = [[c for c in cmp.changes if c.metric == m] for m in metrics]
    ys = _rows(cmp)
    rows = len(cmp.labels) * len(cmp.budgets)
    rules = [rows - k * len(cmp.budgets) - 0.5 for k in range(1, len(cmp.labels))]
    conf = round(cmp.confidence * 100)
    with style():
        fig = figure(max(7.0, _PANEL_WIDTH * len(metrics) + 0.8), 1.6 + _ROW * max(rows, 4))
        axes = fig.subplots(1, len(metrics), squeeze=False).ravel()
        title = f"{cmp.a.run_id} → {cmp.b.run_id}: paired differences B − A"
        if cmp.same_run:  # never one run shown as two without saying so
            title += f" ({SAME_RUN[cmp.same_run]} on both sides)"
        fits = within(text_width(fig, 13, "bold"), fig.get_figwidth() - 0.4)
        fig.suptitle(tex("\n".join(wrap(title, fits))), fontsize=13, fontweight="bold")
        label_fits = within(text_width(fig, 10), _PANEL_WIDTH - 0.9)
        for ax, metric, here in zip(axes, metrics, panels, strict=True):
            better = here[0].better if here else 0
            ax.set_title(tex(metric_name(metric) + arrow(better)), fontsize=11)
            if not here:
                empty(ax, "no paired cells")
                continue
            _panel(ax, here, ys, rules, colours)
            way = {1: ", better →", -1: ", ← better", 0: ""}[better]
            xlabel = f"B − A ({conf}% interval over scenarios){way}"
            ax.set_xlabel(tex("\n".join(wrap(xlabel, label_fits, ""))), fontsize=10)
        axes[0].set_ylabel("budget", fontsize=10)
        shown = list(dict.fromkeys(c.label for p in panels for c in p))
        entries: list[tuple[Any, str]] = [
            (Line2D([], [], linestyle="none", marker="o", color=colours[label]), label)
            for label in shown
        ]
        entries += [
            (
                Line2D([], [], linestyle="none", marker="o", color="0.3"),
                f"significant: interval excludes 0, p ≤ {cmp.alpha:g}",
            ),
            (
                Line2D([], [], linestyle="none", marker="o", color="0.3", markerfacecolor="white"),
                "not significant",
            ),
        ]
        if any(c.excludes_zero and c.verdict not in _SIGNIFICANT for p in panels for c in p):
            half = Line2D([], [], linestyle="none", marker="o", color="0.3", fillstyle="left")
            half.set_markerfacecoloralt("white")
            entries.append((half, f"interval excludes 0, p > {cmp.alpha:g}"))
        legend_below(fig, entries, handle_em=1.5)
        return fig


def compare_png(cmp: Comparison) -> bytes:
    """compare.png (see :func:`compare_figure`)."""
    return png(compare_figure(cmp))
