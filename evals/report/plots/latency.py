"""``latency.png``: the distribution of per-cell packing latency per strategy
(no file when no cell recorded one)."""

from __future__ import annotations

import inspect
from typing import Any, Final

from packproof.evals.report.model import ReportContext
from packproof.evals.report.plots.base import (
    figure,
    png,
    run_colours,
    style,
    tex,
    text_width,
    within,
    wrap,
)

__all__ = ["latency", "latency_figure"]

# Latencies are rounded to 0.001 ms; a 0 would vanish on the log axis.
_MIN_MS: Final = 0.001


def latency_figure(ctx: ReportContext) -> Any:
    """The distribution of per-cell packing latency (``latency_ms`` of every
    record, all budgets) as one horizontal box plot per strategy on a log scale:
    the box spans the quartiles, the line is the median, the whiskers reach
    1.5 IQR and the dots are outliers. Latency differs from run to run. Long
    labels wrap, so they take at most a third of the width. None when no cell
    recorded a latency."""
    labels = {s["spec"]: s["label"] for s in ctx.summary["strategies"]}
    colours = run_colours(ctx)
    data: dict[str, list[float]] = {spec: [] for spec in labels}
    for r in ctx.records:
        if r["spec"] in data and r.get("latency_ms") is not None:
            data[r["spec"]].append(max(float(r["latency_ms"]), _MIN_MS))
    rows = [(labels[spec], values) for spec, values in data.items() if values]
    if not rows:
        return None
    rows.reverse()  # the first strategy on top
    with style():
        fig = figure(9.0, 3.2)
        ax = fig.add_subplot()
        ax.set_title("Packing latency per cell")
        fits = within(text_width(fig, 10), 3.0)
        ticks = [_tick(wrap(label, fits, indent=""), f"(n={len(v)})", fits) for label, v in rows]
        # room for each row's lines (0.19 in each at 10 pt) and the box between
        fig.set_figheight(1.3 + sum(max(0.45, 0.19 * t.count("\n") + 0.36) for t in ticks))
        box = ax.boxplot(
            [values for _, values in rows],
            **_horizontal(ax),
            widths=0.6,
            patch_artist=True,
            flierprops={"marker": ".", "markersize": 3, "alpha": 0.5},
            medianprops={"color": "black", "linewidth": 1.5},
        )
        for patch, (label, _) in zip(box["boxes"], rows, strict=True):
            patch.set_facecolor(colours[label])
            patch.set_alpha(0.55)
        ax.set_yticks(range(1, len(rows) + 1), [tex(t) for t in ticks])
        ax.set_xscale("log")
        ax.set_xlabel("latency per cell (ms, log scale)")
        ax.grid(False, axis="y")
        return fig


def _tick(lines: list[str], count: str, fits: Any) -> str:
    """A latency row's label: the strategy's lines, then its count of cells,
    on the last line if it fits there."""
    if fits(f"{lines[-1]}  {count}"):
        return "\n".join([*lines[:-1], f"{lines[-1]}  {count}"])
    return "\n".join([*lines, count])


def _horizontal(ax: Any) -> dict[str, Any]:
    """Horizontal boxes: ``orientation`` since matplotlib 3.10, ``vert`` before."""
    if "orientation" in inspect.signature(ax.boxplot).parameters:
        return {"orientation": "horizontal"}
    return {"vert": False}


def latency(ctx: ReportContext) -> bytes | None:
    """``latency.png`` (see :func:`latency_figure`); None: no file."""

    def make() -> bytes | None:
        fig = latency_figure(ctx)
        return None if fig is None else png(fig)

    made: bytes | None = ctx.once("latency.png", make)  # report.html embeds it too
    return made
