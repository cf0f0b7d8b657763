"""What every PNG plot shares: the style, a private figure, its PNG bytes, the
strategy colours, label wrapping and the legend below the axes.

Figures are drawn with matplotlib's Agg canvas on a private :class:`Figure` (no
pyplot state) under matplotlib's default style, so a user's ``matplotlibrc``
does not leak in, and saved without the ``Software`` metadata: the same report
gives the same bytes for a given matplotlib version.

Strategies are told apart by colour and named in a legend below the axes, never
by text next to the data, so no label can cover another. Text widths are
measured with the figure's own renderer, which is how :func:`legend_below`
chooses its columns and wraps long labels at their spaces, commas and
parentheses, never inside a word or a number where another layout avoids it,
and never shortening them; :func:`title` wraps a figure's title the same way.
"""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Final

from packproof.evals.report.model import ReportContext
from packproof.evals.report.plots.colours import colours_for
from packproof.evals.report.plots.configdir import ready

# matplotlib is imported by the first figure or style (ready(): its folders
# settled and its import quiet first, configdir.py says why), not with this
# module: a large run's plots are drawn in a second process (drawer.py), and the
# eval then never imports it.

__all__ = [
    "concentric",
    "concentric_key",
    "draw_lines",
    "empty",
    "figure",
    "identical",
    "legend_below",
    "numeric",
    "png",
    "run_colours",
    "stacked_key",
    "style",
    "tex",
    "text_width",
    "title",
    "within",
    "wrap",
]

DPI: Final = 110
LEGEND_FONT: Final = 9.0  # points
# Where a label may wrap: after a space, a comma or a spec's opening parenthesis,
# and before a "+" (``bm25`` | ``+cache(`` | ``low_water=0.4,`` | ...); never
# inside a number (``2,000``). A space kept at a line's end is invisible in a
# legend and tells a reader of the lines where the label was cut.
_BREAKS: Final = re.compile(r"(?<= )(?=\S)|(?<=,)(?!\d)|(?<=\S\()|(?=\+)")
# Inside a piece too long for a line: after a _ / : or =, or a - or . that does
# not start a number's digits (``w=-0.5`` stays whole).
_SOFT: Final = re.compile(r"(?<=[_/:=])|(?<=[-.])(?!\d)")
# A layout that cuts a word or a number (no break point left) costs this many
# inches, so it is chosen only when every other layout cuts one too.
_CUT_COST: Final = 1000.0
# Legend layouts are compared by height plus this share of a line per wrap,
# so a label is cut only when that saves real space.
_WRAP_COST: Final = 0.4


@contextmanager
def style() -> Iterator[None]:
    """matplotlib's default style (ignoring any matplotlibrc) plus a few tweaks."""
    ready()
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
                "legend.fontsize": LEGEND_FONT,
                "legend.framealpha": 0.9,
            }
        ),
    ):
        yield


def figure(width: float, height: float) -> Any:
    """A private figure on an Agg canvas with constrained layout (sizes in inches)."""
    ready()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def run_colours(ctx: ReportContext) -> dict[str, str]:
    """``#rrggbb`` per strategy label of the run (colours.py has the rule)."""
    return colours_for(s["label"] for s in ctx.summary["strategies"])


def tex(label: str) -> str:
    """A label as literal text: matplotlib reads ``$...$`` as mathtext."""
    return label.replace("$", r"\$")


def numeric(budget: Any) -> bool:
    return isinstance(budget, int | float) and not isinstance(budget, bool)


def empty(ax: Any, message: str) -> None:
    """An axes that only says ``message`` (why there is nothing to draw)."""
    ax.text(
        0.5,
        0.5,
        message,
        ha="center",
        va="center",
        transform=ax.transAxes,
        fontsize=11,
        color="0.35",
    )
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    ax.set_frame_on(False)


def text_width(fig: Any, size: float, weight: str = "normal") -> Callable[[str], float]:
    """The width in inches of one line of text at ``size`` points, as ``fig`` draws it."""
    from matplotlib.font_manager import FontProperties

    renderer = fig.canvas.get_renderer()
    prop = FontProperties(size=size, weight=weight)

    def width(line: str) -> float:
        w, _, _ = renderer.get_text_width_height_descent(line, prop, ismath=False)
        return float(w) / float(fig.dpi)

    return width


def within(width: Callable[[str], float], room: float) -> Callable[[str], bool]:
    """Whether a line fits in ``room`` inches, for :func:`wrap`."""
    return lambda line: width(line) <= room


def wrap(label: str, fits: Callable[[str], bool], indent: str = "  ") -> list[str]:
    """``label`` cut into lines that each ``fits``: a merged label (``a = b``)
    first into its members, each on a line starting ``= ``, then each at the
    break points above (inside a piece too long for a line, at a soft break
    point, and only where none is left inside a word); continuation lines are
    indented. Nothing is dropped or shortened: the lines without their indents
    put back together are the label (a cut at a space keeps it at the line's end)."""
    return _wrap(label, fits, indent)[0]


def _wrap(label: str, fits: Callable[[str], bool], indent: str) -> tuple[list[str], int]:
    """:func:`wrap`'s lines and how many of its cuts fall inside a word or a number."""
    if fits(label):
        return [label], 0
    lines: list[str] = []
    cuts = 0
    for i, member in enumerate(label.split(" = ")):
        first, more = (indent + "= ", indent + "  ") if i else ("", indent)
        got, inside = _greedy(member, fits, first, more)
        lines += got
        cuts += inside
    return lines, cuts


def _greedy(text: str, fits: Callable[[str], bool], first: str, more: str) -> tuple[list[str], int]:
    """``text`` in lines filled greedily, the first led by ``first``, the others
    by ``more``; and the number of cuts made inside a word."""
    lines: list[str] = []
    line = ""
    cuts = 0

    def lead() -> str:
        return more if lines else first

    for piece in (p for p in _BREAKS.split(text) if p):
        if fits(lead() + line + piece):
            line += piece
            continue
        if line:
            lines.append(lead() + line)
            line = ""
        # A piece wider than a line: cut at its soft break points, else inside a word.
        for part in (p for p in _SOFT.split(piece) if p):
            if line and not fits(lead() + line + part):
                lines.append(lead() + line)
                line = ""
            if fits(lead() + line + part):
                line += part
                continue
            begun = False
            for char in part:
                if line and not fits(lead() + line + char):
                    lines.append(lead() + line)
                    line = ""
                    cuts += begun
                line += char
                begun = True
    lines.append(lead() + line)
    return lines, cuts


def title(fig: Any, text: str, size: float = 13.0) -> None:
    """``text`` as the figure's bold title, wrapped at its break points to the
    figure's width, so no panel count cuts it."""
    fits = within(text_width(fig, size, "bold"), fig.get_figwidth() - 0.3)
    lines = [line.rstrip() for line in wrap(text, fits, indent="")]
    fig.suptitle(tex("\n".join(lines)), fontsize=size, fontweight="bold")


def identical(series: Mapping[str, Hashable]) -> list[list[str]]:
    """Labels with equal series, grouped, in the order of ``series``."""
    groups: dict[Hashable, list[str]] = {}
    for label, value in series.items():
        groups.setdefault(value, []).append(label)
    return list(groups.values())


def _bundles(items: Sequence[Any], close: Callable[[Any, Any], bool]) -> list[list[Any]]:
    """``items`` in bundles, each joining the first bundle whose first item it is
    ``close`` to (order kept within a bundle)."""
    bundles: list[list[Any]] = []
    for item in items:
        home = next((b for b in bundles if close(b[0], item)), None)
        if home is None:
            bundles.append([item])
        else:
            home.append(item)
    return bundles


def _stack(rank: int, count: int) -> dict[str, Any]:
    """Width, dot size and z-order of the ``rank``-th of ``count`` lines run
    together: the first is the widest and lowest, the last a plain line on top."""
    wider = count - 1 - rank
    return {"linewidth": 1.6 + 2.4 * wider, "markersize": 4.0 + 3.0 * wider}


def draw_lines(
    ax: Any,
    series: Mapping[str, Sequence[tuple[float, float]]],
    colours: Mapping[str, str],
    close: Callable[[float, float], bool],
) -> None:
    """One line with dots per label. Where lines run together (a segment whose
    two ends are ``close`` for both, or dots ``close`` at one x) the earlier
    label's is drawn wider beneath the later's, so every colour stays visible
    on exactly the stretch it is shared."""
    segments: dict[tuple[float, float], list[tuple[str, float, float]]] = {}
    dots: dict[float, list[tuple[str, float]]] = {}
    for label, points in series.items():
        for (x0, y0), (x1, y1) in itertools.pairwise(points):
            segments.setdefault((x0, x1), []).append((label, y0, y1))
        for x, y in points:
            dots.setdefault(x, []).append((label, y))
    for (x0, x1), lines in segments.items():
        for bundle in _bundles(lines, lambda a, b: close(a[1], b[1]) and close(a[2], b[2])):
            for rank, (label, y0, y1) in enumerate(bundle):
                ax.plot(
                    [x0, x1],
                    [y0, y1],
                    color=colours[label],
                    linewidth=_stack(rank, len(bundle))["linewidth"],
                    solid_capstyle="round",
                    zorder=2 + rank / len(bundle),
                )
    for x, here in dots.items():
        for bundle in _bundles(here, lambda a, b: close(a[1], b[1])):
            for rank, (label, y) in enumerate(bundle):
                ax.plot(
                    x,
                    y,
                    "o",
                    color=colours[label],
                    markersize=_stack(rank, len(bundle))["markersize"],
                    zorder=3 + rank / len(bundle),
                )


def stacked_key(colours: Sequence[str]) -> tuple[Any, ...]:
    """The legend handle of lines :func:`draw_lines` stacks (a tuple is drawn
    overlaid): the first colour widest, the last a plain line on top."""
    from matplotlib.lines import Line2D

    return tuple(
        Line2D([], [], color=c, marker="o", solid_capstyle="round", **_stack(i, len(colours)))
        for i, c in enumerate(colours)
    )


def concentric(ax: Any, x: float, y: float, colours: Sequence[str], size: float) -> None:
    """Dots on one spot, the first the largest, so every colour stays visible."""
    for i, colour in enumerate(colours):
        ax.plot(
            x,
            y,
            "o",
            markersize=size + 4 * (len(colours) - 1 - i),
            color=colour,
            markeredgecolor="white" if i else colour,
            markeredgewidth=0.6,
            zorder=3 + i / len(colours),
        )


def concentric_key(colours: Sequence[str], size: float) -> tuple[Any, ...]:
    """The legend handle of :func:`concentric` dots (a tuple is drawn overlaid)."""
    from matplotlib.lines import Line2D

    return tuple(
        Line2D(
            [],
            [],
            linestyle="none",
            marker="o",
            markersize=size + 4 * (len(colours) - 1 - i),
            color=c,
            markeredgecolor="white" if i else c,
            markeredgewidth=0.6,
        )
        for i, c in enumerate(colours)
    )


def _columns(count: int, ncols: int) -> list[range]:
    """Entry indices by column, the way :class:`~matplotlib.legend.Legend` fills
    them (column by column, the first ``count % ncols`` columns one entry longer)."""
    rows, large = divmod(count, ncols)
    out, start = [], 0
    for col in range(ncols):
        step = rows + (1 if col < large else 0)
        out.append(range(start, start + step))
        start += step
    return out


def legend_below(
    fig: Any,
    entries: Sequence[tuple[Any, str]],
    *,
    handle_em: float = 2.0,
    indent: str = "  ",
) -> None:
    """A legend of ``(handle, label)`` below everything, in as many columns as
    keep it lowest: each label is wrapped to its column's width, measured with
    ``fig``'s renderer, so the legend never runs past the figure's sides. The
    figure grows by the legend's height, so the axes keep their size."""
    if not entries:
        return
    width = text_width(fig, LEGEND_FONT)
    em = LEGEND_FONT / 72  # inches
    usable = fig.get_figwidth() - 0.3 - 0.8 * em  # layout pads, border pads
    best: tuple[float, int, list[str], float] | None = None
    for ncols in range(min(len(entries), 8), 0, -1):
        room = (usable - (ncols - 1) * 2.0 * em) / ncols - (handle_em + 0.8) * em
        if room <= 4 * em:
            continue
        wrapped = [_wrap(text, within(width, room), indent) for _, text in entries]
        labels = [lines for lines, _ in wrapped]
        heights = [
            sum(len(labels[i]) for i in col) * 1.25 * em + 0.5 * em * (len(col) - 1)
            for col in _columns(len(labels), ncols)
        ]
        height = max(heights) + 0.8 * em + 0.1
        cost = height + _WRAP_COST * 1.25 * em * sum(len(lines) - 1 for lines in labels)
        cost += _CUT_COST * sum(cuts for _, cuts in wrapped)
        if best is None or cost < best[0] - 1e-9:
            best = (cost, ncols, ["\n".join(map(tex, lines)) for lines in labels], height)
    if best is None:  # a figure too narrow for any column: one, unwrapped
        height = len(entries) * 1.75 * em
        best = (height, 1, [tex(t) for _, t in entries], height)
    _, ncols, texts, height = best
    fig.set_figheight(fig.get_figheight() + height)
    fig.legend(
        handles=[h for h, _ in entries],
        labels=texts,
        loc="outside lower center",
        ncols=ncols,
        frameon=False,
        handlelength=handle_em,
        columnspacing=2.0,
    )
