"""``summary.md``: the report as Markdown: per budget, every strategy's means
with their intervals, the oracle ceiling and the paired differences; the
prompt-cache economics of replays; evidence recall by tag; latency; the
expectation failures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxpack.evals.report.model import ReportContext
from ctxpack.evals.report.replay import choice_sentence, frontier_sentence, frontier_title

__all__ = ["render_markdown"]


def _fmt(stat: Mapping[str, Any] | None, digits: int = 3) -> str:
    if not stat:
        return "–"
    if stat["low"] == stat["high"]:
        return f"{stat['mean']:,.{digits}f}"
    return f"{stat['mean']:,.{digits}f} [{stat['low']:,.{digits}f}, {stat['high']:,.{digits}f}]"


def _text(value: str) -> str:
    """Free text in a table cell: a pipe would end the cell."""
    return value.replace("|", "\\|") if value else "–"


def _cache_section(replay: Mapping[str, Any]) -> list[str]:
    """Per profile, static prefix and budget: the answer in words, the table of
    every spec, and the cheapest spec within 90% of the best probe recall."""
    lines = [
        "## Prompt-cache economics",
        "",
        "Replays: each conversation played forward, every step packed and priced under "
        "each provider's prompt cache (input cost in input-token units, 1 = one uncached "
        "token; relative cost = cost / input tokens, 1.0 = no caching). Probe recall is the "
        "evidence recall of questions asked of the state reached. First break: the step "
        "(0-based) of a conversation's first prefix break; diverges at: the tokens of the "
        "previous pack kept before a break.",
        "",
    ]
    if not replay["profiles"]:
        return [*lines, "No cache profile was priced in this run.", ""]
    lines += [
        "| profile | mode | read | write | min tokens | granularity | ttl s | source | date |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, p in replay["profiles"].items():
        lines.append(
            f"| `{name}` | {p['mode']} | {p['read']:g} | {p['write']:g} | {p['min_tokens']} "
            f"| {p['granularity']} | {p['ttl_s']:g} | {_text(p['source'])} | {_text(p['date'])} |"
        )
    several = len(replay["static_prefix_tokens"]) > 1
    for f in replay["frontiers"]:
        where = (f["profile"], f["static_prefix_tokens"], str(f["budget"]))
        rows = [
            g
            for g in replay["groups"]
            if (g["profile"], g["static_prefix_tokens"], str(g["budget"])) == where
        ]
        pareto = {p["spec"]: p["pareto"] for p in f["points"]}
        lines += [
            "",
            f"### {frontier_title(f, several)}",
            "",
            frontier_sentence(f),
            "",
            "| strategy | probe recall | hit rate | relative cost | input cost | prefix breaks "
            "| first break (step) | diverges at (tokens) | Pareto |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| `{g['label']}` | {_fmt(g['probe_recall'])} | {_fmt(g['cache_hit_rate'])} "
            f"| {_fmt(g['relative_cost'])} | {_fmt(g['input_cost'], 0)} "
            f"| {_fmt(g['prefix_breaks'], 2)} | {_fmt(g['first_break'], 1)} "
            f"| {_fmt(g['divergence_tokens'], 0)} "
            f"| {'yes' if pareto.get(g['spec']) else '–'} |"
            for g in rows
        ]
        line = choice_sentence(f)
        if line:
            lines += ["", line]
    return [*lines, ""]


def render_markdown(ctx: ReportContext) -> str:
    """summary.md: per budget, every strategy's means with confidence intervals,
    the oracle ceiling, paired differences against the baseline, latency."""
    summary = ctx.summary
    m = summary["manifest"]
    conf = round(summary["confidence"] * 100)
    lines = [
        f"# ctxpack eval: {m['name']}",
        "",
        f"{summary['cells']} cells; ctxpack {m['ctxpack_version']}, "
        f"commit {m['git_commit'] or '?'}; "
        f"{len(m['suites'])} suites; means with {conf}% bootstrap intervals "
        f"({m['bootstrap_resamples']} resamples, seed {m['seed']}).",
        "",
    ]
    for budget in summary["budgets"]:
        rows = [g for g in summary["groups"] if str(g["budget"]) == str(budget)]
        title = "each scenario's own budget" if budget == "scenario" else f"budget {budget} tokens"
        lines += [
            f"## {title}",
            "",
            "| strategy | evidence recall | full hit | nDCG@10 | MRR | regret | prefix stability "
            "| prefix stability (tokens) | expectations | hard invariants |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for g in rows:
            mm = g["metrics"]
            hard = sum(g["hard_invariants"].values())
            exp = g["expectations"]
            lines.append(
                f"| `{g['label']}` | {_fmt(mm['evidence_recall'])} | {_fmt(mm['evidence_hit'])} "
                f"| {_fmt(mm['ndcg@10'])} | {_fmt(mm['mrr'])} | {_fmt(mm['regret'])} "
                f"| {_fmt(g['prefix_stability'])} | {_fmt(g.get('prefix_stability_tokens'))} "
                f"| {exp['passed']}/{exp['total']} | {hard} |"
            )
        oracle = next(
            (g["metrics"]["oracle_recall"] for g in rows if g["metrics"]["oracle_recall"]), None
        )
        lines += ["", f"Oracle ceiling (best achievable evidence recall): {_fmt(oracle)}", ""]
        diffs = [p for p in summary["paired"] if str(p["budget"]) == str(budget)]
        if diffs:
            base = next(
                s["label"] for s in summary["strategies"] if s["spec"] == summary["baseline"]
            )
            lines += [
                f"Paired differences against `{base}` (Wilcoxon signed-rank p):",
                "",
                "| strategy | metric | difference | p | cells |",
                "|---|---|---|---|---|",
            ]
            lines += [
                f"| `{p['label']}` | {p['metric']} | {_fmt(p)} | {p['p_value']:.3g} | {p['n']} |"
                for p in diffs
            ]
            lines.append("")
    if summary.get("replay"):
        lines += _cache_section(summary["replay"])
    if summary.get("breakdown"):
        tags = sorted({b["tag"] for b in summary["breakdown"]})
        lines += ["## Evidence recall by tag", ""]
        for budget in summary["budgets"]:
            rows = [b for b in summary["breakdown"] if str(b["budget"]) == str(budget)]
            if not rows:
                continue
            title = "each scenario's own budget" if budget == "scenario" else f"budget {budget}"
            lines += [
                f"### {title}",
                "",
                "| strategy | " + " | ".join(tags) + " |",
                "|---|" + "---|" * len(tags),
            ]
            for s in summary["strategies"]:
                cell = {b["tag"]: b for b in rows if b["spec"] == s["spec"]}
                lines.append(
                    f"| `{s['label']}` | "
                    + " | ".join(
                        f"{_fmt(cell[t]['evidence_recall'])} (n={cell[t]['cells']})"
                        if t in cell
                        else "–"
                        for t in tags
                    )
                    + " |"
                )
            lines.append("")
    lines += [
        "## Latency (per cell; differs run to run)",
        "",
        "| strategy | p50 ms | p95 ms |",
        "|---|---|---|",
    ]
    for label, lat in summary["run"]["latency"].items():
        lines.append(f"| `{label}` | {lat['p50_ms']:.3f} | {lat['p95_ms']:.3f} |")
    fails = summary["expectation_failures"]
    lines += ["", f"## Expectation failures: {len(fails)}", ""]
    lines += [f"- `{f['key']}`: {'; '.join(f['failures'])}" for f in fails[:50]]
    if len(fails) > 50:
        lines.append(f"- ... and {len(fails) - 50} more (summary.json lists all)")
    return "\n".join(lines).rstrip() + "\n"
