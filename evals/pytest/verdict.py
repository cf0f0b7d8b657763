"""The verdict on one case of the pytest plugin (:mod:`packproof.evals.pytest.plugin`):
a scenario turn's request packed by the packer under test, judged as
``packproof eval --packer`` judges an external pack (docs/external-packers.md), and
said as a pytest user reads a failed assertion: what was unmet, then the
selected, missing and unexpected ids.

The plugin imports this module only when ``--packproof-suite`` is given, so a
plain pytest run never pays for the harness.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from packproof.evals.metrics.cell import HARD_INVARIANTS, cell_metrics
from packproof.evals.run.judge import judged, pack_problem, traced
from packproof.evals.scenarios.format import Turn, expectation_failures
from packproof.packer.errors import InputError
from packproof.packer.model import QUARANTINED
from packproof.packer.pipeline import PackResult, assemble
from packproof.packer.request import parse_request, request_to_json

__all__ = ["ALL", "Packer", "Verdict", "judge"]

ALL: Final = "*"
# Expectations that read packproof's own trace: checked only on a pack that carries it.
TRACE_KEYS: Final = ("mode", "reasons")
SHOWN: Final = 20  # ids listed per diff line before "... and N more"

# A packer as the plugin calls it: the request -> (failure message or None, pack).
Packer = Callable[[dict[str, Any]], tuple[str | None, Any]]


@dataclass(frozen=True)
class Verdict:
    """What went wrong with one pack: one line per unmet expectation or broken
    invariant (none: the case passes), and the ids diff. ``selected`` is None
    when the packer gave no valid pack."""

    failures: list[str]
    selected: list[str] | None = None
    missing: dict[str, list[str]] = field(default_factory=dict)  # id -> why it belongs
    unexpected: dict[str, list[str]] = field(default_factory=dict)  # id -> why it does not

    def render(self, header: Sequence[str] = ()) -> str:
        """One line per failure, then ``header`` (the scenario's why and where),
        then the ids: selected in pack order, missing (-) and unexpected (+),
        each with why it belongs or does not."""
        if self.selected is None:  # the packer gave no pack: nothing to diff
            return "\n".join([*(f"failed:     {f}" for f in self.failures), *header])
        lines = [*(f"unmet:      {f}" for f in self.failures), *header]
        lines.append(f"selected:   {_ids(self.selected) or '(nothing)'}")
        for mark, label, ids in (
            ("-", "missing", self.missing),
            ("+", "unexpected", self.unexpected),
        ):
            shown = list(ids.items())
            lines.extend(
                f"{label + ':':<11} {mark} {ref}  {', '.join(why)}" for ref, why in shown[:SHOWN]
            )
            if len(shown) > SHOWN:
                lines.append(f"{label + ':':<11} ... and {len(shown) - SHOWN} more")
        return "\n".join(lines)


def _ids(ids: Sequence[str]) -> str:
    text = " ".join(ids[: SHOWN * 2])
    return text if len(ids) <= SHOWN * 2 else f"{text} ... ({len(ids) - SHOWN * 2} more)"


def judge(
    turn: Turn,
    packer: Packer,
    *,
    request_fields: Mapping[str, Any] | None = None,
    expect: str = ALL,
    min_recall: float | None = None,
) -> Verdict:
    """Pack ``turn``'s request with the packer under test and judge the answer:
    the applicable expectations, the hard invariants and, if set, the minimum
    evidence recall. ``request_fields`` (the strategy, cache-aware options) are
    set in the request; ``expect`` names whose expectations apply besides
    ``"*"``. ``mode`` and ``reasons`` expectations describe packproof's trace, so
    they are checked only on a pack carrying it."""
    try:
        reference = assemble(parse_request({**turn.request, **(request_fields or {})}))
    except InputError as exc:
        return Verdict([f"the scenario's request is invalid: {exc}"])
    failure, answer = packer(request_to_json(reference.request))
    failure = failure or _invalid(answer, reference)
    if failure is not None:
        return Verdict([failure])
    result = judged(reference, answer)
    with_trace = traced(answer)
    applies = turn.expectations(expect)
    # Reasons are read from the pack's own trace, which has every reason of a
    # decision (judged() keeps each candidate's outcome, not the reasons the
    # previous pack adds); without packproof's trace, mode and reasons go unchecked.
    dropped = ("reasons",) if with_trace else TRACE_KEYS
    failures = expectation_failures(_without(turn, dropped), expect, result)
    if with_trace:
        failures += _reason_failures(applies, answer["trace"])
    metrics = cell_metrics(result, turn.relevant, failures, applies, pack_items=answer["items"])
    failures += [
        f"{name}: {_invariant(name, result, answer)}" for name in HARD_INVARIANTS if metrics[name]
    ]
    recall = metrics["evidence_recall"]
    if min_recall is not None and recall is not None and recall < min_recall:
        failures.append(f"evidence recall {recall:.3g} < --packproof-min-recall {min_recall:g}")
    selected = [it["recordRef"] for it in answer["items"]]
    return Verdict(failures, selected, *_diff(turn, result, applies, selected))


def _without(turn: Turn, keys: Sequence[str]) -> Turn:
    """``turn`` with the expectations on ``keys`` left out."""
    kept = {k: {x: v for x, v in e.items() if x not in keys} for k, e in turn.expect.items()}
    return replace(turn, expect=kept)


def _reason_failures(applies: Sequence[Mapping[str, Any]], trace: Mapping[str, Any]) -> list[str]:
    """Unmet ``reasons`` expectations, against the trace's own decision reasons
    (worded as :func:`~packproof.evals.scenarios.format.expectation_failures` words them)."""
    actual = {c["id"]: c["decision"]["reason"] for c in trace["candidates"]}
    failures = []
    for exp in applies:
        for ref, codes in sorted(exp.get("reasons", {}).items()):
            lacking = [c for c in codes if c not in actual.get(ref, [])]
            if lacking:
                failures.append(f"{ref}: reasons {actual.get(ref, [])} lack {lacking}")
    return failures


def _invalid(answer: Any, reference: PackResult) -> str | None:
    """Why ``answer`` is not a pack of this request (None: it is): the check
    ``packproof eval`` holds an external pack to."""
    if isinstance(answer, PackResult):
        return "the packer returned a PackResult, not its ContextPack v1 dict (result.to_dict())"
    if not isinstance(answer, Mapping):
        return f"the packer returned {type(answer).__name__}, not a ContextPack v1 dict"
    problem = pack_problem(answer, reference.items.position)
    return None if problem is None else f"the packer's answer {problem}"


def _invariant(name: str, result: PackResult, answer: Mapping[str, Any]) -> str:
    """A broken hard invariant, said with the ids (or tokens) that break it."""

    items = result.items
    lost = {"tail_lost": result.in_tail, "anchors_lost": result.anchored}
    if name in lost:
        ids = [items.ids[i] for i in (lost[name] & ~result.included).nonzero()[0].tolist()]
        what = "fresh tail" if name == "tail_lost" else "anchored items"
        return f"{what} not packed: {ids}"
    if name == "quarantined_included":
        bad = (items.trust == QUARANTINED) & result.included
        ids = [items.ids[i] for i in bad.nonzero()[0].tolist()]
        return f"quarantined items packed under trust_policy {result.request.trust_policy}: {ids}"
    if name == "budget_violations":
        # the packed items outside the tail and anchors (result.evictable_tokens_used
        # assumes the whole tail and every anchor packed)
        evictable = result.included & ~result.in_tail & ~result.anchored
        return (
            f"evictable items use {int(items.tokens[evictable].sum())} tokens, "
            f"{result.remaining_tokens} left after the fresh tail and anchors "
            f"(budget_tokens {result.request.budget_tokens})"
        )
    if name == "citations_missing":
        ids = [
            it["recordRef"]
            for it in answer["items"]
            if it["citations"].get("recordRef") != it["recordRef"]
        ]
        return f"items not citing their own recordRef: {ids}"
    return "must be 0"


def _diff(
    turn: Turn, result: PackResult, applies: Sequence[Mapping[str, Any]], selected: Sequence[str]
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The ids that should be packed and are not, and those packed that should
    not be, each with why."""

    items = result.items
    kept = set(selected)
    missing: dict[str, list[str]] = {}
    unexpected: dict[str, list[str]] = {}

    def note(into: dict[str, list[str]], refs: Iterable[str], why: str) -> None:
        for ref in refs:
            if why not in into.setdefault(ref, []):
                into[ref].append(why)

    note(missing, [items.ids[i] for i in result.in_tail.nonzero()[0].tolist()], "fresh tail")
    note(missing, [items.ids[i] for i in result.anchored.nonzero()[0].tolist()], "anchored")
    for exp in applies:
        note(missing, exp.get("must_include", []), "must_include")
        note(missing, exp.get("selected", []), "expected selected")
        note(missing, exp.get("order", []), "expected order")
        note(unexpected, exp.get("must_exclude", []), "must_exclude")
        if "selected" in exp:
            note(
                unexpected,
                [r for r in selected if r not in exp["selected"]],
                "not expected selected",
            )
    note(missing, turn.relevant, "gold evidence")
    if result.request.trust_policy != "off":
        quarantined = (items.trust == QUARANTINED).nonzero()[0].tolist()
        note(unexpected, [items.ids[i] for i in quarantined], "quarantined")
    return (
        {ref: why for ref, why in missing.items() if ref not in kept},
        {ref: why for ref, why in unexpected.items() if ref in kept},
    )
