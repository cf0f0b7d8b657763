"""The "Prompt-cache economics" section of ``report.html`` (present only when the
run has replays): the profiles priced, the frontier plot, and per profile,
static prefix and budget the answer in words, the table of every spec and the
cheapest spec within 90% of the best probe recall (summary.md has the same)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from packproof.evals.report.frontier import choice_sentence, frontier_sentence, frontier_title
from packproof.evals.report.html.base import _cell, _e, _Page, _stat, _table
from packproof.evals.report.replay import PLACEMENT_ORDER

__all__ = ["ANCHOR", "cache_section"]

ANCHOR: Final = "cache"


def _profiles(replay: Mapping[str, Any]) -> str:
    rows = []
    for name, p in replay["profiles"].items():
        rows.append(
            [
                f'<span class="strat"><code>{_e(name)}</code></span>',
                _e(p["mode"]),
                *(
                    _cell("num", _e(f"{p[k]:g}" if isinstance(p[k], float) else p[k]))
                    for k in ("read", "write", "min_tokens", "granularity", "ttl_s")
                ),
                _e(p["source"] or "–"),
                _e(p["date"] or "–"),
            ]
        )
    head = ["profile", "mode", "read", "write", "min tokens", "granularity", "ttl s"]
    return _table([*head, "source", "date"], rows)


def _frontier(page: _Page, f: Mapping[str, Any], several: bool) -> str:
    replay = page.summary["replay"]
    where = (f["profile"], f["static_prefix_tokens"], str(f["budget"]))
    pareto = {p["spec"]: p["pareto"] for p in f["points"]}
    choice = f["cheapest_within_90"]
    body = []
    rows = [
        g
        for g in replay["groups"]
        if (g["profile"], g["static_prefix_tokens"], str(g["budget"])) == where
    ]
    for g in rows:
        chosen = choice is not None and choice["spec"] == g["spec"]
        body.append(
            [
                page.strategy(g["label"]) + (" <strong>(chosen)</strong>" if chosen else ""),
                _cell("num", _stat(g["probe_recall"])),
                _cell("num", _stat(g["cache_hit_rate"])),
                _cell("num", _stat(g["relative_cost"])),
                _cell("num", _stat(g["input_cost"], 0)),
                _cell("num", _stat(g["conversation_cost"], 0)),
                _cell("num", _stat(g["probe_cost"], 0)),
                _cell("num", _stat(g["prefix_breaks"], 2)),
                _cell("num", _stat(g["first_break"], 1)),
                _cell("num", _stat(g["divergence_tokens"], 0)),
                _cell("num", "yes" if pareto.get(g["spec"]) else "–"),
            ]
        )
    head = [
        "strategy",
        "probe recall",
        "hit rate",
        "relative cost",
        "input cost",
        "steps' cost",
        "probes' cost",
        "prefix breaks",
        "first break (step)",
        "diverges at (tokens)",
        "Pareto",
    ]
    out = [
        f"<h3>{_e(frontier_title(f, several))}</h3>",
        f'<p class="answer">{_e(frontier_sentence(f))}</p>',
        _table(head, body),
    ]
    line = choice_sentence(f)
    if line:
        out.append(f"<p>{_e(line)}</p>")
    placed = [g for g in rows if g.get("placements")]
    if placed:
        out.append(
            "<p>Input cost per conversation under each breakpoint placement "
            "(<code>packproof docs metrics</code>, &ldquo;Breakpoint placements&rdquo;):</p>"
        )
        out.append(
            _table(
                ["strategy", *PLACEMENT_ORDER, "cheapest"],
                [
                    [
                        page.strategy(g["label"]),
                        *(_cell("num", _stat(g["placements"].get(p), 0)) for p in PLACEMENT_ORDER),
                        _e(g["cheapest_placement"] or "–"),
                    ]
                    for g in placed
                ],
            )
        )
    return "\n".join(out)


def cache_section(page: _Page, plot: str) -> str:
    """The section, with ``plot`` (the frontier PNG as a ``data:`` URL); empty
    when the run has no replays."""
    replay: Mapping[str, Any] | None = page.summary.get("replay")
    if not replay:
        return ""
    several = len(replay["static_prefix_tokens"]) > 1
    first = replay["static_prefix_tokens"][0] if replay["static_prefix_tokens"] else 0
    out = [
        f'<section id="{ANCHOR}">',
        "<h2>Prompt-cache economics</h2>",
        '<p class="muted">Replays: each conversation played forward, every step packed '
        "and priced under each provider's prompt cache. Input cost is in input-token "
        "units (1 = one uncached token) per conversation, counting every request: the "
        "conversation's steps and the probes asked along it (steps' and probes' cost); "
        "relative cost is cost / input tokens (1.0 = no caching). Probe recall is the "
        "evidence recall of questions asked of the state reached. First break: the step"
        " (0-based) of a conversation's first prefix break; diverges at: the tokens of "
        "the previous pack kept before a break.</p>",
    ]
    if replay["profiles"]:
        out.append(_profiles(replay))
    if replay["frontiers"]:
        caption = (
            "Probe evidence recall against input cost per conversation (steps and probes), "
            "one point per spec; "
            "black step line: the Pareto frontier; ring: the cheapest spec within 90% of "
            "the best recall (dotted line)"
            + (f"; static prefix {first:,} tokens" if several or first else "")
            + "."
        )
        out.append(
            f'<figure><img src="{plot}" alt="Probe recall against conversation input cost '
            f'per cache profile and budget"><figcaption>{_e(caption)} '
            "(<code>frontier.png</code>)</figcaption></figure>"
        )
    else:
        out.append('<p class="empty">No cache profile was priced in this run.</p>')
    out += [_frontier(page, f, several) for f in replay["frontiers"]]
    out.append("</section>")
    return "\n".join(out)
