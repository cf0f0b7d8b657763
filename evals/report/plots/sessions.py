"""``sessions.png``: label-free evidence recall against input cost in USD, one
point per spec and budget, on the Claude Code sessions priced as billed
(``evals/report/sessions.py``).

Each spec is one colour (colours.py), its budgets joined by a thin line in budget
order and marked by shape; the sessions as billed (every earlier message sent,
recall 1) are a black star, and the same prompts priced by the model a hollow
one, so the distance between the two stars is the pricing's own error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from packproof.evals.report.plots.base import figure, legend_below, png, style, title
from packproof.evals.report.plots.colours import colours_for

if TYPE_CHECKING:
    from packproof.evals.report.sessions import SessionsReport

__all__ = ["sessions_figure", "sessions_plot"]

_MARKERS: Final = ("o", "s", "^", "D", "v", "P", "X", "h")


def sessions_figure(report: SessionsReport) -> Any:
    """The plot (module docstring) as a Figure."""
    from matplotlib.lines import Line2D

    with style():
        fig = figure(9.0, 6.0)
        ax = fig.subplots()
        title(fig, "Claude Code sessions: evidence recall vs input cost, priced as billed")
        series: dict[str, list[Any]] = {}
        for r in report.rows:
            series.setdefault(r.spec, []).append(r)
        colours = colours_for(series)
        budgets = list(dict.fromkeys(r.budget for r in report.rows))
        marker = {b: _MARKERS[i % len(_MARKERS)] for i, b in enumerate(budgets)}
        for spec, rows in series.items():
            shown = [r for r in rows if r.recall is not None]
            ax.plot(
                [r.usd for r in shown], [r.recall for r in shown], "-",
                color=colours[spec], linewidth=0.8, alpha=0.6, zorder=2,
            )  # fmt: skip
            for r in shown:
                ax.plot(r.usd, r.recall, marker[r.budget], color=colours[spec], ms=7, zorder=3)
        a, s = report.actual, report.as_sent
        ax.plot(a.usd, 1.0, "*", color="black", ms=16, zorder=4)
        ax.plot(s.usd, 1.0, "*", mfc="none", mec="black", ms=16, mew=1.2, zorder=4)
        ax.set_xlabel("input cost, USD (the sessions' own models, lifetimes and warm start)")
        ax.set_ylabel("label-free evidence recall (mean over steps)")
        ax.set_xlim(left=0)
        ax.set_ylim(0, 1.05)
        entries: list[tuple[Any, str]] = [
            (Line2D([], [], color=colours[spec], marker="o", linewidth=0.8), spec)
            for spec in series
        ]
        entries += [
            (Line2D([], [], color="0.3", marker=marker[b], linestyle="none"), f"budget {b}")
            for b in budgets
        ]
        entries += [
            (
                Line2D([], [], color="black", marker="*", ms=12, linestyle="none"),
                f"the sessions as billed (${a.usd:.2f})",
            ),
            (
                Line2D([], [], mfc="none", mec="black", marker="*", ms=12, linestyle="none"),
                f"the same prompts priced by the model (${s.usd:.2f})",
            ),
        ]
        legend_below(fig, entries)
        return fig


def sessions_plot(report: SessionsReport) -> bytes:
    """``sessions.png`` (see :func:`sessions_figure`)."""
    return png(sessions_figure(report))
