"""The eval benchmark's verdicts and rendering: the targets (an extra strategy
under 10% of the first per cell; the LoCoMo grid under a minute) judged from a
finished report, and the plain-text table."""

from __future__ import annotations

from typing import Any, Final

from packproof.evals.bench.eval.locomo import LOCOMO_TASK_REPEATS

__all__ = ["evaluate_targets", "format_extra", "format_report"]

MAX_EXTRA_RATIO: Final = 0.10
LOCOMO_MAX_SECONDS: Final = 60.0


def _extra_targets(extra: dict[str, Any], suite: str) -> list[dict[str, Any]]:
    return [
        {
            "target": (
                f"{suite}: extra strategy {name} on a cached scenario < {MAX_EXTRA_RATIO:.0%} "
                f"of the first ({extra['first']}) per cell"
            ),
            "measured": figures["extra_over_first"],
            "floor": MAX_EXTRA_RATIO,
            "ratio": None
            if figures["extra_over_first"] is None
            else figures["extra_over_first"] / MAX_EXTRA_RATIO,
            "at_most": True,
            "met": figures["extra_over_first"] is not None
            and figures["extra_over_first"] < MAX_EXTRA_RATIO,
        }
        for name, figures in extra["extras"].items()
    ]


def evaluate_targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    evaluated = _extra_targets(report["extra_strategy"], report["config"]["name"])
    locomo = report.get("locomo")
    if locomo is not None:
        evaluated.extend(_extra_targets(locomo["extra_strategy"], "locomo-dev"))
        evaluated.append(
            {
                "target": f"full LoCoMo dev grid with {locomo['workers']} workers "
                f"< {LOCOMO_MAX_SECONDS:.0f} s",
                "measured": locomo["total_seconds"],
                "floor": LOCOMO_MAX_SECONDS,
                "ratio": locomo["total_seconds"] / LOCOMO_MAX_SECONDS,
                "at_most": True,
                "met": locomo["total_seconds"] < LOCOMO_MAX_SECONDS,
            }
        )
    return evaluated


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def format_extra(ex: dict[str, Any], suite: str, repeats: int) -> list[str]:
    b = ex["first_breakdown_ms_per_cell"]
    lines = [
        f"extra strategy on a cached scenario ({suite}): first {ex['first']}, "
        f"{ex['cells_per_strategy']} cells per strategy ({ex['turns']} turns in {ex['tasks']} "
        f"tasks x {len(ex['budgets'])} budgets), best of {repeats}; ms per cell",
        f"  {ex['first'] + ' (first)':<28}{ex['first_ms_per_cell']:>8.4f}   parse {b['parse']:.4f}"
        f", term stats {b['term_stats']:.4f}, pack {b['pack']:.4f}, "
        f"metrics+records {b['metrics_and_records']:.4f}",
    ]
    for name, e in ex["extras"].items():
        lines.append(
            f"  {'+ ' + name:<28}{e['extra_ms_per_cell']:>8.4f}   pack "
            f"{e['extra_pack_ms_per_cell']:.4f}, metrics+records "
            f"{e['extra_rest_ms_per_cell']:.4f}; ratio {_num(e['extra_over_first'], '.1%')}; "
            f"alone {e['alone_ms_per_cell']:.4f} (sharing saves "
            f"{e['shared_saving_ms_per_cell']:.4f})"
        )
    return lines


def format_report(report: dict[str, Any]) -> str:
    grid = report["grid"]
    cfg = report["config"]
    lines = [
        f"eval grid: {cfg['name']}, {grid['cells']} cells ({grid['turns']} turns x "
        f"{len(cfg['specs'])} specs x {len(cfg['budgets'])} budgets), best of {cfg['repeats']}",
        f"  {'executor':<22}{'seconds':>10}{'cells/s':>10}",
    ]
    for label, r in grid["runs"].items():
        pool_of_one = r["executor"] == "process" and r["in_process"]
        note = "  (in-process: the runner uses no pool at 1 job)" if pool_of_one else ""
        lines.append(f"  {label:<22}{r['seconds']:>10.3f}{r['cells_per_second']:>10.0f}{note}")
    if grid["dask_over_serial"] is not None:
        lines.append(
            f"  dask/serial {grid['dask_over_serial']:.2f}x, overhead "
            f"{grid['dask_overhead_ms_per_cell']:.3f} ms/cell; dask/process-2 "
            f"{grid['dask_over_process_2']:.2f}x; cluster start+stop "
            f"{grid['dask_fixed_seconds']:.2f} s"
        )
    else:
        lines.append("  dask: not measured (distributed is not installed)")
    lines += format_extra(report["extra_strategy"], cfg["name"], cfg["task_repeats"])
    lo = report.get("locomo")
    if lo is not None:
        lines.append(
            f"LoCoMo dev grid: {lo['cells']} cells with {lo['workers']} workers in "
            f"{lo['total_seconds']:.1f} s (import {lo['import_seconds']:.1f} s, run "
            f"{lo['run_seconds']:.1f} s, {lo['cells_per_second']:.0f} cells/s)"
        )
        lines += format_extra(lo["extra_strategy"], "locomo-dev", LOCOMO_TASK_REPEATS)
    lines.append("targets")
    for t in report["targets"]:
        verdict = "met" if t["met"] else "NOT MET"
        shown = f"{t['measured']:.1f} s" if "LoCoMo" in t["target"] else _num(t["measured"], ".1%")
        lines.append(f"  [{verdict:>7}] {t['target']}: measured {shown}")
    return "\n".join(lines)
