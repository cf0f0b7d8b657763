"""``frontier.png``: probe evidence recall against conversation input cost.

Small multiples, one panel per cache profile (row) and budget (column), at the
run's first static prefix size (summary.md and report.html list every size).
Each spec is one point in the colours of the other plots; the Pareto frontier
(replay.py) is a black step line, since between two frontier costs the best
recall reachable is the cheaper point's; a dotted line marks 90% of the best
recall and a ring the cheapest spec above it, labelled with the spec's number
in the legend (below the grid, so long spec labels never cover a panel). Like
the other plots, the file is always written: without replays it says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ctxpack.evals.report.model import ReportContext
from ctxpack.evals.report.plots import _colours, _empty, _figure, _png, _style, _tex

__all__ = ["frontier"]

_PANEL_W: Final = 3.7
_PANEL_H: Final = 3.1
_LEGEND_ROW_H: Final = 0.22  # inches per legend row


def _panel(
    ax: Any, f: Mapping[str, Any], colours: Mapping[str, Any], numbers: Mapping[str, int]
) -> None:
    budget = f["budget"]
    where = "own budget" if budget == "scenario" else f"budget {budget}"
    ax.set_title(f"{_tex(f['profile'])} · {where}", fontsize=11)
    points: Sequence[Mapping[str, Any]] = f["points"]
    if not points:
        _empty(ax, "no probe recall\n(no probe with gold evidence)")
        return
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
    choice = f["cheapest_within_90"]
    ax.axhline(choice["threshold"], color="0.4", linestyle=":", linewidth=1.1)
    # Specs on the same spot are drawn as concentric dots, the first the largest,
    # so every colour stays visible.
    spots: dict[tuple[float, float], list[Mapping[str, Any]]] = {}
    for p in points:
        spots.setdefault((p["input_cost"], p["recall"]), []).append(p)
    for (x, y), here in spots.items():
        for i, p in enumerate(here):
            ax.plot(
                x,
                y,
                "o",
                markersize=(8 if p["pareto"] else 6) + 4 * (len(here) - 1 - i),
                color=colours.get(p["label"], "0.5"),
                markeredgecolor="black" if p["pareto"] and i == 0 else "none",
                markeredgewidth=0.8,
                zorder=3 + i / len(here),
            )
    shared = spots[(choice["input_cost"], choice["recall"])]
    ring = 17 + 4 * (len(shared) - 1)  # diameter, in points
    ax.plot(
        choice["input_cost"],
        choice["recall"],
        "o",
        markersize=ring,
        markerfacecolor="none",
        markeredgecolor="black",
        markeredgewidth=1.6,
        zorder=4,
    )
    # Every cheaper point recalls less than the threshold, so the space left of
    # the choice is free; when it is the cheapest, above (or below) it is.
    left = choice["input_cost"] > min(p["input_cost"] for p in points)
    high = choice["recall"] > 0.85
    gap = ring / 2 + 3
    ax.annotate(
        " = ".join(str(numbers.get(p["label"], "?")) for p in shared),
        (choice["input_cost"], choice["recall"]),
        xytext=(-gap, 0) if left else (0, -gap if high else gap),
        textcoords="offset points",
        ha="right" if left else "center",
        va="center" if left else "top" if high else "bottom",
        fontsize=10,
        fontweight="bold",
        zorder=5,
        bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
    )
    costs = [p["input_cost"] for p in points]
    span = max(costs) - min(costs) or max(abs(max(costs)), 1.0)
    ax.set_xlim(min(costs) - 0.12 * span, max(costs) + 0.12 * span)
    ax.set_ylim(-0.04, 1.06)
    _cost_axis(ax)


def _cost_axis(ax: Any) -> None:
    """Plain numbers with thousands separators (no ``x10^4`` offset), few ticks."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
    ax.xaxis.set_major_formatter(
        FuncFormatter(lambda x, _: f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}")
    )


def frontier(ctx: ReportContext) -> bytes:
    """The frontier grid (see the module docstring)."""
    replay: Mapping[str, Any] = ctx.summary.get("replay") or {}
    sizes = replay.get("static_prefix_tokens") or [0]
    frontiers = [f for f in replay.get("frontiers", []) if f["static_prefix_tokens"] == sizes[0]]
    with _style():
        if not frontiers:
            fig = _figure(8.0, 3.4)
            ax = fig.add_subplot()
            ax.set_title("Probe recall vs conversation input cost")
            _empty(
                ax,
                "no replay in this run (or no cache profile priced):\n"
                "the frontier needs replay scenarios",
            )
            return _png(fig)
        profiles = list(dict.fromkeys(f["profile"] for f in frontiers))
        budgets = list(dict.fromkeys(str(f["budget"]) for f in frontiers))
        shown = [
            s["label"]
            for s in ctx.summary["strategies"]
            if any(p["label"] == s["label"] for f in frontiers for p in f["points"])
        ]
        numbers = {label: i for i, label in enumerate(shown, 1)}
        columns = 2 if len(budgets) < 3 else 3
        rows = -(-(len(shown) + 3) // columns)
        fig = _figure(
            _PANEL_W * len(budgets), _PANEL_H * len(profiles) + 0.9 + _LEGEND_ROW_H * rows
        )
        axes = fig.subplots(len(profiles), len(budgets), squeeze=False, sharey=True)
        title = "Probe evidence recall vs conversation input cost"
        if len(sizes) > 1 or sizes[0]:
            title += f" (static prefix {sizes[0]:,} tokens)"
        fig.suptitle(title, fontsize=13, fontweight="bold")
        colours = _colours(ctx)
        for f in frontiers:
            ax = axes[profiles.index(f["profile"])][budgets.index(str(f["budget"]))]
            _panel(ax, f, colours, numbers)
        for row in axes:
            row[0].set_ylabel("probe evidence recall")
        for ax in axes[-1]:
            ax.set_xlabel("input cost (input-token units)")
        handles = [
            _key(label=f"{numbers[label]}  {_tex(label)}", marker="o", color=colours[label])
            for label in shown
        ]
        handles += [
            _key(label="Pareto frontier", color="black", linestyle="-"),
            _key(label="90% of best recall", color="0.4", linestyle=":"),
            _key(
                label="cheapest within 90% (its number)",
                marker="o",
                markersize=12,
                markerfacecolor="none",
                markeredgecolor="black",
                markeredgewidth=1.6,
            ),
        ]
        fig.legend(handles=handles, loc="outside lower center", ncols=columns, frameon=False)
        return _png(fig)


def _key(**style: Any) -> Any:
    """A legend entry drawn as ``style`` says (``linestyle`` none unless given)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], **{"linestyle": "none", "markersize": 7, **style})
