"""The packer benchmark's verdicts and renderings: the issue's targets judged
from a finished report, the plain-text table and the log-log plot."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Final

__all__ = ["evaluate_targets", "format_report", "plot"]

# The targets: sizes they are stated at, and their limits.
TARGET_SIZE: Final = 100_000
GROWTH_FROM: Final = 10_000
LEXICAL: Final = ("bm25", "hybrid")
MAX_OVER_TOKENIZE: Final = 1.5
MAX_OVER_BM25S: Final = 1.0
MAX_GROWTH: Final = 12.0
MAX_RSS_MB: Final = 500.0
MAX_PROCESS_OVER_TOKENIZE: Final = 2.0  # the whole `packproof pack` process, full trace


def evaluate_targets(report: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The issue's targets that this run measured, and why any others were not."""
    evaluated: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    by_size = {r["size"]: r for r in report["results"]}
    top = by_size.get(TARGET_SIZE)
    names = report["config"]["strategies"]
    no_top = f"{TARGET_SIZE} is not among --sizes"

    def add(target: str, measured: float | None, limit: float, why: str, strict: bool) -> None:
        # strict: "under" the limit; otherwise "within" it (equal passes).
        if measured is None:
            skipped.append({"target": target, "reason": why})
        else:
            ok = measured < limit if strict else measured <= limit
            evaluated.append(
                {
                    "target": target,
                    "measured": measured,
                    "floor": limit,
                    "ratio": measured / limit if limit else None,
                    "at_most": True,
                    "met": ok,
                }
            )

    for name in (n for n in LEXICAL if n in names):
        strat = top["strategies"][name] if top else {}
        add(
            f"{name} pack at {TARGET_SIZE} items <= {MAX_OVER_TOKENIZE:g} x tokenize",
            strat.get("pack_over_tokenize"),
            MAX_OVER_TOKENIZE,
            no_top,
            strict=False,
        )
        add(
            f"{name} pack at {TARGET_SIZE} items <= bm25s index+query",
            strat.get("pack_over_bm25s"),
            MAX_OVER_BM25S,
            no_top if top is None else "bm25s is not installed",
            strict=False,
        )
    key = f"{GROWTH_FROM}->{TARGET_SIZE}"
    for name in names:
        add(
            f"{name} pack time growth {key} items <= {MAX_GROWTH:g}x",
            report["growth"][name].get(key) if GROWTH_FROM in by_size else None,
            MAX_GROWTH,
            f"needs {GROWTH_FROM} and {TARGET_SIZE} among --sizes",
            strict=False,
        )
    memory = report["memory"]
    for name in names:
        peak = memory["strategies"][name]["peak_rss_mb"] if memory["size"] == TARGET_SIZE else None
        add(
            f"{name} peak RSS at {TARGET_SIZE} items < {MAX_RSS_MB:g} MB",
            peak,
            MAX_RSS_MB,
            f"memory is measured at the largest size, {TARGET_SIZE} is not it",
            strict=True,
        )
    process = report["process"]
    for name in names:
        add(
            f"{name} whole `packproof pack` process (--trace full) on {TARGET_SIZE} real chat "
            f"items <= {MAX_PROCESS_OVER_TOKENIZE:g} x a bare tokenization process",
            process["strategies"][name]["full_over_tokenize"]
            if process["size"] == TARGET_SIZE
            else None,
            MAX_PROCESS_OVER_TOKENIZE,
            f"the process is timed at the largest size, {TARGET_SIZE} is not it",
            strict=False,
        )
    return evaluated, skipped


def plot(report: dict[str, Any], path: Path) -> None:
    """Pack time against item count (log-log) per strategy, beside the bare
    tokenization pass and bm25s, as a PNG for the README. Strategies have their
    colours of the eval plots (evals/report/plots/colours.py), and where two lines run
    within 10% of each other the earlier is drawn wider beneath the later."""
    from packproof.evals.report.plots.base import draw_lines, figure, png, stacked_key, style
    from packproof.evals.report.plots.colours import colours_for

    results = report["results"]
    sizes = [r["size"] for r in results]
    names = list(report["config"]["strategies"])
    colours = colours_for(names)
    times = {name: [(r["size"], r["strategies"][name]["pack"]) for r in results] for name in names}
    with style():
        fig = figure(7.5, 4.4)
        ax = fig.add_subplot()
        ax.plot(sizes, [r["tokenize"] for r in results], "k--", label="bare regex tokenize pass")
        if all(r["bm25s"] is not None for r in results):
            ax.plot(sizes, [r["bm25s"] for r in results], "k:", label="bm25s index + 1 query")
        draw_lines(ax, times, colours, lambda a, b: abs(a - b) <= 0.1 * max(abs(a), abs(b)))
        handles, labels = ax.get_legend_handles_labels()
        handles += [stacked_key([colours[name]]) for name in names]
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("items (real chat messages, chitchat-dataset)")
        ax.set_ylabel("seconds (median over prompts of best-of-repeats)")
        ax.set_title("packproof pack time, validation to selection", fontsize=12)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(handles, [*labels, *names], loc="upper left", fontsize=8)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png(fig))


def _cell(value: float | None, fmt: str) -> str:
    # None: bm25s missing or a ratio without a denominator; NaN: never timed.
    return "-" if value is None or math.isnan(value) else format(value, fmt)


def format_report(report: dict[str, Any]) -> str:
    """A plain-text table, sizes as columns, followed by memory and targets."""
    results = report["results"]
    names = report["config"]["strategies"]
    width = 14  # wide enough for 100000 and for seconds to four decimals
    lines = [f"{'seconds':<26}" + "".join(f"{r['size']:>{width}}" for r in results)]

    def row(label: str, values: list[float | None], fmt: str = ".4f") -> None:
        lines.append(f"{label:<26}" + "".join(f"{_cell(v, fmt):>{width}}" for v in values))

    row("tokenize (bare regex)", [r["tokenize"] for r in results])
    row("bm25s tokenize", [r["bm25s_tokenize"] for r in results])
    row("bm25s index+query", [r["bm25s"] for r in results])
    for name in names:
        row(f"{name} pack", [r["strategies"][name]["pack"] for r in results])
        row(f"{name} render", [r["strategies"][name]["render"] for r in results])
    lines.append("ratios")
    for name in names:
        strats = [r["strategies"][name] for r in results]
        row(f"{name} pack/tokenize", [s["pack_over_tokenize"] for s in strats], ".2f")
        row(f"{name} pack/bm25s", [s["pack_over_bm25s"] for s in strats], ".2f")
    for name, steps in report["growth"].items():
        text = ", ".join(f"{k}: {v:.2f}x" for k, v in steps.items()) or "-"
        lines.append(f"growth {name}: {text}")
    memory = report["memory"]
    lines.append(
        f"peak RSS at {memory['size']} items (MB): build-only baseline "
        f"{memory['baseline_rss_mb']:.1f} ({memory['source']})"
    )
    for name, mem in memory["strategies"].items():
        lines.append(
            f"  {name:<24}peak {mem['peak_rss_mb']:8.1f}   pack's increment "
            f"{mem['increment_mb']:8.1f}"
        )
    process = report["process"]
    lines.append(
        f"whole process at {process['size']} items ({process['request_mb']:.1f} MB request), "
        "seconds (x bare tokenization process)"
    )
    for name, timings in process["strategies"].items():
        cells = "".join(
            f"{level} {timings[level]:7.3f} ({_cell(timings[f'{level}_over_tokenize'], '.2f')})  "
            for level in ("full", "decisions", "none")
        )
        lines.append(f"  {name:<24}{cells}tokenize {timings['tokenize_process']:.3f}".rstrip())
    lines.append("targets")
    for t in report["targets"]:
        verdict = "met" if t["met"] else "NOT MET"
        lines.append(f"  [{verdict:>7}] {t['target']}: measured {t['measured']:.2f}")
    for t in report["targets_not_evaluated"]:
        lines.append(f"  [not run] {t['target']}: {t['reason']}")
    return "\n".join(lines)
