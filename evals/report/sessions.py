"""Counterfactual replays of real Claude Code sessions, priced as they were billed,
beside what they cost (docs/sessions.md).

:func:`build` reads an eval run of ``evals/sessions.yaml`` (its journal, ``results.jsonl.gz``:
each step's pack as ``segments``, its evidence recall on the label-free signal)
and the imported scenarios (each step's model, static prefix, warm start and
billed usage), prices every (spec, budget, scenario) chain as billed
(:func:`~packproof.evals.metrics.cache.billed.price_as_billed`) and sums, per
spec and budget:

- ``recall``: mean evidence recall over the steps with label-free evidence;
- ``usd``: the input cost in USD; ``multiple``: usd / the sessions' bill;
- ``hit_rate``: cached / prompt tokens (the seed steps not counted);
- ``over_budget``: steps whose pack exceeds the budget (a newest message larger
  than the budget is always kept: the fresh tail).

Beside them, ``actual``: the bill of the same steps (their recorded usage at the
same prices; recall 1 by construction: each call sent every earlier message),
and ``as_sent``: every step's whole prompt priced by the same model, which shows
how far the pricing itself is from the bill. The report is computed once and
rendered as Markdown (:func:`markdown`), JSON (:meth:`SessionsReport.to_json`)
and a plot (``evals/report/plots/sessions.py``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from packproof.evals.metrics.cache.billed import BilledStep, StepBill, price_as_billed
from packproof.evals.metrics.cache.check import Prices, load_prices
from packproof.evals.report.md import code
from packproof.evals.run.journal import journal_path, read_results
from packproof.evals.scenarios.format import Scenario, Turn, load_compiled

__all__ = [
    "Figures",
    "SessionsReport",
    "build",
    "chain_steps",
    "figures",
    "markdown",
]

ACTUAL = "as billed (whole prompts, the session's own caching)"
AS_SENT = "whole prompts, priced by the model"


class Figures(NamedTuple):
    """One (spec, budget)'s totals over every chain (module docstring); ``spec``
    is the spec's label as the config wrote it."""

    spec: str
    budget: str
    steps: int
    evidence_steps: int
    recall: float | None
    usd: float
    multiple: float | None
    hit_rate: float | None
    over_budget: int


@dataclass(frozen=True)
class SessionsReport:
    """The figures per spec and budget, in config order, the actual bill and the
    whole prompts priced by the model, and where the prices come from."""

    rows: tuple[Figures, ...]
    actual: Figures
    as_sent: Figures
    scenarios: int
    prices: str
    run: str
    specs: Mapping[str, str]  # label -> canonical spec

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "specs": dict(self.specs),
            "scenarios": self.scenarios,
            "prices": self.prices,
            "actual": self.actual._asdict(),
            "as_sent": self.as_sent._asdict(),
            "rows": [r._asdict() for r in self.rows],
        }


def _tag(turn: Turn, prefix: str) -> str | None:
    return next((t[len(prefix) :] for t in turn.tags if t.startswith(prefix)), None)


def chain_steps(
    scenario: Scenario, packs: Iterable[tuple[int, Sequence[Sequence[Any]]]]
) -> list[BilledStep]:
    """The billed steps of one chain: ``packs`` gives (turn, segments) in turn
    order; the rest comes from the imported turn (its tags and usage)."""
    out = []
    for turn_index, segments in packs:
        turn = scenario.turns[turn_index]
        model = _tag(turn, "model:")
        if model is None or turn.usage is None or turn.t is None:
            raise ValueError(
                f"scenario {scenario.id} turn {turn_index}: not imported by "
                "`packproof import claude-code` (no model tag, usage or time)"
            )
        warm = _tag(turn, "warm:")
        out.append(
            BilledStep(
                turn.t,
                model,
                int(_tag(turn, "static:") or 0),
                None if warm is None else int(warm),
                [(str(i), int(k)) for i, k in segments],
                turn.usage,
                int(_tag(turn, "epoch:") or 0),
            )
        )
    return out


def figures(
    spec: str,
    budget: str,
    bills: Sequence[StepBill],
    recalls: Sequence[float | None],
    over_budget: int,
    billed_total: float,
    *,
    actual: bool = False,
) -> Figures:
    """A row from its steps' bills (``actual``: the bill's own figures)."""
    scored = [r for r in recalls if r is not None]
    usd = sum(b.billed_usd if actual else b.usd for b in bills)
    prompt = sum(b.billed_prompt if actual else b.cached + b.written + b.uncached for b in bills)
    cached = sum(b.billed_cached if actual else b.cached for b in bills)
    return Figures(
        spec,
        budget,
        len(bills),
        len(scored),
        sum(scored) / len(scored) if scored else None,
        usd,
        usd / billed_total if billed_total else None,
        cached / prompt if prompt else None,
        over_budget,
    )


class _Cell(NamedTuple):
    turn: int
    segments: list[list[Any]]
    recall: float | None
    over: bool


def _read_results(path: Path) -> dict[tuple[str, str, str], list[_Cell]]:
    """(spec, budget, scenario) -> its steps, from a run's journal (failed
    cells and probes left out: they have no pack to price)."""
    chains: dict[tuple[str, str, str], list[_Cell]] = defaultdict(list)
    for r in read_results(path):
        if r.get("status") != "ok" or r.get("probe") or "segments" not in r:
            continue
        metrics = r.get("metrics") or {}
        chains[r["spec"], str(r["budget"]), r["scenario"]].append(
            _Cell(
                r["turn"],
                r["segments"],
                metrics.get("evidence_recall"),
                bool(metrics.get("over_budget")),
            )
        )
    return chains


def _labels(run: Path, seen: Iterable[str]) -> dict[str, str]:
    """Spec -> its label as the config wrote it (summary.json), in config order;
    a spec the summary lacks is its own label, after them."""
    order = list(dict.fromkeys(seen))
    summary = run / "summary.json"
    known: dict[str, str] = {}
    if summary.is_file():
        strategies = orjson.loads(summary.read_bytes()).get("strategies", [])
        known = {s["spec"]: s["label"] for s in strategies if s["spec"] in order}
    return known | {s: s for s in order if s not in known}


def build(run: Path, suite: Path, prices: Prices | None = None) -> SessionsReport:
    """The report of the eval run in folder ``run`` on the scenarios of ``suite``."""
    prices = prices or load_prices()
    scenarios = {s.id: s for s in load_compiled(suite)}
    chains = _read_results(journal_path(run))
    groups: dict[tuple[str, str], tuple[list[StepBill], list[float | None], list[bool]]] = {}
    for (spec, budget, sid), cells in chains.items():
        if sid not in scenarios:
            raise ValueError(f"{run}: scenario {sid} is not in {suite}")
        cells.sort(key=lambda c: c.turn)
        bills = price_as_billed(
            chain_steps(scenarios[sid], ((c.turn, c.segments) for c in cells)), prices
        )
        bucket = groups.setdefault((spec, budget), ([], [], []))
        bucket[0].extend(bills)
        bucket[1].extend(c.recall for c in cells)
        bucket[2].extend(c.over for c in cells)
    # The bill and the whole prompts: every step of every scenario the run priced.
    priced = sorted({sid for _, _, sid in chains})
    whole: list[StepBill] = []
    evidence: list[float | None] = []  # every earlier message was sent: recall 1
    for sid in priced:
        turns = [(i, t) for i, t in enumerate(scenarios[sid].turns) if not t.probe]
        packs = ((i, [(it["id"], it["tokens"]) for it in t.request["items"]]) for i, t in turns)
        whole += price_as_billed(chain_steps(scenarios[sid], packs), prices)
        evidence += [1.0 if t.relevant else None for _, t in turns]
    billed_total = sum(b.billed_usd for b in whole)
    actual = figures(ACTUAL, "", whole, evidence, 0, billed_total, actual=True)
    as_sent = figures(AS_SENT, "", whole, evidence, 0, billed_total)
    labels = _labels(run, (spec for spec, _ in groups))
    budgets = sorted({b for _, b in groups}, key=lambda b: (len(b), b))  # numeric order
    rows = tuple(
        figures(label, budget, g[0], g[1], sum(g[2]), billed_total)
        for budget in budgets
        for spec, label in labels.items()
        if (g := groups.get((spec, budget))) is not None
    )
    return SessionsReport(
        rows,
        actual,
        as_sent,
        len(priced),
        f"{prices.source} ({prices.date})",
        run.name,
        {label: spec for spec, label in labels.items()},
    )


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def markdown(report: SessionsReport, command: str) -> str:
    """The report as Markdown: the bill, then one table row per spec and budget."""
    a, s = report.actual, report.as_sent
    lines = [
        "# Claude Code sessions: counterfactual replays priced as billed",
        "",
        f"Made by `{command}` (run {code(report.run)}). {report.scenarios} scenarios, "
        f"{a.steps} API calls, {a.evidence_steps} of them with label-free evidence. "
        f"Prices: {report.prices}.",
        "",
        f"- **The sessions as billed**: input cost ${a.usd:.2f}, cache hit rate "
        f"{_num(a.hit_rate)}; recall 1 (every call sent every earlier message).",
        f"- **The same prompts priced by the model**: ${s.usd:.2f} "
        f"({_num(s.multiple)} x the bill), hit rate {_num(s.hit_rate)}.",
        "",
        "Recall: mean evidence recall over the steps with evidence. Cost: input tokens only "
        "(reads 0.1x, writes 1.25x or 2x as the session's lifetime), in USD and as a multiple "
        "of the bill. Over budget: steps whose newest message alone exceeds the budget.",
        "",
        "| budget | spec | recall | input USD | x bill | hit rate | over budget |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in report.rows:
        lines.append(
            f"| {r.budget} | {code(r.spec)} | {_num(r.recall)} | {r.usd:.2f} | "
            f"{_num(r.multiple)} | {_num(r.hit_rate)} | {r.over_budget} |"
        )
    return "\n".join(lines) + "\n"
