"""The scenario drill-down of ``report.html``: for the first scenarios (and
every failing one), a ✗ FAILED badge with the failure classes on each failing
scenario and the strategies, budgets and turns that failed (``summary["failures"]
["scenarios"]``), per spec its evidence recall and expectation status over the
scenario's turns;
then each turn's prompt and what every strategy packed (ids, roles, tokens,
item texts, gold evidence marked), the evidence it missed, and for an item the
trace's decision reasons in a ``<details>`` element (no JavaScript), at each
scenario's own budget when the run has it. Long texts, long conversations and
many scenarios are cut (``MAX_*``) so the page stays readable; the journal and
metrics.csv have every cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from packproof.evals.report.failures import CLASSES, by_scenario
from packproof.evals.report.html.base import _cell, _e, _Page, _table
from packproof.evals.report.status import CLASS_NAMES, TURNS_LISTED, budget_name, turns_text
from packproof.evals.run.config import SCENARIO_BUDGET
from packproof.evals.run.packs import selected_ids

__all__ = ["MAX_SCENARIOS", "MAX_TEXT", "MAX_TURNS", "scenarios_section"]

MAX_SCENARIOS: Final = 200  # scenarios shown with their packs (and every failing one)
MAX_TEXT: Final = 2000  # characters of one item text shown
MAX_TURNS: Final = 20  # turns of one conversation shown with their packs


def _item_text(text: Any) -> str:
    text = "" if text is None else str(text)
    if not text:
        return '<span class="empty">(empty text)</span>'
    if len(text) > MAX_TEXT:
        rest = len(text) - MAX_TEXT
        return (
            f'<span class="text">{_e(text[:MAX_TEXT])}</span>'
            f'<span class="muted"> … ({rest} more characters)</span>'
        )
    return f'<span class="text">{_e(text)}</span>'


def _why(record: Mapping[str, Any], item_id: str) -> str:
    """The trace's reasons for an item, folded (when the runner kept them)."""
    codes = (record.get("reasons") or {}).get(item_id)
    if not codes:
        return ""
    return (
        '<details class="why"><summary>why</summary>'
        + " ".join(f"<code>{_e(c)}</code>" for c in codes)
        + "</details>"
    )


def _pack_cell(
    record: Mapping[str, Any], items: Mapping[str, Mapping[str, Any]], gold: set[str]
) -> str:
    selected: Sequence[str] = selected_ids(record) or []  # the pack may be a delta
    if record.get("status", "ok") != "ok":
        body = f'<span class="fail">{_e(record["status"])}: {_e(record.get("error", ""))}</span>'
    elif not selected:
        body = '<span class="empty">(nothing packed)</span>'
    else:
        lis = []
        for item_id in selected:
            it = items.get(item_id)
            star = ' <span class="gold" title="gold evidence">★</span>' if item_id in gold else ""
            if it is None:
                lis.append(
                    f"<li><code>{_e(item_id)}</code>{star} "
                    '<span class="empty">(not an item of the request)</span></li>'
                )
                continue
            tokens = it.get("tokens")
            meta = _e(it.get("role", "?")) + (
                f", {_e(tokens)} tokens" if tokens is not None else ""
            )
            lis.append(
                f'<li><code>{_e(item_id)}</code>{star} <span class="role">{meta}</span> '
                f"{_item_text(it.get('text'))}{_why(record, item_id)}</li>"
            )
        body = '<ol class="items">' + "".join(lis) + "</ol>"
    missed = [g for g in sorted(gold) if g not in set(selected)]
    if missed and record.get("status", "ok") == "ok":
        body += (
            '<div class="missed">✗ missed evidence: '
            + ", ".join(f"<code>{_e(g)}</code>{_why(record, g)}" for g in missed)
            + "</div>"
        )
    if record.get("failures"):
        body += "".join(f'<div class="fail">✗ {_e(x)}</div>' for x in record["failures"])
    return body


def _recall(record: Mapping[str, Any]) -> str:
    value = (record.get("metrics") or {}).get("evidence_recall")
    return "–" if value is None else f"{value:.2f}"


def _per_spec(page: _Page, records: Sequence[Mapping[str, Any]]) -> str:
    """Per spec, over the scenario's turns at the drill-down budget: the mean
    evidence recall and the expectation status."""
    if not records:
        return ""
    rows = []
    for spec, label in page.labels.items():
        mine = [r for r in records if r["spec"] == spec]
        if not mine:
            continue
        recalls = [
            v for r in mine if (v := (r.get("metrics") or {}).get("evidence_recall")) is not None
        ]
        judged = [
            v for r in mine if (v := (r.get("metrics") or {}).get("expectation_pass")) is not None
        ]
        failed = sum(v != 1.0 for v in judged)
        if not judged:
            status = _cell("num", "–")
        elif failed:
            status = _cell("num bad", f"✗ {failed} of {len(judged)} turns failed")
        else:
            status = _cell("num", f"✓ {len(judged)} of {len(judged)}")
        mean = f"{sum(recalls) / len(recalls):.2f}" if recalls else "–"
        rows.append([page.strategy(label), _cell("num", mean), status])
    return _table(["strategy", "evidence recall (mean over turns)", "expectations"], rows)


def _scenario_budget(summary: Mapping[str, Any]) -> Any:
    budgets = list(summary["budgets"])
    if SCENARIO_BUDGET in budgets or not budgets:
        return SCENARIO_BUDGET
    return budgets[0]


def _failed(page: _Page, entries: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """A failing scenario's badge with its classes, and the list of what failed."""
    classes = [CLASS_NAMES[c] for c in CLASSES if any(e["class"] == c for e in entries)]
    badge = (
        '<span class="badge failed">✗ FAILED</span> '
        f'<span class="classes">{_e(", ".join(classes))}</span>'
    )
    items = "".join(
        f"<li>✗ {_e(CLASS_NAMES[e['class']])}: {page.strategy(e['label'])} at "
        f"{_e(budget_name(e['budget'], str))}, {_e(turns_text(e['turns'], TURNS_LISTED))}</li>"
        for e in entries
    )
    return badge, f'<ul class="failures">{items}</ul>'


def scenarios_section(page: _Page) -> str:
    """Every scenario (the first ``MAX_SCENARIOS``, and every failing one) as a
    closed ``<details>``, a failing one marked."""
    ctx = page.ctx
    budget = _scenario_budget(page.summary)
    by_turn: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
    order: dict[str, str] = {}  # scenario id -> suite, in cell-key order
    for r in ctx.records:
        order.setdefault(r["scenario"], r["suite"])
        if str(r["budget"]) == str(budget):
            by_turn.setdefault((r["scenario"], int(r["turn"])), []).append(r)
    ids = list(order) + [i for i in ctx.scenarios if i not in order]
    failing = by_scenario(page.summary.get("failures") or {})

    def failures_of(sid: str) -> list[Mapping[str, Any]]:
        return failing.get(f"{order[sid]}/{sid}", []) if sid in order else []

    # past the first MAX_SCENARIOS, the failing ones are still shown
    shown = [i for k, i in enumerate(ids) if k < MAX_SCENARIOS or failures_of(i)]
    count = sum(1 for i in ids if failures_of(i))
    out = [
        '<section id="scenarios">',
        f"<h2>Scenarios: {len(ids)}"
        + (f' <span class="classes">(✗ {count} failing)</span>' if count else "")
        + "</h2>",
        f'<p class="muted">Each turn\'s prompt and what every strategy packed at '
        f"{_e(page.budget_title(budget))}, in pack order "
        '(<span class="gold">★</span> marks gold evidence, ✗ the evidence a strategy missed; '
        "<em>why</em> opens the trace's reasons for an item). "
        + (
            f"The first {MAX_SCENARIOS} scenarios and every failing one are shown. "
            if len(ids) > MAX_SCENARIOS
            else ""
        )
        + ("A failing scenario is marked ✗ FAILED with what failed in it. " if count else "")
        + "Click a scenario to open it.</p>",
    ]
    for sid in shown:
        sc = ctx.scenarios.get(sid)
        suite = order.get(sid) or (sc.file if sc else "?")
        why = sc.why if sc else ""
        failed = failures_of(sid)
        badge, what = _failed(page, failed) if failed else ("", "")
        head = (
            f"<summary>{badge + ' ' if badge else ''}<code>{_e(sid)}</code> "
            f'<span class="muted">({_e(suite)})</span> '
            f'<span class="why">{_e(why)}</span></summary>'
        )
        cls = "scenario failed" if failed else "scenario"
        parts = [f'<details class="{cls}" id="sc-{_e(sid)}">', head, "<div>", what]
        here = {t for e in failed if e["budget"] == str(budget) for t in e["turns"]}
        if sc is not None:
            tags = ", ".join(f"<code>{_e(t)}</code>" for t in sc.tags) or "none"
            parts.append(
                f'<p class="muted">source {_e(sc.file)} line {_e(sc.line)}; tags {tags}</p>'
            )
        parts.append(_per_spec(page, [r for (s, _), rs in by_turn.items() if s == sid for r in rs]))
        n_turns = len(sc.turns) if sc else 1 + max((t for (s, t) in by_turn if s == sid), default=0)
        for k in range(min(n_turns, MAX_TURNS)):
            turn = sc.turns[k] if sc else None
            request = turn.request if turn else {}
            items = {str(it["id"]): it for it in request.get("items", [])}
            gold = set(turn.relevant) if turn else set()
            cells = by_turn.get((sid, k), [])
            budget_tokens = request.get("budget_tokens")
            if cells and cells[0].get("budget_tokens") is not None:
                budget_tokens = cells[0]["budget_tokens"]
            bits = [f"{len(items)} items"]
            if budget_tokens is not None:
                bits.append(f"budget {_e(budget_tokens)} tokens")
            if gold:
                bits.append("gold " + ", ".join(f"<code>{_e(g)}</code>" for g in sorted(gold)))
            title = f"Turn {k + 1} of {n_turns} (#{k})" if n_turns > 1 else "Request"
            if k in here:
                title = f'<span class="fail">✗</span> {title}'
            parts.append(f'<h4>{title} <span class="muted">({"; ".join(bits)})</span></h4>')
            prompt = request.get("prompt")
            shown_prompt = _e(prompt) if prompt else '<span class="empty">(no prompt)</span>'
            parts.append(f'<blockquote class="prompt">{shown_prompt}</blockquote>')
            if not cells:
                parts.append('<p class="empty">No cell at this budget.</p>')
                continue
            parts.append(
                _table(
                    ["strategy", "mode", "recall", "packed items (id, role, tokens, text)"],
                    (
                        [
                            _cell("strategy", page.strategy(page.labels.get(r["spec"], r["spec"]))),
                            _e(r.get("mode") or "–"),
                            _cell("num", _recall(r)),
                            _pack_cell(r, items, gold),
                        ]
                        for r in cells
                    ),
                    cls="packs",
                )
            )
        if n_turns > MAX_TURNS:  # a long conversation (LoCoMo): the page stays readable
            parts.append(
                f'<p class="muted">... and {n_turns - MAX_TURNS} more turns '
                "(metrics.csv has every cell).</p>"
            )
        parts += ["</div>", "</details>"]
        out.append("\n".join(parts))
    if len(ids) > len(shown):
        out.append(
            f'<p class="muted">... and {len(ids) - len(shown)} more scenarios '
            "(the run's journal, results.jsonl.gz, has every cell)</p>"
        )
    out.append("</section>")
    return "\n".join(out)
