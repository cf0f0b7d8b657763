"""``frontier.png``: probe evidence recall against input cost per conversation
(every request: its steps and its probes).

Small multiples, one panel per cache profile (row) and budget (column), at the
run's first static prefix size (summary.md and report.html list every size).
Each spec is one point in the colours of the other plots, and specs on the same
spot are concentric dots; the Pareto frontier (replay.py) is a black step line,
since between two frontier costs the best recall reachable is the cheaper
point's; a dotted line marks 90% of the best recall and a ring the cheapest spec
above it. The legend below the grid numbers its entries; specs on the same spot
in every panel share an entry (``3  bm25 = hybrid(...)``), a panel's title names
the entries sharing a spot only there, and the ring's entry number is written
beside it, where it fits inside the panel. The figure's title wraps to its
width, so one panel keeps it whole. A run without a frontier (no replay, or no
cache profile priced) has no plot: :func:`frontier` returns None and no file
is written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from packproof.evals.report.model import ReportContext
from packproof.evals.report.plots.base import (
    concentric,
    concentric_key,
    empty,
    figure,
    identical,
    legend_below,
    png,
    run_colours,
    style,
    tex,
    text_width,
    title,
    within,
    wrap,
)

__all__ = ["frontier", "frontier_figure"]

_PANEL_W: Final = 3.7
_PANEL_H: Final = 3.1
_EQ: Final = "\u2009=\u2009"  # thin spaces: "3 = 5" never wraps inside
_NUMBERED: Final = "\u00a0\u00a0"  # no-break spaces: an entry's number stays on its line


def _spot(p: Mapping[str, Any]) -> tuple[float, float]:
    return round(float(p["input_cost"]), 6), round(float(p["recall"]), 6)


def _panel(
    ax: Any,
    f: Mapping[str, Any],
    colours: Mapping[str, str],
    entry: Mapping[str, int],
    fits: Callable[[str], bool],
) -> tuple[str, tuple[float, float]] | None:
    """Draw one panel; return the ring's label text and spot (placed after layout)."""
    budget = f["budget"]
    where = "own budget" if budget == "scenario" else f"budget {budget}"
    points: Sequence[Mapping[str, Any]] = f["points"]
    spots: dict[tuple[float, float], list[Mapping[str, Any]]] = {}
    for p in points:
        spots.setdefault(_spot(p), []).append(p)
    shared = sorted(
        _EQ.join(map(str, numbers))
        for here in spots.values()
        if len(numbers := sorted({entry[p["label"]] for p in here})) > 1
    )
    lines = wrap(f"{f['profile']} · {where}", fits, "")
    if shared:
        lines += wrap("same point: " + "; ".join(shared), fits, "")
    ax.set_title(tex("\n".join(line.rstrip() for line in lines)), fontsize=11)
    if not points:
        empty(ax, "no probe recall\n(no probe with gold evidence)")
        return None
    front = sorted(
        (p for p in points if p["pareto"]), key=lambda p: (p["input_cost"], -p["recall"])
    )
    ax.step(
        [p["input_cost"] for p in front],
        [p["recall"] for p in front],
        where="post",
        color="black",
        linewidth=1.2,
        zorder=2,
    )
    for (x, y), here in spots.items():
        concentric(ax, x, y, [colours[p["label"]] for p in here], 7)
        if any(p["pareto"] for p in here):  # the frontier's points ringed thinly
            size = 7 + 4 * (len(here) - 1)
            ax.plot(x, y, "o", markersize=size, mfc="none", mec="black", mew=0.8, zorder=4)
    costs = [p["input_cost"] for p in points]
    span = max(costs) - min(costs) or max(abs(max(costs)), 1.0)
    ax.set_xlim(min(costs) - 0.12 * span, max(costs) + 0.12 * span)
    ax.set_ylim(-0.04, 1.06)
    _cost_axis(ax)
    choice = f.get("cheapest_within_90")
    if not choice or _spot(choice) not in spots:
        return None
    ax.axhline(choice["threshold"], color="0.4", linestyle=":", linewidth=1.1)
    at = _spot(choice)
    ring = 17 + 4 * (len(spots[at]) - 1)  # diameter, in points
    ax.plot(*at, "o", markersize=ring, mfc="none", mec="black", mew=1.6, zorder=4)
    numbers = sorted({entry[p["label"]] for p in spots[at]})
    return _EQ.join(map(str, numbers)), at


def _ring_label(ax: Any, text: str, at: tuple[float, float], renderer: Any) -> None:
    """The ring's entry number beside it: left of it (cheaper points recall
    less, so that side is emptiest), else above, below or right, whichever
    first fits inside the panel; else in the panel's top left corner. Inside
    the panel it cannot touch a title, a tick label or another panel's text."""
    box = ax.get_window_extent(renderer)
    gap = 11.5
    style = {
        "fontsize": 10,
        "fontweight": "bold",
        "zorder": 5,
        "bbox": {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
    }
    sides = [((-gap, 0), "right", "center"), ((0, gap), "center", "bottom")]
    sides += [((0, -gap), "center", "top"), ((gap, 0), "left", "center")]
    for offset, ha, va in sides:
        label = ax.annotate(
            text, at, xytext=offset, textcoords="offset points", ha=ha, va=va, **style
        )
        extent = label.get_window_extent(renderer)
        inside = box.x0 <= extent.x0 and extent.x1 <= box.x1
        if inside and box.y0 <= extent.y0 and extent.y1 <= box.y1:
            return
        label.remove()
    ax.annotate(
        f"ring: {text}", (0.03, 0.97), xycoords="axes fraction", ha="left", va="top", **style
    )


def _cost_axis(ax: Any) -> None:
    """Plain numbers with thousands separators (no ``x10^4`` offset), few ticks."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
    ax.xaxis.set_major_formatter(
        FuncFormatter(lambda x, _: f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}")
    )


def frontier_figure(ctx: ReportContext) -> Any:
    """The frontier grid (see the module docstring), as a Figure; None when the
    run has no frontier."""
    replay: Mapping[str, Any] = ctx.summary.get("replay") or {}
    sizes = replay.get("static_prefix_tokens") or [0]
    frontiers = [f for f in replay.get("frontiers", []) if f["static_prefix_tokens"] == sizes[0]]
    if not frontiers:
        return None
    with style():
        profiles = list(dict.fromkeys(f["profile"] for f in frontiers))
        budgets = list(dict.fromkeys(str(f["budget"]) for f in frontiers))
        plotted = list(dict.fromkeys(p["label"] for f in frontiers for p in f["points"]))
        known = [s["label"] for s in ctx.summary["strategies"] if s["label"] in plotted]
        shown = known + [label for label in plotted if label not in known]
        where = {
            label: tuple(
                next((_spot(p) for p in f["points"] if p["label"] == label), None)
                for f in frontiers
            )
            for label in shown
        }
        merged = identical(where)
        entry = {label: i for i, same in enumerate(merged, 1) for label in same}
        fig = figure(_PANEL_W * len(budgets), _PANEL_H * len(profiles) + 0.6)
        axes = fig.subplots(len(profiles), len(budgets), squeeze=False, sharey=True)
        head = "Probe evidence recall vs input cost per conversation"
        if len(sizes) > 1 or sizes[0]:
            head += f" (static prefix {sizes[0]:,} tokens)"
        title(fig, head)
        colours = {label: "#808080" for label in shown} | run_colours(ctx)
        fits = within(text_width(fig, 11, "bold"), _PANEL_W - 0.3)
        rings = []
        for f in frontiers:
            ax = axes[profiles.index(f["profile"])][budgets.index(str(f["budget"]))]
            ring = _panel(ax, f, colours, entry, fits)
            if ring:
                rings.append((ax, *ring))
        for row in axes:
            row[0].set_ylabel("probe evidence recall")
        for ax in axes[-1]:
            ax.set_xlabel("input cost (input-token units)")
        entries: list[tuple[Any, str]] = [
            (
                concentric_key([colours[label] for label in same], 7),
                f"{i}{_NUMBERED}" + " = ".join(same),
            )
            for i, same in enumerate(merged, 1)
        ]
        entries += [
            (_key(color="black", linestyle="-"), "Pareto frontier (points ringed)"),
            (_key(color="0.4", linestyle=":"), "90% of best recall"),
            (
                _key(marker="o", markersize=12, mfc="none", mec="black", mew=1.6),
                "cheapest within 90% (its number)",
            ),
        ]
        legend_below(fig, entries, indent="    ")
        # The ring labels are placed once the layout has fixed the panels.
        fig.draw_without_rendering()
        fig.set_layout_engine("none")
        renderer = fig.canvas.get_renderer()
        for ax, text, at in rings:
            _ring_label(ax, text, at, renderer)
        return fig


def frontier(ctx: ReportContext) -> bytes | None:
    """``frontier.png`` (see :func:`frontier_figure`); None: no file."""

    def make() -> bytes | None:
        fig = frontier_figure(ctx)
        return None if fig is None else png(fig)

    made: bytes | None = ctx.once("frontier.png", make)  # report.html embeds it too
    return made


def _key(**style: Any) -> Any:
    """A legend entry drawn as ``style`` says (``linestyle`` none unless given)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], **{"linestyle": "none", "markersize": 7, **style})
