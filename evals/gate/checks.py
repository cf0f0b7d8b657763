"""The gate's checks of one summary against another: a pure function of the two
summaries and the thresholds (:func:`compare`), whose result every renderer reads.

Kinds of check, each with its verdict:

- a **rule** (``hard_invariants``, ``expectations``, ``expectation_failures``)
  is absolute (``0``, ``all``: it holds or ``FAILED``, whatever the baseline
  says) or ratchets (``no_new``: it holds or ``NEW FAILURE``, when a cell fails
  that did not in the baseline; ratchet.py judges the cells). Failing cells a
  known failure matches never fail it;
- a **metric** is ``ok`` or ``REGRESSED`` (moved the wrong way beyond its
  allowance), or ``not significant`` (beyond it, but a paired test over
  scenarios could not tell the move from noise: shown, never failing);
- a group or metric the baseline has and the current run lacks is ``MISSING``;
  one only the current run has is ``new`` (its rules are still checked).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from packproof.evals.gate.inputs import Gates, group_key, replay_key
from packproof.evals.gate.metrics import GATEABLE
from packproof.evals.gate.ratchet import (
    FAILING_NOW,
    KNOWN,
    NEW_FAILURE,
    Judgement,
    cell_of,
    judge,
)

__all__ = [
    "FAILED",
    "MISSING",
    "NEW",
    "NEW_FAILED",
    "NOT_SIGNIFICANT",
    "OK",
    "REGRESSED",
    "RULES",
    "Check",
    "GateResult",
    "compare",
    "number",
    "signed",
]

OK, REGRESSED, MISSING, NEW = "ok", "REGRESSED", "MISSING", "new"
FAILED, NOT_SIGNIFICANT, NEW_FAILED = "FAILED", "not significant", "NEW FAILURE"
FAILING: Final = (FAILED, NEW_FAILED, REGRESSED, MISSING)
RULES: Final = ("hard_invariants", "expectations", "expectation_failures")
TOLERANCE: Final = 1e-9  # a move equal to its allowance after rounding does not regress
_MAX_FAILURES_SHOWN: Final = 20


def number(value: float) -> str:
    """A mean as the gate shows it: 4 decimals, or thousands with one."""
    return f"{value:,.1f}" if abs(value) >= 1000 else f"{value:.4f}"


def signed(value: float) -> str:
    value = round(value, 4) + 0.0  # no "-0.0000"
    return f"{value:+,.1f}" if abs(value) >= 1000 else f"{value:+.4f}"


@dataclass(frozen=True)
class Check:
    """One row of the gate's table. ``baseline``/``current`` are means, counts
    or short texts; ``change`` is current - baseline for a metric; ``test`` the
    paired test that judged a move beyond its allowance (``mean``, ``low``,
    ``high``, ``p_value``, ``clusters``), or ``untested`` says why none could;
    ``known``: a rule's failing cells that known failures excuse."""

    strategy: str
    budget: str
    metric: str
    baseline: float | str | None
    current: float | str | None
    change: float | None
    allowed: float | str | None
    verdict: str
    test: Mapping[str, Any] | None = None
    untested: str = ""
    known: int = 0

    @property
    def failed(self) -> bool:
        """Whether this check fails the gate."""
        return self.verdict in FAILING

    @property
    def rule(self) -> bool:
        return self.metric in RULES

    @property
    def better(self) -> int:
        gated = GATEABLE.get(self.metric)
        return 1 if gated is None else gated.better

    @property
    def drop(self) -> float | None:
        """How far the metric moved the wrong way (a rise, for a cost)."""
        gated = GATEABLE.get(self.metric)
        return None if self.change is None or gated is None else gated.wrong_way(self.change)

    def allowed_text(self) -> str:
        """The allowance, signed the way it may move: ``-0.02``, ``+500``, ``±2``."""
        if self.allowed is None:
            return "–"
        if isinstance(self.allowed, str):
            return self.allowed
        return {1: "-", -1: "+", 0: "±"}[self.better] + f"{self.allowed:g}"

    def cells(self) -> tuple[str, ...]:
        return (
            self.strategy,
            self.budget,
            self.metric,
            _show(self.baseline),
            _show(self.current),
            "–" if self.change is None else signed(self.change),
            self.allowed_text(),
            self.verdict,
        )


def _show(value: float | str | None) -> str:
    if value is None:
        return "–"
    return number(value) if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class GateResult:
    """Every check made, the header lines (baseline, current, gates), notes for
    the reader (not verdicts), the failing expectations an absolute rule fails
    on (``key: why``, keys naming strategies by label), with a significance
    test its level and the confidence of its intervals, and the failing cells
    judged one by one (new, still failing, known, fixed; stale known failures)."""

    checks: tuple[Check, ...]
    header: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()
    alpha: float | None = None
    confidence: float | None = None
    cells: Judgement = field(default_factory=Judgement)

    @property
    def regressions(self) -> tuple[Check, ...]:
        """Every check that fails the gate: failed rules, regressed or missing metrics."""
        return tuple(c for c in self.checks if c.failed)

    @property
    def passed(self) -> bool:
        return not self.regressions

    def of(self, verdict: str) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.verdict == verdict)


def _mean(group: Mapping[str, Any], metric: str) -> float | None:
    # a cell metric is under "metrics"; prefix stability and replay values beside them
    stat = group["metrics"].get(metric) if GATEABLE[metric].source == "cell" else group.get(metric)
    return None if stat is None else float(stat["mean"])


def _metric_checks(
    key: tuple[str, str],
    base: Mapping[str, Any],
    cur: Mapping[str, Any],
    gated: Mapping[str, float],
) -> Iterator[Check]:
    for metric, allowed in gated.items():
        b, c = _mean(base, metric), _mean(cur, metric)
        if b is None and c is None:
            continue
        if b is None or c is None:
            yield Check(*key, metric, b, c, None, allowed, MISSING if c is None else NEW)
            continue
        wrong = GATEABLE[metric].wrong_way(c - b)
        verdict = REGRESSED if wrong > allowed + TOLERANCE else OK
        yield Check(*key, metric, b, c, c - b, allowed, verdict)


def _rule(
    rule: str,
    key: tuple[str, str],
    shown: tuple[str | None, str],
    failing: bool,
    mode: str,
    judged: Judgement,
) -> Check:
    """One group's check of ``rule``: under ``no_new``, whether a cell fails
    that did not in the baseline; else whether a cell fails at all (with the
    failing cells judged one by one, those a known failure excuses do not)."""
    known = judged.count(KNOWN, key, rule)
    if mode == "no_new":
        verdict = NEW_FAILED if judged.count(NEW_FAILURE, key, rule) else OK
    else:
        failing = judged.count(FAILING_NOW, key, rule) > 0 if judged.listed else failing
        verdict = FAILED if failing else OK
    return Check(*key, rule, *shown, None, mode, verdict, known=known)


def _rule_checks(
    key: tuple[str, str],
    base: Mapping[str, Any] | None,
    cur: Mapping[str, Any],
    gates: Gates,
    judged: Judgement,
) -> Iterator[Check]:
    """Hard invariants (cell failures of an external packer among them) and
    expectations of one current group."""
    counts = cur["hard_invariants"]
    total = sum(counts.values())
    shown: str = str(total)
    if total:
        shown += " (" + ", ".join(f"{k}={v}" for k, v in sorted(counts.items()) if v) + ")"
    before = None if base is None else str(sum(base["hard_invariants"].values()))
    mode = str(gates.hard_invariants)
    yield _rule("hard_invariants", key, (before, shown), total > 0, mode, judged)
    exp = cur["expectations"]
    base_exp = None if base is None else base["expectations"]
    if exp["total"] or (base_exp is not None and base_exp["total"]):
        before = None if base_exp is None else f"{base_exp['passed']}/{base_exp['total']}"
        now = f"{exp['passed']}/{exp['total']}"
        failing = exp["passed"] < exp["total"]
        yield _rule("expectations", key, (before, now), failing, gates.expectations, judged)


def _group_checks(
    base_groups: Mapping[tuple[str, str], Mapping[str, Any]],
    cur_groups: Mapping[tuple[str, str], Mapping[str, Any]],
    gated: Mapping[str, float],
    rules: tuple[Gates, Judgement] | None,
) -> Iterator[Check]:
    """Matched groups in the baseline's order, then the groups new in the run;
    with ``rules``, each current group's hard invariants and expectations."""
    for key, base in base_groups.items():
        cur = cur_groups.get(key)
        if cur is None:
            yield Check(*key, "*", "present", None, None, None, MISSING)
            continue
        yield from _metric_checks(key, base, cur, gated)
        if rules:
            yield from _rule_checks(key, base, cur, *rules)
    for key, cur in cur_groups.items():
        if key not in base_groups:
            yield Check(*key, "*", None, "present", None, None, NEW)
            if rules:
                yield from _rule_checks(key, None, cur, *rules)


def _relabel(key: str, labels: Mapping[str, str]) -> str:
    """A cell key (``suite/scenario#turn|spec|budget``) naming its strategy by
    label rather than by its canonical spec, which can run to hundreds of characters."""
    cell, _, rest = key.partition("|")
    spec, _, budget = rest.rpartition("|")
    return f"{cell}|{labels[spec]}|{budget}" if spec in labels else key


def _suites_note(baseline: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    base = {s["file"]: s["sha256"] for s in baseline["manifest"]["suites"]}
    cur = {s["file"]: s["sha256"] for s in current["manifest"]["suites"]}
    if base == cur:
        return []
    changed = sorted(f for f in base.keys() | cur.keys() if base.get(f) != cur.get(f))
    return [
        "scenario suites differ from the baseline's (" + ", ".join(changed) + "): "
        "a drop may come from changed scenarios; run `packproof baseline` if intended"
    ]


def _expectation_failures(
    baseline: Mapping[str, Any], current: Mapping[str, Any], gates: Gates, judged: Judgement
) -> tuple[Check, list[str]]:
    """The run's check of its listed expectation failures, and the lines of
    those an absolute rule fails on (under ``no_new`` the new failing cells
    say what they missed)."""
    fails = current["expectation_failures"]
    before = str(len(baseline["expectation_failures"]))
    if gates.expectations == "no_new":
        verdict = NEW_FAILED if judged.count(NEW_FAILURE, rule="expectations") else OK
        return Check(
            "*", "*", "expectation_failures", before, str(len(fails)), None, "no_new", verdict
        ), []
    labels = {s["spec"]: s["label"] for s in current["strategies"]}

    def excused(key: str) -> bool:
        cell = cell_of(key, labels, "expectations")
        return cell is not None and cell[:4] in judged.excused

    mine = [f for f in fails if not excused(f["key"])]
    now = str(len(mine)) + (f" (+{len(fails) - len(mine)} known)" if len(mine) < len(fails) else "")
    verdict = FAILED if mine else OK
    check = Check("*", "*", "expectation_failures", before, now, None, "0", verdict)
    return check, [
        f"{_relabel(f['key'], labels)}: {'; '.join(map(str, f['failures']))}" for f in mine
    ]


def compare(
    baseline: Mapping[str, Any],
    current: Mapping[str, Any],
    gates: Gates,
    sources: tuple[str, str] = ("baseline", "current"),
) -> GateResult:
    """Every check of ``current`` against ``baseline`` under ``gates``, in the
    baseline's group order, then the groups new in the current run; then the
    replay groups, when a replay metric is gated; then the run's expectation
    failures. ``sources`` name the two summaries in errors. The result has no
    header and no significance test yet."""
    judged = judge(baseline, current, gates, sources)
    checks = list(
        _group_checks(
            {group_key(g): g for g in baseline["groups"]},
            {group_key(g): g for g in current["groups"]},
            gates.metrics(replay=False),
            (gates, judged),
        )
    )
    if gates.metrics(replay=True):
        checks += _group_checks(
            {replay_key(g): g for g in baseline.get("replay", {}).get("groups", [])},
            {replay_key(g): g for g in current.get("replay", {}).get("groups", [])},
            gates.metrics(replay=True),
            None,
        )
    check, failures = _expectation_failures(baseline, current, gates, judged)
    checks.append(check)
    if len(failures) > _MAX_FAILURES_SHOWN:
        extra = len(failures) - _MAX_FAILURES_SHOWN
        failures = [*failures[:_MAX_FAILURES_SHOWN], f"... and {extra} more (see summary.json)"]
    notes = _suites_note(baseline, current)
    new = [f"{c.strategy} @ {c.budget}" for c in checks if c.verdict == NEW and c.metric == "*"]
    if new:
        notes.append(f"new in the current run, not in the baseline: {', '.join(new)}")
    return GateResult(tuple(checks), notes=tuple(notes), failures=tuple(failures), cells=judged)
