"""The recall plots of an eval report, each a function ``ReportContext -> bytes``
(None when the run has nothing to plot: no file is written).

* :func:`recall_vs_budget`: mean evidence recall against the token budget, per
  strategy, with its bootstrap band and the oracle ceiling;
* :func:`recall_vs_stability`: the trade-off between evidence recall and prefix
  stability, one panel per budget of the run.

Each is drawn by a ``*_figure`` function returning the matplotlib Figure (the
tests measure its text), or None without data, and saved by a thin wrapper.
base.py has the style and the legend, colours.py the colour of each strategy
label. Strategies with identical results share one legend entry (``bm25 =
hybrid(...)``) and are drawn one over another, the lower wider, so every colour
stays visible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from packproof.evals.report.model import ReportContext
from packproof.evals.report.plots.base import (
    concentric,
    concentric_key,
    draw_lines,
    empty,
    figure,
    identical,
    legend_below,
    numeric,
    png,
    run_colours,
    stacked_key,
    style,
    tex,
    text_width,
    title,
    wrap,
)
from packproof.evals.run.config import SCENARIO_BUDGET

__all__ = [
    "recall_vs_budget",
    "recall_vs_budget_figure",
    "recall_vs_stability",
    "recall_vs_stability_figure",
]

# Lines closer than this (in recall) are drawn stacked where they run together.
_CLOSE: Final = 0.01


def _groups(ctx: ReportContext) -> Sequence[Mapping[str, Any]]:
    groups: Sequence[Mapping[str, Any]] = ctx.summary["groups"]
    return groups


def _conf(ctx: ReportContext) -> int:
    return round(float(ctx.summary.get("confidence", 0.95)) * 100)


def _recall(g: Mapping[str, Any]) -> Mapping[str, Any] | None:
    stat: Mapping[str, Any] | None = (g.get("metrics") or {}).get("evidence_recall")
    return stat


def recall_vs_budget_figure(ctx: ReportContext) -> Any:
    """Mean evidence recall (y) against the token budget (x, log2 scale, numeric
    budgets only) for each strategy, a shaded band from the low to the high end
    of its bootstrap interval, and the oracle ceiling (the best evidence recall
    any pack within the budget could reach) as a dashed black line. None when
    no strategy has evidence recall at a numeric budget."""
    colours = run_colours(ctx)
    budgets = sorted({g["budget"] for g in _groups(ctx) if numeric(g["budget"])})
    series: dict[str, list[tuple[Any, Mapping[str, Any]]]] = {}
    for strategy in ctx.summary["strategies"]:
        points = sorted(
            ((g["budget"], stat) for g in _groups(ctx) if g["spec"] == strategy["spec"]
             and numeric(g["budget"]) and (stat := _recall(g))),
            key=lambda p: p[0],
        )  # fmt: skip
        if points:
            series[strategy["label"]] = points
    if not series:
        return None
    means = {label: [(b, float(s["mean"])) for b, s in pts] for label, pts in series.items()}
    with style():
        fig = figure(9.0, 5.0)
        ax = fig.add_subplot()
        ax.set_title("Evidence recall vs token budget")
        draw_lines(ax, means, colours, lambda a, b: abs(a - b) <= _CLOSE)
        entries: list[tuple[Any, str]] = []
        for same in identical({label: tuple(m) for label, m in means.items()}):
            ax.fill_between(
                [b for b, _ in series[same[0]]],
                [s["low"] for _, s in series[same[0]]],
                [s["high"] for _, s in series[same[0]]],
                color=colours[same[0]],
                alpha=0.12,
                linewidth=0,
            )
            entries.append((stacked_key([colours[label] for label in same]), " = ".join(same)))
        oracle: dict[Any, float] = {}
        for g in _groups(ctx):
            stat = (g.get("metrics") or {}).get("oracle_recall")
            if numeric(g["budget"]) and stat and g["budget"] not in oracle:
                oracle[g["budget"]] = stat["mean"]
        if oracle:
            xs = sorted(oracle)
            (line,) = ax.plot(
                xs, [oracle[x] for x in xs], linestyle="--", color="black", linewidth=1.4
            )
            entries.append((line, "oracle ceiling"))
        ax.set_xscale("log", base=2)
        ax.set_xticks(budgets, [str(b) for b in budgets])
        ax.minorticks_off()
        ax.set_ylim(-0.02, 1.05)
        ax.set_xlabel("budget (tokens, log2 scale)")
        ax.set_ylabel(f"mean evidence recall ({_conf(ctx)}% bootstrap band)")
        legend_below(fig, entries, handle_em=3.0)
        return fig


def _panels(ctx: ReportContext) -> list[Any]:
    """The run's budgets: numeric ones ascending, then each scenario's own."""
    seen = list(dict.fromkeys(g["budget"] for g in _groups(ctx)))
    return sorted(b for b in seen if numeric(b)) + [b for b in seen if not numeric(b)]


def recall_vs_stability_figure(ctx: ReportContext) -> Any:
    """One panel per budget of the run: every strategy as a point of mean prefix
    stability across conversation turns (x) and mean evidence recall (y), with
    both bootstrap intervals as error bars. Strategies whose stability is unknown
    (no multi-turn scenario) are left out, and a panel without any says why.
    Points on one spot are concentric dots; strategies on the same spot in every
    panel share a legend entry, and a panel's title names the others it has.
    None when no strategy has both anywhere."""
    colours = run_colours(ctx)
    budgets = _panels(ctx) or [SCENARIO_BUDGET]
    points: dict[Any, dict[str, tuple[Mapping[str, Any], Mapping[str, Any]]]] = {}
    for b in budgets:
        points[b] = {}
    for g in _groups(ctx):
        stab, recall = g.get("prefix_stability"), _recall(g)
        if stab and recall:
            points[g["budget"]][g["label"]] = (stab, recall)
    labels = [
        s["label"]
        for s in ctx.summary["strategies"]
        if any(s["label"] in p for p in points.values())
    ]
    if not labels:
        return None

    def spot(label: str, b: Any) -> tuple[float, float] | None:
        if label not in points[b]:
            return None
        stab, recall = points[b][label]
        return round(stab["mean"], 6), round(recall["mean"], 6)

    merged = identical({label: tuple(spot(label, b) for b in budgets) for label in labels})
    entry = {label: i for i, same in enumerate(merged, 1) for label in same}
    notes = {b: _shared(points[b], spot, b, entry) for b in budgets}
    numbered = any(notes.values())
    ncols = 2 if len(budgets) in (2, 4) else min(3, len(budgets))
    nrows = -(-len(budgets) // ncols)
    with style():
        fig = figure(3.5 * ncols + 0.6, 3.1 * nrows + 0.7)
        axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
        for ax in axes[len(budgets) :]:
            ax.remove()
        title(fig, "Evidence recall vs prefix stability")
        width, room = text_width(fig, 11, "bold"), fig.get_figwidth() / ncols - 0.5
        for ax, b in zip(axes, budgets, strict=False):
            head = "each scenario's own budget" if b == SCENARIO_BUDGET else f"budget {b}"
            lines = wrap(head, lambda s: width(s) <= room, "")
            if notes[b]:
                lines += wrap(notes[b], lambda s: width(s) <= room, "")
            ax.set_title(tex("\n".join(line.rstrip() for line in lines)), fontsize=11)
            if not points[b]:
                empty(
                    ax,
                    "no strategy has both evidence\nrecall and prefix stability here\n"
                    "(prefix stability needs\nmulti-turn scenarios)",
                )
                continue
            _stability_panel(ax, points[b], spot, b, colours)
        conf = _conf(ctx)
        for i, ax in enumerate(axes[: len(budgets)]):
            if i + ncols >= len(budgets):  # nothing below it
                ax.set_xlabel(f"mean prefix stability ({conf}% interval)")
            if i % ncols == 0:
                ax.set_ylabel(f"mean evidence recall ({conf}% interval)")
        entries = [
            (
                concentric_key([colours[label] for label in same], 7),
                (f"{i}\u00a0\u00a0" if numbered else "") + " = ".join(same),
            )
            for i, same in enumerate(merged, 1)
        ]
        legend_below(fig, entries, indent="    " if numbered else "  ")
        return fig


def _shared(here: Mapping[str, Any], spot: Any, b: Any, entry: Mapping[str, int]) -> str:
    """``same point: 2 = 3; 4 = 6``: legend entries sharing a spot in this panel."""
    spots: dict[Any, list[int]] = {}
    for label in here:
        numbers = spots.setdefault(spot(label, b), [])
        if entry[label] not in numbers:
            numbers.append(entry[label])
    shared = ["\u2009=\u2009".join(map(str, sorted(n))) for n in spots.values() if len(n) > 1]
    return "same point: " + "; ".join(sorted(shared)) if shared else ""


def _stability_panel(
    ax: Any,
    here: Mapping[str, tuple[Mapping[str, Any], Mapping[str, Any]]],
    spot: Any,
    b: Any,
    colours: Mapping[str, str],
) -> None:
    spots: dict[Any, list[str]] = {}
    for label, (stab, recall) in here.items():
        x, y = stab["mean"], recall["mean"]
        ax.errorbar(
            x,
            y,
            xerr=[[x - stab["low"]], [stab["high"] - x]],
            yerr=[[y - recall["low"]], [recall["high"] - y]],
            fmt="none",
            ecolor=colours[label],
            elinewidth=1,
            alpha=0.35,
            capsize=2,
        )
        spots.setdefault(spot(label, b), []).append(label)
    for (x, y), labels in spots.items():
        concentric(ax, x, y, [colours[label] for label in labels], 7)
    ax.set_xlim(-0.05, 1.08)
    ax.set_ylim(-0.05, 1.08)


def recall_vs_budget(ctx: ReportContext) -> bytes | None:
    """``recall_vs_budget.png`` (see :func:`recall_vs_budget_figure`); None: no file."""

    def make() -> bytes | None:
        fig = recall_vs_budget_figure(ctx)
        return None if fig is None else png(fig)

    made: bytes | None = ctx.once("recall_vs_budget.png", make)  # report.html embeds it too
    return made


def recall_vs_stability(ctx: ReportContext) -> bytes | None:
    """``recall_vs_stability.png`` (see :func:`recall_vs_stability_figure`); None: no file."""

    def make() -> bytes | None:
        fig = recall_vs_stability_figure(ctx)
        return None if fig is None else png(fig)

    made: bytes | None = ctx.once("recall_vs_stability.png", make)  # report.html embeds it too
    return made
