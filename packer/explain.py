"""A pack's trace as a table for people: ``packproof pack --explain``, ``packproof explain``.

One row per candidate, by rank (unranked items, such as the fresh tail, after
the ranked ones in ordinal order): its score and score components, tokens, the
decision (kept or dropped, and the outcome that decided it), every reason code,
the id and the start of the text. A header says what the strategy had to work
with. Every figure is read from the trace that :mod:`packproof.packer.render`
writes, so the table and the JSON never disagree.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, Final

from .reasons import (
    ANCHORED,
    APPEND_ONLY,
    APPENDED,
    ARCHIVED,
    BELOW_THRESHOLD,
    BUDGET_EXCEEDED,
    CATEGORY_CAP,
    CATEGORY_FULL,
    CHRONOLOGICAL_STOP,
    COVERED,
    HARD_CAP,
    KEPT_PREVIOUS,
    MAX_ITEMS,
    MISSING_SUMMARY,
    NOT_RETRIEVED,
    OUTCOMES,
    PROTECTED_TAIL,
    QUARANTINED,
    QUOTA_CAPPED,
    RECALL,
    SUPERSEDED,
    TAIL_BUDGET_EXCEEDED,
    TAIL_CUT,
    WITHIN_BUDGET,
)
from .render import render
from .strategies.base import Strategy, StrategyBase

if TYPE_CHECKING:
    from .result import PackResult

__all__ = ["DECISION_WORDS", "explain_rows", "explain_table", "visible"]

# The outcome (a candidate's first reason) in a word, for the decision column.
DECISION_WORDS: Final = {
    QUARANTINED: "quarantined",
    PROTECTED_TAIL: "tail",
    ANCHORED: "anchored",
    WITHIN_BUDGET: "included",
    BUDGET_EXCEEDED: "budget",
    MAX_ITEMS: "max_items",
    CATEGORY_CAP: "category_cap",
    CHRONOLOGICAL_STOP: "stop",
    KEPT_PREVIOUS: "previous",
    APPENDED: "appended",
    RECALL: "recall",
    APPEND_ONLY: "append_only",
    MISSING_SUMMARY: "no_text",
    QUOTA_CAPPED: "quota",
    TAIL_BUDGET_EXCEEDED: "tail_budget",
    NOT_RETRIEVED: "not_retrieved",
    ARCHIVED: "archived",
    SUPERSEDED: "superseded",
    COVERED: "covered",
    TAIL_CUT: "tail_cut",
    CATEGORY_FULL: "pruned_category",
    BELOW_THRESHOLD: "pruned_score",
    HARD_CAP: "pruned_cap",
}
assert set(DECISION_WORDS) == set(OUTCOMES), "every outcome needs a word"

TEXT_WIDTH: Final = 48  # characters of an item's text shown
# C0 controls but tab, DEL and C1 controls: a terminal acts on them (ESC starts a
# sequence that can clear the screen, move the cursor or hide a link behind text; CR
# rewrites the line; a C1 CSI is ESC [ on some terminals), so text a user wrote
# shows them as escapes instead.
_CONTROL: Final = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_SHORT: Final = {"\n": "\\n", "\r": "\\r"}


def visible(text: str) -> str:
    """``text`` with every control character but tab written as an escape a
    reader sees: ``\\x1b``, ``\\n``, ``\\r``, ``\\x7f``, ``\\x9b``. Everything
    ``packproof explain`` and ``packproof pack --explain`` print goes through it,
    and so does the Markdown of the reports (``evals/report/md.py``). It leaves
    backslashes alone, so it is idempotent: applying it twice changes nothing."""
    return _CONTROL.sub(lambda m: _SHORT.get(m.group(), f"\\x{ord(m.group()):02x}"), text)


def _number(value: float | None) -> str:
    """Compact: four significant digits (``0.5164``, ``1e-09``, ``12``); ``-`` for none."""
    return "-" if value is None else f"{value:.4g}"


def _clean(text: str, width: int) -> str:
    """One line of at most ``width`` characters: whitespace runs as one space,
    control characters as escapes (:func:`visible`), and the other characters a
    terminal does not print (zero-width and format characters) as ``·``, so that
    every cell takes the columns it is counted for."""
    flat = visible(" ".join(text[: width * 4].split()))
    flat = "".join(c if c.isprintable() else "·" for c in flat)
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _width(text: str) -> int:
    """Terminal columns: wide (CJK) characters take two, combining marks none."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def explain_rows(
    result: PackResult, relevant: Collection[str] = ()
) -> tuple[list[str], list[list[str]], list[bool]]:
    """The table's header, its rows (as strings, by rank) and which rows are kept.

    The ``★`` column is there only when ``relevant`` (gold) ids are given."""
    trace: dict[str, Any] = render(result)["trace"]
    candidates = trace["candidates"]
    components = sorted({name for c in candidates for name in c["components"]})
    order = sorted(
        range(len(candidates)),
        key=lambda i: (candidates[i]["rank"] is None, candidates[i]["rank"] or 0, i),
    )
    star = bool(relevant)
    header = [*(["★"] if star else []), "rank", "score", *components]
    header += ["tokens", "decision", "reasons", "id", "text"]
    texts = result.items.texts
    position = result.items.position
    rows, kept = [], []
    for i in order:
        c = candidates[i]
        decision = c["decision"]
        reasons = decision["reason"]
        word = DECISION_WORDS[reasons[0]]
        row = ["★" if c["id"] in relevant else ""] if star else []
        row += [_number(c["rank"]), _number(c["score"])]
        row += [_number(c["components"].get(name)) for name in components]
        row += [
            str(c["tokens"]),
            f"{'kept' if decision['included'] else 'dropped'} ({word})",
            ",".join(reasons),
            _clean(c["id"], TEXT_WIDTH),
            _clean(texts[position[c["id"]]], TEXT_WIDTH),
        ]
        rows.append(row)
        kept.append(bool(decision["included"]))
    return header, rows, kept


def _label(strategy: Strategy) -> str:
    """The spec without default-valued parameters (``hybrid(w_recency=0.5)``)."""
    return strategy.label() if isinstance(strategy, StrategyBase) else strategy.spec_string()


def _summary(result: PackResult) -> list[str]:
    req = result.request
    lines = [
        f"strategy {_label(req.strategy)}   budget {req.budget_tokens} tokens   "
        f"used {result.used_tokens} (tail {result.tail_tokens}, anchors "
        f"{result.anchor_tokens}, evictable {result.evictable_tokens_used})   "
        f"mode {result.mode}   "
        f"kept {len(result.selected_ids)} of {len(result.items)}"
    ]
    notes = []
    if result.over_budget:
        notes.append("tail and anchors alone exceed the budget (kept anyway)")
    if result.ranking.fallback:
        notes.append(f"fallback: {result.ranking.fallback}")
    if result.cache is not None:
        notes.append(f"cache-aware: {result.cache.action} ({result.cache.why})")
        if req.cache_aware is not None and req.cache_aware.extended:
            breakpoints = ", ".join(map(str, result.cache.breakpoints)) or "none"
            notes.append(
                f"recall block: {result.cache.recall_why}   breakpoints after items {breakpoints}"
            )
    if req.prompt:
        notes.append(f"prompt: {_clean(req.prompt, 100)}")
    return lines + notes


def _align(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Columns padded to their widest cell; numbers right-aligned, words left,
    the last column (the text) unpadded."""
    numeric = [name not in ("★", "decision", "reasons", "id", "text") for name in header]
    widths = [max(_width(cells[k]) for cells in [header, *rows]) for k in range(len(header))]
    out = []
    for cells in [header, *rows]:
        parts = []
        for k, cell in enumerate(cells):
            pad = " " * (widths[k] - _width(cell))
            if k == len(cells) - 1:
                parts.append(cell)
            else:
                parts.append(pad + cell if numeric[k] else cell + pad)
        out.append("  ".join(parts).rstrip())
    return out


def explain_table(
    result: PackResult, *, relevant: Collection[str] = (), limit: int | None = None
) -> str:
    """The pack as a table (a summary line, then one row per candidate by rank),
    ending in a newline. ``limit``: only the top ``limit`` rows plus every kept
    item; ``relevant``: gold ids, starred in a first column."""
    header, rows, kept = explain_rows(result, relevant)
    shown = [row for k, row in enumerate(rows) if limit is None or k < limit or kept[k]]
    lines = [*_summary(result), "", *_align(header, shown)]
    hidden = len(rows) - len(shown)
    if hidden:
        lines.append(
            f"... and {hidden} more dropped candidate{'s' * (hidden != 1)} "
            f"(shown: the top {limit} and every kept item)"
        )
    return "\n".join(map(visible, lines)) + "\n"
