"""The PNG plots read well: one colour per strategy label in every plot and run,
no text over other text, identical results merged in the legend and still drawn
visibly, a legend below the axes that keeps them wide, a recall-vs-stability
panel per budget, and the same bytes for the same report.

The crowded case is synthetic: eleven strategies with long labels (one with no
break point at all, one with a ``$``), six budgets, a tuned hybrid identical to
bm25 everywhere, two cache-aware specs identical to each other, and panels where
most strategies land on one spot."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from packproof.evals.report.model import ReportContext
from packproof.evals.report.plots.base import run_colours, wrap
from packproof.evals.report.plots.colours import BUILTIN, POOL, _pick, colour_of, colours_for
from packproof.evals.report.plots.frontier import frontier_figure
from packproof.evals.report.plots.latency import latency_figure
from packproof.evals.report.plots.recall import recall_vs_budget_figure, recall_vs_stability_figure
from packproof.evals.report.renderers import RENDERERS
from packproof.packer.strategies import REGISTRY

TUNED = "hybrid(w_recency=0,w_relevance=0.6,w_usage=0)"
CACHED = "bm25+cache(low_water=0.4,placement=first,recall_share=0.3)"
CACHED_TOO = "bm25+cache(low_water=0.5,recall_depth=40,recall_share=0.3)"
LONG = "external-packer-with-a-very-long-name-and-no-break-point-whatsoever-v2"
LABELS = [
    "chronological",
    "bm25lite",
    "bm25",
    "hybrid",
    "clarity",
    TUNED,
    CACHED,
    CACHED_TOO,
    LONG,
    "chronological+cache(low_water=0.4)",
    "bm25(stopwords=english)",
    "cost $5 packer",
]
BUDGETS: list[Any] = [256, 512, 1024, 2048, 4096, "scenario"]
FIGURES = {
    "recall_vs_budget": recall_vs_budget_figure,
    "recall_vs_stability": recall_vs_stability_figure,
    "latency": latency_figure,
    "frontier": frontier_figure,
}


def stat(mean: float, spread: float = 0.05) -> dict[str, Any]:
    return {"mean": mean, "low": max(0.0, mean - spread), "high": min(1.0, mean + spread), "n": 9}


def value(label: str, b: Any, salt: int) -> float:
    """A deterministic value per label and budget; equal where the case wants it."""
    key = {TUNED: "bm25", CACHED_TOO: CACHED}.get(label, label)
    i = LABELS.index(key)
    return round(((i * 7 + BUDGETS.index(b) * 3 + salt) % 11) / 11, 4)


def crowded() -> ReportContext:
    groups = []
    for label, b in itertools.product(LABELS, BUDGETS):
        recall, stability = value(label, b, 0), value(label, b, 5)
        if b in (2048, "scenario") and LABELS.index(label) < 9:  # most on one spot
            recall, stability = 0.9, 1.0
        groups.append(
            {
                "spec": f"spec:{label}",
                "label": label,
                "budget": b,
                "metrics": {"evidence_recall": stat(recall), "oracle_recall": stat(1.0, 0)},
                "prefix_stability": stat(stability, 0.2),
            }
        )
    frontiers = []
    for profile, b in itertools.product(["anthropic", "openai-gpt4o"], [1024, 4096]):
        points = [
            {
                "label": label,
                "input_cost": 1000.0 * (1 + value(label, 1024, b % 7)),
                "recall": 0.95 if b == 4096 and i < 6 else value(label, 512, 1),
                "pareto": i % 3 == 0,
            }
            for i, label in enumerate(LABELS)
        ]
        choice = min(points, key=lambda p: (p["input_cost"], -p["recall"]))
        frontiers.append(
            {
                "profile": profile,
                "budget": b,
                "static_prefix_tokens": 0,
                "points": points,
                "cheapest_within_90": {**choice, "threshold": 0.9 * choice["recall"]},
            }
        )
    summary = {
        "confidence": 0.95,
        "strategies": [{"label": label, "spec": f"spec:{label}"} for label in LABELS],
        "groups": groups,
        "replay": {"static_prefix_tokens": [0], "frontiers": frontiers},
    }
    records = [
        {"spec": f"spec:{label}", "latency_ms": 0.1 * (1 + i) * (1 + j % 5)}
        for i, label in enumerate(LABELS)
        for j in range(20)
    ]
    return ReportContext(summary=summary, records=records, scenarios={})


def drawn_texts(fig: Any) -> list[tuple[str, Any]]:
    """Every text artist the figure actually draws (tick labels out of view are
    not), with its window extent; multi-line texts are one artist."""
    from matplotlib.text import Text

    renderer = fig.canvas.get_renderer()
    drawn: dict[int, Any] = {}
    draw = Text.draw

    def record(self: Any, renderer: Any) -> Any:
        if self.get_visible() and self.get_text().strip():
            drawn[id(self)] = self
        return draw(self, renderer)

    Text.draw = record  # type: ignore[method-assign]
    try:
        fig.draw(renderer)
    finally:
        Text.draw = draw  # type: ignore[method-assign]
    return [(t.get_text(), t.get_window_extent(renderer)) for t in drawn.values()]


def overlaps(a: Any, b: Any, slack: float = 0.5) -> bool:
    return min(a.x1, b.x1) - max(a.x0, b.x0) > slack and min(a.y1, b.y1) - max(a.y0, b.y0) > slack


def legend_texts(fig: Any) -> list[str]:
    """Legend entries with the wrapping undone (lines joined, indents dropped)."""
    out = []
    for legend in fig.legends:
        for text in legend.get_texts():
            first, *more = text.get_text().split("\n")
            for line in map(str.strip, more):
                first += f" {line}" if line.startswith("= ") else line
            out.append(first)
    return out


@pytest.mark.parametrize("name", FIGURES)
def test_no_text_overlaps_another_or_leaves_the_figure(name: str) -> None:
    fig = FIGURES[name](crowded())
    texts = drawn_texts(fig)
    assert len(texts) > 10
    width, height = fig.bbox.width, fig.bbox.height
    for text, box in texts:
        assert box.x0 >= -1 and box.y0 >= -1, text
        assert box.x1 <= width + 1 and box.y1 <= height + 1, text
    clashes = [(a, b) for (a, x), (b, y) in itertools.combinations(texts, 2) if overlaps(x, y)]
    assert not clashes
    renderer = fig.canvas.get_renderer()
    for legend in fig.legends:  # below the axes, never over them
        box = legend.get_window_extent(renderer)
        assert all(box.y1 <= ax.get_window_extent(renderer).y0 for ax in fig.axes)


@pytest.mark.parametrize("name", ["recall_vs_budget", "recall_vs_stability", "frontier"])
def test_every_label_is_in_the_legend_and_identical_ones_share_an_entry(name: str) -> None:
    texts = legend_texts(FIGURES[name](crowded()))
    joined = "\n".join(texts).replace("\\$", "$")
    assert all(label in joined for label in LABELS)
    assert any(t.endswith(f"bm25 = {TUNED}") for t in texts)
    assert any(t.endswith(f"{CACHED} = {CACHED_TOO}") for t in texts)


def test_identical_lines_stay_visible_the_lower_one_wider() -> None:
    ctx = crowded()
    colours = run_colours(ctx)
    segments: dict[str, list[Any]] = {}
    for line in recall_vs_budget_figure(ctx).axes[0].get_lines():
        if len(line.get_xdata()) == 2:
            segments.setdefault(line.get_color(), []).append(line)
    bm25, tuned = segments[colours["bm25"]], segments[colours[TUNED]]
    assert [list(a.get_ydata()) for a in bm25] == [list(b.get_ydata()) for b in tuned]
    for below, above in zip(bm25, tuned, strict=True):
        assert below.get_linewidth() > above.get_linewidth()
        assert below.get_zorder() < above.get_zorder()


def test_the_legend_keeps_the_axes_wide() -> None:
    fig = recall_vs_budget_figure(crowded())
    fig.draw_without_rendering()
    assert fig.axes[0].get_position().width > 0.8


def test_recall_vs_stability_has_a_panel_per_budget_and_says_why_one_is_empty() -> None:
    ctx = crowded()
    for g in ctx.summary["groups"]:
        if g["budget"] == 512:
            g["prefix_stability"] = None
    fig = recall_vs_stability_figure(ctx)
    titles = [ax.get_title().split("\n")[0] for ax in fig.axes]
    assert titles == [f"budget {b}" for b in BUDGETS[:-1]] + ["each scenario's own budget"]
    (empty,) = [ax for ax in fig.axes if ax.get_title() == "budget 512"]
    assert "prefix stability needs" in empty.texts[0].get_text()
    assert "same point:" in fig.axes[3].get_title()  # budget 2048: most on one spot


def test_plots_use_the_report_colours_of_every_label() -> None:
    ctx = crowded()
    colours = run_colours(ctx)
    assert list(colours) == LABELS and len(set(colours.values())) == len(LABELS)
    drawn = {line.get_color() for line in recall_vs_budget_figure(ctx).axes[0].get_lines()}
    assert drawn - {"black"} == set(colours.values())


def test_same_report_same_bytes() -> None:
    for render in [r for name, r in RENDERERS.items() if name.endswith(".png")]:
        assert render(crowded()) == render(crowded())


# ---------------------------------------------------------------- colours


def test_every_registered_strategy_has_a_fixed_colour_apart_from_the_pool() -> None:
    assert set(BUILTIN) == set(REGISTRY)
    assert len(set(BUILTIN.values()) | set(POOL)) == len(BUILTIN) + len(POOL)


def test_a_label_has_its_colour_whatever_else_the_run_has() -> None:
    assert colours_for(["bm25", TUNED])[TUNED] == colour_of(TUNED)
    assert colours_for(["chronological", TUNED, "clarity"])[TUNED] == colour_of(TUNED)
    assert colours_for(["hybrid", "bm25"]) == {"hybrid": BUILTIN["hybrid"], "bm25": BUILTIN["bm25"]}
    # the pick is sha256(label) mod len(POOL): pinned, so a change is a decision
    assert _pick(TUNED) == 2 and colour_of(TUNED) == POOL[2]


def test_a_collision_goes_to_the_label_that_sorts_later_and_the_next_free_colour() -> None:
    first, later = sorted(label for label in "abcdefghij" if _pick(label) == _pick("a"))[:2]
    mapping = colours_for([later, first])
    assert mapping[first] == colour_of(first)
    assert mapping[later] == POOL[(_pick(later) + 1) % len(POOL)]
    assert colours_for([first, later]) == mapping  # the run's order does not matter


def test_colours_stay_distinct_past_every_palette() -> None:
    labels = [f"packer-{i}" for i in range(40)] + list(BUILTIN)
    assert len(set(colours_for(labels).values())) == len(labels)


# ---------------------------------------------------------------- wrapping


def cut_inside(upper: str, lower: str) -> bool:
    """Whether the break between two wrapped lines cuts a word or a number: it
    is at a break point only after a space (kept at the end of the upper line),
    a comma, an opening parenthesis or one of ``- _ / : = .``, or before a ``+``
    or a merged label's ``=``; and a comma or a point between digits (``2,000``,
    ``0.5``) is no break point."""
    lower = lower.lstrip()
    if not upper or not lower:
        return False
    if upper[-1] not in " ,(-_/:=." and lower[0] not in "+=":
        return True
    if upper[-1] in ",." and upper[-2:-1].isdigit() and lower[0].isdigit():
        return True
    return upper[-1] == "-" and lower[0].isdigit()  # a minus sign is the number's


def test_the_cut_check_sees_a_cut_word_or_number() -> None:
    assert cut_inside("cheapest within 9", "0% (its number)")
    assert cut_inside("cheapest within 90", "  % (its number)")
    assert cut_inside("static prefix 2,", "000 tokens")
    assert cut_inside("low_water=0.", "  4")
    assert cut_inside("w=-", "  0.5")
    assert not cut_inside("cheapest within ", "  90% (its number)")
    assert not cut_inside("bm25+cache(low_water=0.4,", "  recall_share=0.3)")
    assert not cut_inside("bm25", "  +cache(low_water=0.4)")
    assert not cut_inside("1\u00a0\u00a0bm25", "  = hybrid(w_recency=0,")
    assert not cut_inside("external-packer-", "  with-a-long-name")


PROSE = "cheapest within 90% (its number)"
NUMBERS = "static prefix 2,000 tokens, w=-0.5"


@pytest.mark.parametrize("room", [18, 24])
@pytest.mark.parametrize("label", [f"bm25 = {TUNED}", CACHED, LONG, "short", PROSE, NUMBERS])
def test_wrapping_keeps_every_character_each_line_fits_and_no_word_is_cut(
    label: str, room: int
) -> None:
    lines = wrap(label, lambda s: len(s) <= room)
    assert all(len(line) <= room for line in lines)
    joined = lines[0]
    for line in lines[1:]:  # a merged label's members lose their " = " to the break
        body = line.lstrip()
        joined += f" {body}" if body.startswith("= ") else body
    assert joined == label
    assert [(a, b) for a, b in itertools.pairwise(lines) if cut_inside(a, b)] == []


def test_wrapping_breaks_at_spaces_and_spec_punctuation_never_inside_a_number() -> None:
    assert wrap(PROSE, lambda s: len(s) <= 18) == ["cheapest within ", "  90% (its number)"]
    assert wrap("static prefix 2,000 tokens", lambda s: len(s) <= 16) == [
        "static prefix ",
        "  2,000 tokens",
    ]
    assert wrap("bm25+cache(low_water=0.4,recall_share=0.3)", lambda s: len(s) <= 19) == [
        "bm25+cache(",
        "  low_water=0.4,",
        "  recall_share=0.3)",
    ]
    # no break point left: the cut falls inside the word, as late as it can
    assert wrap("abcdefgh", lambda s: len(s) <= 5, indent="") == ["abcde", "fgh"]


def test_a_plot_without_data_is_no_file() -> None:
    bm25 = {"spec": "bm25", "label": "bm25"}
    own = {"spec": "bm25", "label": "bm25", "budget": "scenario"}
    runs = {
        "nothing": {"strategies": [bm25], "groups": []},
        # each scenario's own budget only, no conversation, no latency, no replay
        "own budget": {
            "strategies": [bm25],
            "groups": [{**own, "metrics": {"evidence_recall": stat(0.5)}}],
            "replay": {"static_prefix_tokens": [0], "frontiers": []},
        },
    }
    for summary in runs.values():
        ctx = ReportContext({"confidence": 0.95, **summary}, [{"spec": "bm25"}], {})
        assert {n: r(ctx) for n, r in RENDERERS.items() if n.endswith(".png")} == dict.fromkeys(
            ["recall_vs_budget.png", "recall_vs_stability.png", "latency.png", "frontier.png"]
        )


def test_the_overlap_check_sees_text_over_text() -> None:
    from packproof.evals.report.plots.base import figure

    fig = figure(4, 3)
    fig.text(0.5, 0.5, "one label")
    fig.text(0.52, 0.5, "another label")
    (one, x), (another, y) = drawn_texts(fig)
    assert (one, another) == ("one label", "another label") and overlaps(x, y)
