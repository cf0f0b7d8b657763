"""What summary.md and report.html both say, format-free: the verdict in words,
the per-budget table (which columns, which direction is better, which value is
best) and the comparisons. Each renderer only formats: labels go through its
own ``code`` function (a code span of md.py, or escaped HTML ``<code>``), and
the rest of every sentence is plain text with no markup character.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "VERDICT_HEAD",
    "Column",
    "answer_ceiling",
    "best_rows",
    "budget_columns",
    "budget_title",
    "floor_note",
    "fmt_p",
    "fmt_stat",
    "metric_name",
    "plural",
    "ranking_columns",
    "spec_text",
    "tag_recall",
    "verdict_note",
    "verdict_row",
]

_NAMES: Final = {
    "evidence_recall": "evidence recall",
    "evidence_hit": "full hit",
    "ndcg@10": "nDCG@10",
    "mrr": "MRR",
    "regret": "regret",
    "answer_token_recall": "answer-token recall",
    "answer_token_ceiling": "answer-token ceiling",
    "expectation_pass": "expectation pass rate",
    "prefix_stability": "prefix stability",
    "prefix_stability_tokens": "prefix stability (tokens)",
}
_COST: Final = {
    "input_cost": "input cost per conversation",
    "uncached_share": "share of the pack not reusable from the previous turn",
    "tokens_used": "tokens packed per cell",
}
ALPHA: Final = 0.05


def plural(n: int, noun: str) -> str:
    """``1 suite``, ``2 suites``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def metric_name(metric: str) -> str:
    return _NAMES.get(metric, metric)


def spec_text(strategy: Mapping[str, Any]) -> str:
    """What a summary's strategy entry is: its canonical spec, or a named
    packer's command and the strategy its requests carry."""
    if "packer" in strategy:
        return f"{strategy['packer']} (requests carry {strategy.get('strategy', '?')})"
    return str(strategy["spec"])


def budget_title(budget: Any) -> str:
    return "each scenario's own budget" if budget == "scenario" else f"budget {budget} tokens"


def fmt_stat(stat: Mapping[str, Any] | None, digits: int = 3) -> str:
    """A mean with its interval: ``0.512 [0.401, 0.603]``."""
    if not stat:
        return "–"
    if stat["low"] == stat["high"]:
        return f"{stat['mean']:,.{digits}f}"
    return f"{stat['mean']:,.{digits}f} [{stat['low']:,.{digits}f}, {stat['high']:,.{digits}f}]"


def fmt_p(stat: Mapping[str, Any] | None) -> str:
    """A statistic's p-value, or a dash when it has none."""
    return "–" if not stat or stat.get("p_value") is None else f"{stat['p_value']:.3g}"


def tag_recall(row: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A breakdown row's evidence recall: the cluster interval where it clusters."""
    stat: Mapping[str, Any] | None = (row.get("cluster") or {}).get("evidence_recall")
    return stat or row["evidence_recall"]


def answer_ceiling(summary: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The answer-token ceiling (the same for every spec and budget), if any."""
    return next(
        (
            g["metrics"]["answer_token_ceiling"]
            for g in summary["groups"]
            if g["metrics"].get("answer_token_ceiling")
        ),
        None,
    )


def _signed(stat: Mapping[str, Any]) -> str:
    return f"{stat['mean']:+.3f} [{stat['low']:+.3f}, {stat['high']:+.3f}]"


def _units(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


@dataclass(frozen=True)
class Column:
    """One column of a results table: its title, which way is better (``+1``
    higher, ``-1`` lower, ``0`` neither) and how to read it from a group."""

    key: str
    title: str
    better: int
    read: Callable[[Mapping[str, Any]], Any]

    @property
    def heading(self) -> str:
        return self.title + {1: " ↑", -1: " ↓", 0: ""}[self.better]


def _stat_of(metric: str) -> Callable[[Mapping[str, Any]], Any]:
    """A group's interval of a metric: the cluster one where the cells cluster."""

    def read(g: Mapping[str, Any]) -> Any:
        return g.get("cluster", {}).get(metric) or g["metrics"].get(metric)

    return read


def budget_columns(summary: Mapping[str, Any]) -> list[Column]:
    """The per-budget table's columns: the metrics that change with the budget
    (those in ``budget_invariant`` go to :func:`ranking_columns`), answer-token
    recall only when the run has gold answers."""
    invariant = set(summary.get("budget_invariant", []))
    groups = summary["groups"]

    def has(metric: str) -> bool:
        return any(g["metrics"].get(metric) for g in groups)

    cols = [
        Column("evidence_recall", "evidence recall", 1, _stat_of("evidence_recall")),
        Column("evidence_hit", "full hit", 1, _stat_of("evidence_hit")),
    ]
    if has("answer_token_recall"):
        cols.append(
            Column("answer_token_recall", "answer-token recall", 1, _stat_of("answer_token_recall"))
        )
    cols += [
        Column(m, metric_name(m), 1, _stat_of(m)) for m in ("ndcg@10", "mrr") if m not in invariant
    ]
    cols += [
        Column("regret", "regret", -1, _stat_of("regret")),
        Column("prefix_stability", "prefix stability", 1, lambda g: g.get("prefix_stability")),
        Column(
            "prefix_stability_tokens",
            "prefix stability (tokens)",
            1,
            lambda g: g.get("prefix_stability_tokens"),
        ),
        Column("expectations", "expectations", 0, lambda g: g["expectations"]),
        Column(
            "hard_invariants", "hard invariants", -1, lambda g: sum(g["hard_invariants"].values())
        ),
    ]
    return cols


def ranking_columns(summary: Mapping[str, Any]) -> list[Column]:
    """The budget-invariant ranking metrics, shown once per strategy."""
    invariant = summary.get("budget_invariant", [])
    return [Column(m, metric_name(m), 1, _stat_of(m)) for m in ("ndcg@10", "mrr") if m in invariant]


def best_rows(rows: Sequence[Mapping[str, Any]], column: Column) -> set[int]:
    """The rows holding the best value of a column (ties: all of them; none
    when the column has no direction or every row has the same value)."""
    if not column.better:
        return set()
    values = []
    for i, g in enumerate(rows):
        v = column.read(g)
        if isinstance(v, Mapping):
            v = v.get("mean")
        if isinstance(v, int | float):
            values.append((i, float(v)))
    if len({v for _, v in values}) < 2:
        return set()
    top = max(v * column.better for _, v in values)
    return {i for i, v in values if v * column.better == top}


def floor_note(verdicts: Sequence[Mapping[str, Any]]) -> str | None:
    """One sentence when the verdicts' conversation-level tests cannot reach
    significance at all: with k conversations, an exact sign-flip test's
    smallest two-sided p is 2 / 2**k."""
    fewest = min(
        (
            other["difference"]["n"]
            for v in verdicts
            for key in ("runner_up", "baseline")
            if (other := v.get(key))
            and other.get("difference")
            and other["difference"]["unit"] == "conversation"
        ),
        default=None,
    )
    if fewest is None or 2.0 / 2**fewest <= ALPHA:
        return None
    return (
        f"With {fewest} conversations, an exact test paired over conversations cannot go "
        f"below p = {2.0 / 2**fewest:.3g}: no difference here can reach p < {ALPHA}, however "
        "large. The cell-level p-values in the tables below treat the turns of a "
        "conversation as independent, which they are not."
    )


VERDICT_HEAD: Final = (
    "budget",
    "best",
    "over the runner-up",
    "over the baseline",
    "what the best costs",
    "cheapest within 90% of the best",
)


def _margin(other: Mapping[str, Any] | None, code: Callable[[str], str]) -> str:
    if not other:
        return "–"
    diff = other["difference"]
    if diff is None:
        return f"{code(other['label'])}: no cell to pair"
    unit = "conversations" if diff["unit"] == "conversation" else "cells"
    if diff["mean"] == diff["low"] == diff["high"] == 0:
        return f"none: {code(other['label'])} scores the same in every {unit[:-1]}"
    p = "" if diff.get("p_value") is None else f", p = {diff['p_value']:.3g}"
    return (
        f"{_signed(diff)} over {code(other['label'])} ({other['mean']:.3f}){p} ({diff['n']} {unit})"
    )


def _costs(v: Mapping[str, Any], code: Callable[[str], str]) -> str:
    cost = v.get("cost") or {}
    bits = []
    where = v.get("cost_profile")
    if where and cost.get("input_cost"):
        prefix = where["static_prefix_tokens"]
        head = f"under {code(where['profile'])}" + (
            f" behind {prefix:,} static tokens" if prefix else ""
        )
        bits.append(
            f"{_units(cost['input_cost']['mean'])} input per conversation (steps and probes) "
            f"{head} "
            f"(relative cost {fmt_stat(cost.get('relative_cost'), 2)}, cache hit rate "
            f"{fmt_stat(cost.get('cache_hit_rate'), 2)})"
        )
    if cost.get("prefix_stability"):
        bits.append(f"prefix stability {fmt_stat(cost['prefix_stability'], 2)}")
    if cost.get("tokens_used"):
        bits.append(f"{cost['tokens_used']['mean']:,.0f} tokens packed per cell")
    return "; ".join(bits) or "–"


def _cheapest(v: Mapping[str, Any], code: Callable[[str], str]) -> str:
    cheap, best = v.get("cheapest_within_90"), v["best"]
    basis = _COST.get(str(v.get("cost_basis")), "cost")
    if cheap is None:
        return "no spec within 90% has a measured cost"
    if cheap["spec"] == best["spec"]:
        return f"the best itself (by {basis})"
    ratio = (
        f", {cheap['cost'] / cheap['best_cost']:.2f}x the best's" if cheap.get("best_cost") else ""
    )
    return f"{code(cheap['label'])}: {cheap['mean']:.3f}, {basis} {_units(cheap['cost'])}{ratio}"


def verdict_row(v: Mapping[str, Any], code: Callable[[str], str]) -> list[str]:
    """One budget's verdict as the cells of :data:`VERDICT_HEAD` (see verdict.py)."""
    title = budget_title(v["budget"])
    metric = v.get("metric")
    if metric is None:
        return [title, "no headline metric (no gold evidence, no expectation)", "–", "–", "–", "–"]
    best = v["best"]
    return [
        title,
        f"{code(best['label'])}: {metric_name(metric)} {fmt_stat(best)}",
        _margin(v.get("runner_up"), code),
        _margin(v.get("baseline"), code),
        _costs(v, code),
        _cheapest(v, code),
    ]


def verdict_note(verdicts: Sequence[Mapping[str, Any]]) -> str:
    """How to read the verdict table: the units of its intervals and tests."""
    units = {
        d["unit"]
        for v in verdicts
        for key in ("runner_up", "baseline")
        if (o := v.get(key)) and (d := o.get("difference"))
    }
    said = [
        "The best is the highest mean on the headline metric (evidence recall; the "
        "expectation pass rate where no scenario has gold evidence)."
    ]
    if "conversation" in units:
        said.append(
            "Where cells cluster (the turns of one conversation), intervals resample whole "
            "conversations and p is a sign-flip permutation test on the conversations' mean "
            "differences."
        )
    if "cell" in units:
        said.append(
            "Where they do not, intervals resample cells and p is a Wilcoxon signed-rank "
            "test over paired cells."
        )
    return " ".join(said)
