"""A :class:`~packproof.evals.compare.model.Comparison` rendered: the verdict in words,
the terminal table ``packproof compare`` prints and compare.json (compare.md is
markdown.py, from the same pieces).

Every renderer reads the same comparison; the verdict paragraph is written
once (:func:`verdict`) with a ``code`` function per format, like text.py, and a
``text`` function for the rest of what came from the runs (budgets, metric
names, failure messages, notes): plain here, escaped for Markdown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from packproof.evals.report.text import fmt_p, metric_name, plural
from packproof.packer.jsonio import dumps, significant

if TYPE_CHECKING:
    from packproof.evals.compare.model import Change, Comparison, Flip

__all__ = [
    "SAME_RUN",
    "SCHEMA",
    "arrow",
    "budget_name",
    "flip_lines",
    "header",
    "legend",
    "mark",
    "row",
    "scenario_heading",
    "scenario_lines",
    "terminal",
    "to_json",
    "verdict",
]

SCHEMA: Final = "packproof.compare.v1"
_HEAD: Final = ("label", "budget", "A", "B", "B - A [interval]", "p", "cells", "scenarios", "")
_LISTED: Final = 4  # groups named in the verdict per direction before "and N more"
_MARKS: Final = {"better": "▲ better", "worse": "▼ worse", "changed": "● changed"}
SAME_RUN: Final = {"folder": "the same run folder", "run_id": "the same run id"}


def _plain(text: str) -> str:
    return text


def budget_name(budget: str) -> str:
    """A budget in a table or on an axis."""
    return "all budgets" if budget == "all" else budget


def _at(budget: str) -> str:
    """A budget in a sentence."""
    return {"all": "at every budget", "scenario": "at the scenario's own budget"}.get(
        budget, f"at budget {budget}"
    )


def arrow(better: int) -> str:
    return {1: " ↑", -1: " ↓", 0: ""}[better]


def mark(c: Change) -> str:
    """``▲ better`` / ``▼ worse`` / ``● changed`` when significant; ``(▲)`` or
    ``(▼)`` when only the interval excludes 0 (p above alpha); ``=`` when every
    paired cell is equal."""
    if c.verdict in _MARKS:
        return _MARKS[c.verdict]
    if c.verdict == "same":
        return "="
    if c.excludes_zero:
        up = c.stat["mean"] * (c.better or 1) > 0
        return "(●)" if not c.better else ("(▲)" if up else "(▼)")
    return ""


def _signed(stat: Mapping[str, Any]) -> str:
    if stat["low"] == stat["high"]:
        return f"{stat['mean']:+.3f}"
    return f"{stat['mean']:+.3f} [{stat['low']:+.3f}, {stat['high']:+.3f}]"


def row(c: Change, code: Callable[[str], str], text: Callable[[str], str] = _plain) -> list[str]:
    return [
        code(c.label),
        text(budget_name(c.budget)),
        f"{c.mean_a:.3f}",
        f"{c.mean_b:.3f}",
        _signed(c.stat),
        fmt_p(c.stat),
        str(c.stat["n"]),
        str(c.stat["clusters"]),
        mark(c),
    ]


def _groups_text(
    changes: Sequence[Change], code: Callable[[str], str], text: Callable[[str], str]
) -> str:
    named = [f"{code(c.label)} {text(_at(c.budget))} ({c.stat['mean']:+.3f})" for c in changes]
    if len(named) > _LISTED:
        named = [*named[:_LISTED], f"{len(changes) - _LISTED} more"]
    return ", ".join(named[:-1]) + (" and " if len(named) > 1 else "") + named[-1]


def _by_size(changes: Sequence[Change]) -> list[Change]:
    return sorted(changes, key=lambda c: -abs(c.stat["mean"]))


def _way(c: Change) -> str:
    """better, worse or changed: the verdict of a significant change, the
    direction of the interval of one that is significant by its interval only."""
    if c.verdict in _MARKS:
        return c.verdict
    if not c.better:
        return "changed"
    return "better" if c.stat["mean"] * c.better > 0 else "worse"


def _interval_only(c: Change) -> bool:
    return c.excludes_zero and c.verdict == "unclear"


def _main_sentence(
    cmp: Comparison,
    main: Sequence[Change],
    code: Callable[[str], str],
    text: Callable[[str], str],
) -> str:
    name = text(metric_name(cmp.main))
    if not main:
        return f"No cell pairs on {name}."
    if all(c.verdict == "same" for c in main):
        return f"B scores the same as A on {name} in every paired cell."
    parts = []
    for way in ("better", "worse", "changed"):
        hits = [c for c in main if c.verdict == way]
        if hits:
            parts.append(f"significantly {way} for {_groups_text(_by_size(hits), code, text)}")
    for way in ("better", "worse", "changed"):
        hits = [c for c in main if _interval_only(c) and _way(c) == way]
        if hits:
            parts.append(
                f"{way} by its interval alone (p > {cmp.alpha:g}) for "
                f"{_groups_text(_by_size(hits), code, text)}"
            )
    rest = sum(c.verdict in ("unclear", "same") and not _interval_only(c) for c in main)
    if not parts:
        return f"On {name}, no group changed significantly ({plural(len(main), 'group')})."
    tail = (
        f"; the other {rest} of {plural(len(main), 'group')} show no significant change"
        if rest
        else ""
    )
    return f"On {name}, B is {'; '.join(parts)}{tail}."


def _other_sentence(cmp: Comparison, text: Callable[[str], str]) -> str | None:
    if len(cmp.metrics) < 2:
        return None
    said = []
    for metric in cmp.metrics[1:]:
        here = [c for c in cmp.changes if c.metric == metric]
        counts = [
            f"{way} in {plural(n, 'group')}"
            for way in ("better", "worse", "changed")
            if (n := sum(c.verdict == way for c in here))
        ] + [
            f"{way} by its interval alone in {plural(n, 'group')}"
            for way in ("better", "worse", "changed")
            if (n := sum(_interval_only(c) and _way(c) == way for c in here))
        ]
        if counts:
            said.append(f"{text(metric_name(metric))} {', '.join(counts)}")
    if said:
        return f"Other metrics: {'; '.join(said)}."
    others = [c for c in cmp.changes if c.metric != cmp.main]
    if all(c.verdict == "same" for c in others):
        return "No other metric changed in any paired cell."
    return "No other metric changed significantly."


def verdict(
    cmp: Comparison, code: Callable[[str], str] = _plain, text: Callable[[str], str] = _plain
) -> str:
    """The answer in one paragraph: which groups got significantly better or
    worse on the main metric, the other metrics in brief, the flips, then what
    was not compared and the notes."""
    main = [c for c in cmp.changes if c.metric == cmp.main]
    said = [_main_sentence(cmp, main, code, text)]
    other = _other_sentence(cmp, text)
    if other:
        said.append(other)
    n = cmp.scenarios
    if n["pass_to_fail"] or n["fail_to_pass"]:
        said.append(
            f"{plural(n['pass_to_fail'], 'scenario')} flipped from pass to fail and "
            f"{n['fail_to_pass']} from fail to pass (of {n['compared']} scenario runs: "
            "strategy, budget and scenario)."
        )
    else:
        said.append(f"No scenario flipped between pass and fail ({n['compared']} scenario runs).")
    if cmp.only_a or cmp.only_b:
        said.append(
            "Not compared: "
            + "; ".join(
                f"only in {side}: {', '.join(map(code, labels))}"
                for side, labels in (("A", cmp.only_a), ("B", cmp.only_b))
                if labels
            )
            + "."
        )
    floor = _floor(cmp.changes, cmp.alpha)
    return " ".join([*said, *([floor] if floor else []), *map(text, cmp.notes)])


def _floor(changes: Sequence[Change], alpha: float) -> str | None:
    """Said when too few scenarios kept the sign-flip test from reaching alpha
    where the interval alone excludes 0."""
    fewest = min((c.stat["clusters"] for c in changes if _interval_only(c)), default=None)
    if fewest is None or 2.0 / 2**fewest <= alpha:
        return None
    return (
        f"With {fewest} scenarios, the sign-flip test cannot go below p = {2.0 / 2**fewest:.3g}: "
        f"no change over so few can reach p <= {alpha:g}, however large."
    )


def _shown(cmp: Comparison, metric: str, verbose: bool) -> list[Change]:
    here = [c for c in cmp.changes if c.metric == metric]
    if verbose or (metric == cmp.main and any(c.verdict != "same" for c in here)):
        return here
    return [c for c in here if mark(c) not in ("", "=")]


def _aligned(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    right = {2, 3, 5, 6, 7}
    return [
        "  ".join(
            cell.rjust(w) if i in right else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]


def legend(cmp: Comparison) -> str:
    return (
        f"B - A over paired cells, {round(cmp.confidence * 100)}% cluster-bootstrap interval over "
        f"scenarios, p: sign-flip test over scenarios; ▲/▼ significant (interval excludes 0 "
        f"and p <= {cmp.alpha:g}), (▲)/(▼) interval only, = every paired cell equal."
    )


def header(cmp: Comparison) -> str:
    """The first line: which run is which, and whether they are one."""
    same = SAME_RUN.get(cmp.same_run or "")
    return f"A {cmp.a.run_id} (reference) -> B {cmp.b.run_id} (candidate)" + (
        f": {same} on both sides" if same else ""
    )


def scenario_heading(cmp: Comparison) -> str:
    """How many scenarios were compared, added, removed and changed."""
    sh = cmp.shared
    text = (
        f"{len(sh.both)} in both runs (compared), {len(sh.added)} added (only in B), "
        f"{len(sh.removed)} removed (only in A), {len(sh.changed)} changed"
    )
    if sh.unhashed:
        text += f" (run {' and '.join(sh.unhashed)} records no scenario hashes)"
    return text


def scenario_lines(cmp: Comparison, code: Callable[[str], str], limit: int) -> list[str]:
    """One line per scenario added, removed or changed, ``limit`` of each kind."""
    lines = []
    for word, names in (
        ("added", cmp.shared.added),
        ("removed", cmp.shared.removed),
        ("changed", cmp.shared.changed),
    ):
        lines += [f"{word}: {code(name)}" for name in names[:limit]]
        if len(names) > limit:
            lines.append(f"... and {len(names) - limit} more {word} (compare.json lists all)")
    return lines


def flip_lines(
    flips: Sequence[Flip],
    code: Callable[[str], str],
    limit: int,
    text: Callable[[str], str] = _plain,
) -> list[str]:
    lines = []
    for f in flips[:limit]:
        why = f"; {text(f.failures[0])}" if f.failures else ""
        more = f" (+{len(f.failures) - 1} more cells)" if len(f.failures) > 1 else ""
        changed = " (changed between the runs)" if f.changed else ""
        lines.append(
            f"{f.before} → {f.after}: {code(f.scenario)}{changed}, {code(f.label)} "
            f"{text(_at(f.budget))}{why}{more}"
        )
    if len(flips) > limit:
        lines.append(f"... and {len(flips) - limit} more (compare.json lists all)")
    return lines


def terminal(cmp: Comparison, *, verbose: bool = False) -> str:
    """What ``packproof compare`` prints: the verdict, the main metric for every
    group, the other metrics only where marked (all with ``verbose``), flips."""
    out = [f"compare: {header(cmp)}", "", verdict(cmp), ""]
    if cmp.shared.differ:
        out.append(f"scenarios: {scenario_heading(cmp)}")
        out += ["  " + line for line in scenario_lines(cmp, _plain, 20 if not verbose else 10**9)]
        out.append("")
    hidden = 0
    for metric in cmp.metrics:
        rows = _shown(cmp, metric, verbose)
        hidden += sum(c.metric == metric for c in cmp.changes) - len(rows)
        if not rows:
            continue
        better = rows[0].better
        out.append(f"{metric_name(metric)}{arrow(better)}")
        out += ["  " + line for line in _aligned([_HEAD, *(row(c, _plain) for c in rows)])]
        out.append("")
    if hidden:
        out += [f"{plural(hidden, 'row')} without a mark not shown (--verbose shows them).", ""]
    out.append(legend(cmp))
    if cmp.flips:
        out += ["", f"flipped scenarios ({len(cmp.flips)}):"]
        out += ["  " + line for line in flip_lines(cmp.flips, _plain, 20 if not verbose else 10**9)]
    return "\n".join(out).rstrip() + "\n"


def _budget_value(budget: str) -> Any:
    return int(budget) if budget.isdigit() else budget


def to_json(cmp: Comparison) -> str:
    """compare.json: every row, sorted keys, statistics to 10 significant digits."""

    def side(s: Any) -> dict[str, Any]:
        return {
            "run_id": s.run_id,
            "path": s.path,
            "config": dict(s.config),
            "git_commit": s.git_commit,
            "suites": [{"file": k, "sha256": v} for k, v in sorted(s.suites.items())],
            "labels": list(s.labels),
        }

    data = {
        "schema": SCHEMA,
        "a": side(cmp.a),
        "b": side(cmp.b),
        "metrics": list(cmp.metrics),
        "main_metric": cmp.main,
        "budgets": [_budget_value(b) for b in cmp.budgets],
        "labels": list(cmp.labels),
        "only_in_a": list(cmp.only_a),
        "only_in_b": list(cmp.only_b),
        "changed_suites": list(cmp.changed_suites),
        "same_run": cmp.same_run,
        "scenarios_in_both": len(cmp.shared.both),
        "added_scenarios": list(cmp.shared.added),
        "removed_scenarios": list(cmp.shared.removed),
        "changed_scenarios": list(cmp.shared.changed),
        "without_scenario_hashes": list(cmp.shared.unhashed),
        "alpha": cmp.alpha,
        "confidence": cmp.confidence,
        "bootstrap_resamples": cmp.resamples,
        "seed": cmp.seed,
        "verdict": verdict(cmp),
        "notes": list(cmp.notes),
        "changes": [
            {
                "label": c.label,
                "budget": _budget_value(c.budget),
                "metric": c.metric,
                "better": c.better,
                "mean_a": c.mean_a,
                "mean_b": c.mean_b,
                "difference": dict(c.stat),
                "verdict": c.verdict,
                "interval_excludes_zero": c.excludes_zero,
            }
            for c in cmp.changes
        ],
        "flips": [
            {
                "label": f.label,
                "budget": _budget_value(f.budget),
                "scenario": f.scenario,
                "before": f.before,
                "after": f.after,
                "failures": list(f.failures),
                "scenario_changed": f.changed,
            }
            for f in cmp.flips
        ],
        "scenarios": dict(cmp.scenarios),
    }
    return dumps(significant(data), indent=2) + "\n"
