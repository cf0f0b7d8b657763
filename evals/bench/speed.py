"""The speed summary of ``make bench``: ``python -m packproof.evals.bench.speed``.

Every benchmark writes its targets into its report (``reports/bench/*.json``):
each with the figure measured, its floor (or its ceiling: ``at_most``), their
ratio and whether it is met. This collects them, in the order the benchmarks
run, into ``reports/bench/speed.md`` and into the README's speed section,
between its two markers, so the README shows the figures of the last run of
``make bench`` and never figures typed by hand. A benchmark that was not run
(its report is missing) is left out, and said so.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import orjson

from packproof.evals.bench.common import EXIT_OK, EXIT_USAGE
from packproof.packer.files import write_atomic

__all__ = ["BEGIN", "END", "collect", "main", "render", "splice"]

BENCH: Final = Path("reports/bench")
# each benchmark's report, and what its targets measure, in `make bench` order
REPORTS: Final = (
    ("pack.json", "the packer"),
    ("eval.json", "the eval grid"),
    ("cache.json", "the prompt-cache model"),
    ("replay.json", "replays"),
)
BEGIN: Final = "<!-- speed: written by make bench; do not edit by hand -->"
END: Final = "<!-- /speed -->"


def _targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    """A report's targets, wherever it keeps them (at the top, or in a section)."""
    found = list(report.get("targets") or ())
    for value in report.values():
        if isinstance(value, dict) and isinstance(value.get("targets"), list):
            found.extend(value["targets"])
    return found


def collect(folder: Path = BENCH) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """(what, target) of every benchmark report found, and the reports missing."""
    rows: list[tuple[str, dict[str, Any]]] = []
    missing: list[str] = []
    for name, what in REPORTS:
        path = folder / name
        if not path.is_file():
            missing.append(name)
            continue
        rows.extend((what, t) for t in _targets(orjson.loads(path.read_bytes())))
    return rows, missing


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.3g}"
    return f"{text} {unit}".strip()


def render(rows: Sequence[tuple[str, dict[str, Any]]], missing: Sequence[str]) -> str:
    """The section: how many targets are met, then (folded) one table row per
    target, then what was not run."""
    met = sum(1 for _, t in rows if t["met"])
    lines = [
        f"<details><summary>{met} of {len(rows)} targets met</summary>",
        "",
        "| Part | Target | Measured | Floor (>=) or ceiling (<=) | Ratio | Met |",
        "|---|---|---:|---:|---:|:---:|",
    ]
    for what, t in rows:
        unit = t.get("unit", "")
        floor = t.get("floor")
        bound = "" if floor is None else ("<= " if t.get("at_most", True) else ">= ")
        ratio = t.get("ratio")
        lines.append(
            f"| {what} | {t['target']} | {_number(t['measured'], unit)} | "
            f"{bound}{_number(floor, unit)} | {'-' if ratio is None else f'{ratio:.2f}'} | "
            f"{'yes' if t['met'] else '**no**'} |"
        )
    lines += ["", "</details>"]
    if missing:
        lines += ["", f"Not run: {', '.join(missing)}."]
    return "\n".join(lines) + "\n"


def splice(text: str, section: str, where: str) -> str:
    """``text`` with what lies between :data:`BEGIN` and :data:`END` replaced."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{where}: the speed markers are missing ({BEGIN} ... {END})")
    return text[: start + len(BEGIN)] + "\n" + section + text[end:]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m packproof.evals.bench.speed",
        description="Collect every benchmark's targets into speed.md and the README.",
    )
    parser.add_argument("--bench", type=Path, default=BENCH, help="the benchmark reports")
    parser.add_argument("--readme", type=Path, default=Path("README.md"))
    args = parser.parse_args(argv)
    rows, missing = collect(args.bench)
    section = render(rows, missing)
    try:
        readme = splice(args.readme.read_text("utf-8"), section, str(args.readme))
    except OSError as exc:
        print(f"speed: {args.readme}: cannot read ({exc.strerror})", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:
        print(f"speed: {exc}", file=sys.stderr)
        return EXIT_USAGE
    write_atomic(args.bench / "speed.md", "# Speed\n\n" + section)
    write_atomic(args.readme, readme)
    print(section, end="")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
