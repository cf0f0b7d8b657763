"""PNG plots of an eval report, each a function ``ReportContext -> bytes``.

* :func:`recall_vs_budget`: mean evidence recall against the token budget, per
  strategy, with its bootstrap band and the oracle ceiling;
* :func:`recall_vs_stability`: the trade-off between evidence recall and prefix
  stability at each scenario's own budget;
* :func:`latency`: the distribution of per-cell packing latency per strategy.

Figures are drawn with matplotlib's Agg canvas on a private :class:`Figure` (no
pyplot state) under matplotlib's default style, so a user's ``matplotlibrc``
does not leak in, and saved without the ``Software`` metadata: the same report
gives the same bytes for a given matplotlib version.
"""

from __future__ import annotations

import inspect
import io
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Final

from ctxpack.evals.report.model import ReportContext
from ctxpack.evals.run.config import SCENARIO_BUDGET

__all__ = ["PLOTS", "latency", "recall_vs_budget", "recall_vs_stability", "strategy_colours"]

_DPI: Final = 110
# Latencies are rounded to 0.001 ms; a 0 would vanish on the log axis.
_MIN_MS: Final = 0.001


@contextmanager
def _style() -> Iterator[None]:
    """matplotlib's default style (ignoring any matplotlibrc) plus a few tweaks."""
    import matplotlib as mpl
    import matplotlib.style

    with (
        mpl.style.context("default"),
        mpl.rc_context(
            {
                "axes.grid": True,
                "grid.alpha": 0.3,
                "axes.spines.top": False,
                "axes.spines.right": False,
                "axes.titlesize": 13,
                "axes.titleweight": "bold",
                "axes.labelsize": 11,
                "legend.fontsize": 9,
                "legend.framealpha": 0.9,
            }
        ),
    ):
        yield


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, metadata={"Software": None})
    return buf.getvalue()


def _colours(ctx: ReportContext) -> dict[str, Any]:
    """One colour per strategy label, stable across the three plots."""
    from matplotlib import colormaps

    labels = [s["label"] for s in ctx.summary["strategies"]]
    cmap = colormaps["tab10" if len(labels) <= 10 else "tab20"]
    return {label: cmap(i % cmap.N) for i, label in enumerate(labels)}


def _horizontal(ax: Any) -> dict[str, Any]:
    """Horizontal boxes: ``orientation`` since matplotlib 3.10, ``vert`` before."""
    if "orientation" in inspect.signature(ax.boxplot).parameters:
        return {"orientation": "horizontal"}
    return {"vert": False}


def _tex(label: str) -> str:
    """A label as literal text: matplotlib reads ``$...$`` as mathtext."""
    return label.replace("$", r"\$")


def strategy_colours(ctx: ReportContext) -> dict[str, str]:
    """The plots' colour of each strategy label, as ``#rrggbb`` (for the HTML report)."""
    from matplotlib.colors import to_hex

    return {label: str(to_hex(c)) for label, c in _colours(ctx).items()}


def _empty(ax: Any, message: str) -> None:
    ax.text(
        0.5,
        0.5,
        message,
        ha="center",
        va="center",
        transform=ax.transAxes,
        fontsize=12,
        color="0.35",
    )
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    ax.set_frame_on(False)


def _groups(ctx: ReportContext) -> Sequence[Mapping[str, Any]]:
    groups: Sequence[Mapping[str, Any]] = ctx.summary["groups"]
    return groups


def _numeric(budget: Any) -> bool:
    return isinstance(budget, int | float) and not isinstance(budget, bool)


def recall_vs_budget(ctx: ReportContext) -> bytes:
    """Mean evidence recall (y) against the token budget (x, log2 scale, numeric
    budgets only) for each strategy, a shaded band from the low to the high end
    of its bootstrap interval, and the oracle ceiling (the best evidence recall
    any pack within the budget could reach) as a dashed black line."""
    colours = _colours(ctx)
    conf = round(float(ctx.summary.get("confidence", 0.95)) * 100)
    budgets = sorted({g["budget"] for g in _groups(ctx) if _numeric(g["budget"])})
    with _style():
        fig = _figure(9.0, 5.4)
        ax = fig.add_subplot()
        ax.set_title("Evidence recall vs token budget")
        drawn = False
        for strategy in ctx.summary["strategies"]:
            label = strategy["label"]
            points = [
                (g["budget"], g["metrics"]["evidence_recall"])
                for g in _groups(ctx)
                if g["spec"] == strategy["spec"]
                and _numeric(g["budget"])
                and g["metrics"].get("evidence_recall")
            ]
            if not points:
                continue
            points.sort(key=lambda p: p[0])
            xs = [p[0] for p in points]
            colour = colours[label]
            ax.plot(
                xs,
                [p[1]["mean"] for p in points],
                marker="o",
                markersize=4,
                linewidth=1.8,
                color=colour,
                label=_tex(label),
            )
            ax.fill_between(
                xs,
                [p[1]["low"] for p in points],
                [p[1]["high"] for p in points],
                color=colour,
                alpha=0.12,
                linewidth=0,
            )
            drawn = True
        oracle: dict[Any, float] = {}
        for g in _groups(ctx):
            stat = g["metrics"].get("oracle_recall")
            if _numeric(g["budget"]) and stat and g["budget"] not in oracle:
                oracle[g["budget"]] = stat["mean"]
        if oracle:
            xs = sorted(oracle)
            ax.plot(
                xs,
                [oracle[x] for x in xs],
                linestyle="--",
                color="black",
                linewidth=1.4,
                label="oracle ceiling",
            )
        if not drawn:
            _empty(
                ax,
                "no numeric budgets in this run (only each scenario's own budget)"
                if not budgets
                else "no evidence recall at the numeric budgets\n(no scenario has gold evidence)",
            )
            return _png(fig)
        ax.set_xscale("log", base=2)
        ax.set_xticks(budgets, [str(b) for b in budgets])
        ax.minorticks_off()
        ax.set_ylim(-0.02, 1.05)
        ax.set_xlabel("budget (tokens, log2 scale)")
        ax.set_ylabel(f"mean evidence recall ({conf}% bootstrap band)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        return _png(fig)


def recall_vs_stability(ctx: ReportContext) -> bytes:
    """At each scenario's own budget, every strategy as one labelled point: mean
    prefix stability across conversation turns (x) against mean evidence recall
    (y), with both bootstrap intervals as error bars. Strategies whose stability
    is unknown (no multi-turn scenario) are left out; strategies that land on the
    same point share one label."""
    colours = _colours(ctx)
    conf = round(float(ctx.summary.get("confidence", 0.95)) * 100)
    points: list[tuple[str, Mapping[str, Any], Mapping[str, Any]]] = []
    for g in _groups(ctx):
        if g["budget"] != SCENARIO_BUDGET:
            continue
        stab, recall = g.get("prefix_stability"), g["metrics"].get("evidence_recall")
        if stab and recall:
            points.append((g["label"], stab, recall))
    with _style():
        fig = _figure(8.0, 5.8)
        ax = fig.add_subplot()
        ax.set_title("Evidence recall vs prefix stability (each scenario's own budget)")
        if not points:
            _empty(
                ax,
                "no strategy has both evidence recall and prefix stability\n"
                "at each scenario's own budget (prefix stability needs "
                "multi-turn scenarios)",
            )
            return _png(fig)
        shared: dict[tuple[float, float], list[str]] = {}
        for label, stab, recall in points:
            x, y = stab["mean"], recall["mean"]
            ax.errorbar(
                x,
                y,
                xerr=[[x - stab["low"]], [stab["high"] - x]],
                yerr=[[y - recall["low"]], [recall["high"] - y]],
                fmt="none",
                ecolor=colours[label],
                elinewidth=1,
                alpha=0.4,
                capsize=3,
            )
            ax.plot(x, y, "o", markersize=9, color=colours[label], label=_tex(label), zorder=3)
            shared.setdefault((round(x, 6), round(y, 6)), []).append(label)
        for (x, y), labels in shared.items():
            ax.annotate(
                "\n".join(map(_tex, labels)),
                (x, y),
                xytext=(8, 6),
                textcoords="offset points",
                fontsize=9,
                zorder=4,
                bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "0.8", "alpha": 0.9},
            )
        ax.set_xlim(-0.05, 1.1)
        ax.set_ylim(-0.05, 1.08)
        ax.set_xlabel(f"mean prefix stability across turns ({conf}% interval)")
        ax.set_ylabel(f"mean evidence recall ({conf}% interval)")
        ax.legend(loc="lower right")
        return _png(fig)


def latency(ctx: ReportContext) -> bytes:
    """The distribution of per-cell packing latency (``latency_ms`` of every
    record, all budgets) as one horizontal box plot per strategy on a log scale:
    the box spans the quartiles, the line is the median, the whiskers reach
    1.5 IQR and the dots are outliers. Latency differs from run to run."""
    labels = {s["spec"]: s["label"] for s in ctx.summary["strategies"]}
    colours = _colours(ctx)
    data: dict[str, list[float]] = {spec: [] for spec in labels}
    for r in ctx.records:
        if r["spec"] in data and r.get("latency_ms") is not None:
            data[r["spec"]].append(max(float(r["latency_ms"]), _MIN_MS))
    rows = [(labels[spec], values) for spec, values in data.items() if values]
    height = max(3.2, 1.4 + 0.5 * len(rows))
    with _style():
        fig = _figure(9.0, height)
        ax = fig.add_subplot()
        ax.set_title("Packing latency per cell")
        if not rows:
            _empty(ax, "no latency recorded")
            return _png(fig)
        rows.reverse()  # the first strategy on top
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
        ax.set_yticks(
            range(1, len(rows) + 1), [f"{_tex(label)}  (n={len(v)})" for label, v in rows]
        )
        ax.set_xscale("log")
        ax.set_xlabel("latency per cell (ms, log scale)")
        ax.grid(False, axis="y")
        return _png(fig)


# Plot renderers by output file name (registered in ``renderers.RENDERERS``).
PLOTS: Final = {
    "recall_vs_budget.png": recall_vs_budget,
    "recall_vs_stability.png": recall_vs_stability,
    "latency.png": latency,
}
