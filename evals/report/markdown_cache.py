"""``summary.md``'s prompt-cache section (markdown.py renders the rest): the
shipped profiles, then per profile, static prefix and budget the answer in
words, every spec's figures, the choice, and each cache-aware spec's input cost
under each breakpoint placement. Values from the data go through md.py."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from packproof.evals.report import md
from packproof.evals.report.frontier import choice_sentence, frontier_sentence, frontier_title
from packproof.evals.report.replay import PLACEMENT_ORDER
from packproof.evals.report.text import fmt_stat as _fmt

__all__ = ["cache_section"]


def cache_section(replay: Mapping[str, Any]) -> list[str]:
    """Per profile, static prefix and budget: the answer in words, the table of
    every spec, and the cheapest spec within 90% of the best probe recall."""
    lines = [
        "## Prompt-cache economics",
        "",
        "Replays: each conversation played forward, every step packed and priced under "
        "each provider's prompt cache (input cost in input-token units, 1 = one uncached "
        "token; relative cost = cost / input tokens, 1.0 = no caching). Costs count every "
        "request: the conversation's steps and the probes asked along it (steps' and probes' "
        "cost, which add up to the input cost). Probe recall is the "
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
            f"| {md.cell(name)} | {md.or_dash(p['mode'])} | {p['read']:g} | {p['write']:g} "
            f"| {p['min_tokens']} | {md.or_dash(p['granularity'])} | {p['ttl_s']:g} "
            f"| {md.or_dash(p['source'])} | {md.or_dash(p['date'])} |"
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
            f"### {md.text(frontier_title(f, several))}",
            "",
            md.text(frontier_sentence(f)),
            "",
            "| strategy | probe recall | hit rate | relative cost | input cost | steps' cost "
            "| probes' cost | prefix breaks | first break (step) | diverges at (tokens) | Pareto |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {md.cell(g['label'])} | {_fmt(g['probe_recall'])} | {_fmt(g['cache_hit_rate'])} "
            f"| {_fmt(g['relative_cost'])} | {_fmt(g['input_cost'], 0)} "
            f"| {_fmt(g['conversation_cost'], 0)} | {_fmt(g['probe_cost'], 0)} "
            f"| {_fmt(g['prefix_breaks'], 2)} | {_fmt(g['first_break'], 1)} "
            f"| {_fmt(g['divergence_tokens'], 0)} "
            f"| {'yes' if pareto.get(g['spec']) else '–'} |"
            for g in rows
        ]
        line = choice_sentence(f)
        if line:
            lines += ["", md.text(line)]
        lines += _placements_table(rows)
    return [*lines, ""]


def _placements_table(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The input cost of each spec whose packs suggest breakpoints under each
    breakpoint placement, and the cheapest (none when no spec has them)."""
    placed = [g for g in rows if g.get("placements")]
    if not placed:
        return []
    lines = [
        "",
        "Input cost per conversation under each breakpoint placement (`packproof docs metrics`, "
        '"Breakpoint placements"):',
        "",
        "| strategy | " + " | ".join(PLACEMENT_ORDER) + " | cheapest |",
        "|---|" + "---|" * (len(PLACEMENT_ORDER) + 1),
    ]
    lines += [
        f"| {md.cell(g['label'])} | "
        + " | ".join(_fmt(g["placements"].get(p), 0) for p in PLACEMENT_ORDER)
        + f" | {md.or_dash(g['cheapest_placement'])} |"
        for g in placed
    ]
    return lines
