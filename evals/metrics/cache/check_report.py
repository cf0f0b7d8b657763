"""``packproof cache check``'s outputs: a table (CSV) of every call, the totals
(JSON), a plot of predicted against billed tokens (PNG), and the last line."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from packproof.evals.metrics.cache.check import ABSOLUTE, RELATIVE, CheckRow, Prices
from packproof.packer.files import write_files

__all__ = ["new_run_folder", "summary_line", "totals", "write_check"]


def totals(rows: Sequence[CheckRow], prices: Prices) -> dict[str, Any]:
    cost = sum(r.cost for r in rows)
    billed = sum(r.billed_cost for r in rows)
    misses = [
        {"session": r.session, "line": r.line, "request_id": r.request_id, "rule": r.note}
        for r in rows
        if not r.ok
    ]
    return {
        "calls": len(rows),
        "within": sum(r.ok for r in rows),
        "tolerance": {"relative": RELATIVE, "tokens": ABSOLUTE},
        "input_cost_usd": round(cost, 6),
        "billed_input_cost_usd": round(billed, 6),
        "cost_error": round((cost - billed) / billed, 6) if billed else 0.0,
        "cached": [sum(r.cached for r in rows), sum(r.billed_cached for r in rows)],
        "written": [sum(r.written for r in rows), sum(r.billed_written for r in rows)],
        "uncached": [sum(r.uncached for r in rows), sum(r.billed_uncached for r in rows)],
        "prices": {"source": prices.source, "date": prices.date},
        "misses": misses,
    }


def summary_line(total: dict[str, Any]) -> str:
    return (
        f"{total['within']} of {total['calls']} calls within tolerance; "
        f"input cost {100 * total['cost_error']:+.2f}% from the bill"
    )


def _csv(rows: Sequence[CheckRow]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CheckRow._fields)
    for r in rows:
        writer.writerow(
            [f"{v:.6f}" if isinstance(v, float) else v for v in r]  # fixed decimals
        )
    return buf.getvalue()


def _plot(rows: Sequence[CheckRow]) -> bytes:
    from packproof.evals.report.plots.base import figure, png

    fig = figure(9.0, 4.2)
    pairs = {
        "cached": ([r.billed_cached for r in rows], [r.cached for r in rows]),
        "written": ([r.billed_written for r in rows], [r.written for r in rows]),
    }
    for k, (name, (xs, ys)) in enumerate(pairs.items()):
        ax = fig.add_subplot(1, 2, k + 1)
        top = max([*xs, *ys, 1])
        ax.plot([1, top], [1, top], color="#888888", linewidth=0.8)
        good = [r.ok for r in rows]
        ax.scatter(
            [x for x, g in zip(xs, good, strict=True) if g],
            [y for y, g in zip(ys, good, strict=True) if g],
            s=8,
            color="#1f77b4",
            label="within tolerance",
        )
        ax.scatter(
            [x for x, g in zip(xs, good, strict=True) if not g],
            [y for y, g in zip(ys, good, strict=True) if not g],
            s=16,
            color="#d62728",
            marker="x",
            label="miss",
        )
        ax.set_xscale("symlog")
        ax.set_yscale("symlog")
        ax.set_xlabel(f"billed {name} tokens")
        ax.set_ylabel(f"predicted {name} tokens")
        ax.legend(loc="upper left", fontsize=8)
    return png(fig)


def new_run_folder(out: Path) -> Path:
    """``out/check-N`` for the first N not taken: a run never overwrites another."""
    n = 1
    while (out / f"check-{n}").exists():
        n += 1
    return out / f"check-{n}"


def write_check(rows: Sequence[CheckRow], total: dict[str, Any], run: Path) -> list[Path]:
    """The table, totals and plot in ``run`` (all or none, none over an existing file)."""
    contents: dict[Path, str | bytes] = {
        run / "calls.csv": _csv(rows),
        run / "totals.json": json.dumps(total, indent=2, sort_keys=True) + "\n",
        run / "predicted-vs-billed.png": _plot(rows),
    }
    return write_files(contents, mode="create")
