"""The ratchet: the current run's failing cells judged one by one against the
baseline's and the known failures of the gates file (docs/gate.md, "The ratchet").

A failing cell is (suite/scenario, turn, strategy label, budget) and the class
it failed (``expectations``, ``hard_invariants``, ``cell_failures``), read from
``summary["failures"]["scenarios"]`` (evals/report/failures.py ``tally``). The
``hard_invariants`` rule covers two classes (a broken invariant, a packer
failure), ``expectations`` the third. Each failing cell of the current run is:

- **known**: a ``known_failures`` entry matches it (whatever the rule says);
- under a ``no_new`` rule, **still failing** when the baseline's same cell
  failed the same class, else a **new failure** (which fails the gate);
- under an absolute rule, **failing** (the rule's own line reports it).

A baseline failing cell whose cell fails neither class of that rule now (and
was judged: a packer failure fixes no expectation), in a group the current run
has, is **fixed** (shown, never failing). A summary that
does not list its failing cells lists none when its groups count no failure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from packproof.evals.gate.inputs import Gates, group_key
from packproof.evals.gate.known import CLASS_WORDS, FailingCell, KnownFailure
from packproof.packer.errors import InputError

__all__ = [
    "FAILING_NOW",
    "FIXED",
    "KNOWN",
    "NEW_FAILURE",
    "RULE_OF",
    "STATUSES",
    "STILL",
    "CellGroup",
    "Judgement",
    "cell_of",
    "judge",
]

NEW_FAILURE, FAILING_NOW, KNOWN, STILL, FIXED = (
    "new failure",
    "failing",
    "known",
    "still failing",
    "fixed",
)
STATUSES: Final = (NEW_FAILURE, FAILING_NOW, KNOWN, STILL, FIXED)  # the order lines are shown in
RULE_OF: Final = {
    "hard_invariants": "hard_invariants",
    "cell_failures": "hard_invariants",
    "expectations": "expectations",
}
_CLASS_ORDER: Final = tuple(CLASS_WORDS)
_INVARIANT = re.compile(r"hard invariant (\w+) = ")
_MAX_WHY: Final = 200
_POINTER: Final = "/failures/scenarios"


@dataclass(frozen=True)
class CellGroup:
    """The failing cells of one scenario with one status, class, strategy label
    and budget: their turns, what failed (``anchors_lost``, ``CRASH``, ...), why
    (the missed expectations, or the known failure's reason) and, for cells
    still failing another way than in the baseline, what failed there."""

    status: str
    klass: str
    scenario: str
    label: str
    budget: str
    turns: tuple[int, ...]
    what: str
    why: str = ""
    before: str = ""


@dataclass(frozen=True)
class Judgement:
    """Every failing cell's status, grouped for display; the stale known
    failures; and the cells (scenario, turn) of each (label, budget, rule, status)."""

    groups: tuple[CellGroup, ...] = ()
    stale: tuple[KnownFailure, ...] = ()
    counts: Mapping[tuple[str, str, str, str], frozenset[tuple[str, int]]] = field(
        default_factory=dict
    )
    excused: frozenset[tuple[str, int, str, str]] = frozenset()
    listed: bool = False  # whether the current run's failing cells were judged one by one

    def count(self, status: str, key: tuple[str, str] | None = None, rule: str = "") -> int:
        """Cells with ``status``, in one group and rule when given; a cell that
        failed both rules with that status is one cell."""
        return len(
            {
                (label, budget, *cell)
                for (label, budget, r, s), cells in self.counts.items()
                if s == status and (key is None or key == (label, budget)) and rule in ("", r)
                for cell in cells
            }
        )


def _group_failures(summary: Mapping[str, Any]) -> set[tuple[str, str, str]]:
    """(label, budget, rule) of every group whose counts say a cell failed that rule."""
    out = set()
    for g in summary["groups"]:
        if sum(g["hard_invariants"].values()):
            out.add((*group_key(g), "hard_invariants"))
        if g["expectations"]["passed"] < g["expectations"]["total"]:
            out.add((*group_key(g), "expectations"))
    return out


def failing_cells(summary: Mapping[str, Any], source: str) -> list[FailingCell] | None:
    """The summary's failing cells; none when its groups count no failure and it
    lists none; ``None`` when it has failures but does not list them. A list
    that disagrees with the group counts is bad input."""
    counted = _group_failures(summary)
    listed = summary.get("failures", {}).get("scenarios")
    if listed is None:
        return None if counted else []
    cells = [
        FailingCell(e["scenario"], int(t), e["label"], e["budget"], e["class"])
        for e in listed
        for t in e["turns"]
    ]
    named = {(c.label, c.budget, RULE_OF[c.klass]) for c in cells}
    for label, budget, rule in sorted(counted ^ named):
        said = "counts" if (label, budget, rule) in counted else "does not count"
        raise InputError(
            _POINTER,
            f"the failing cells listed disagree with the group counts: group {label} @ "
            f"{budget} {said} failing {CLASS_WORDS[rule]}",
            expected="the same failing groups in both",
            found=f"{label} @ {budget}",
            source=source,
        )
    return cells


def _not_listed(role: str, source: str, needs: str, fix: str) -> InputError:
    return InputError(
        _POINTER,
        f"the {role} summary counts failing cells but does not list them, and {needs} "
        f"compare failing cells one by one; {fix}",
        expected="a list of failing cells",
        found="nothing",
        source=source,
    )


def cell_of(key: str, labels: Mapping[str, str], klass: str) -> FailingCell | None:
    """The failing cell of a cell key ``suite/scenario#turn|spec|budget``."""
    cell, _, rest = key.partition("|")
    spec, _, budget = rest.rpartition("|")
    scenario, _, turn = cell.rpartition("#")
    if not turn.isdigit():
        return None
    return FailingCell(scenario, int(turn), labels.get(spec, spec), budget, klass)


def _details(summary: Mapping[str, Any]) -> dict[FailingCell, list[str]]:
    """What each failing cell broke, where the summary says: the invariant or
    packer failure of the cells it lists, each missed expectation's reasons."""
    labels = {s["spec"]: s["label"] for s in summary["strategies"]}
    out: dict[FailingCell, list[str]] = {}
    for entry in summary.get("failures", {}).get("listed", []):
        for line in entry["problems"]:
            broken = _INVARIANT.match(line)  # else "CRASH: its message", a packer failure
            klass, word = (
                ("hard_invariants", broken[1]) if broken else ("cell_failures", line.split(":")[0])
            )
            cell = cell_of(entry["key"], labels, klass)
            if cell is not None:
                out.setdefault(cell, []).append(word)
    for entry in summary["expectation_failures"]:
        cell = cell_of(entry["key"], labels, "expectations")
        if cell is not None:
            out.setdefault(cell, []).extend(" ".join(str(f).split()) for f in entry["failures"])
    return out


def _what(klass: str, said: Iterable[str]) -> tuple[str, str]:
    """A group's (what failed, why) from its cells' details."""
    unique = list(dict.fromkeys(said))
    if klass == "expectations":
        why = "; ".join(unique)
        return "expectations missed", why if len(why) <= _MAX_WHY else why[: _MAX_WHY - 3] + "..."
    fallback = "a hard invariant" if klass == "hard_invariants" else "a packer failure"
    return ", ".join(sorted(unique)) or fallback, ""


def _grouped(
    statuses: Mapping[FailingCell, tuple[str, KnownFailure | None]],
    details: Sequence[Mapping[FailingCell, list[str]]],
    order: Mapping[tuple[str, str], int],
) -> tuple[CellGroup, ...]:
    """Cells of one scenario, status, class, group and known-failure entry as one line."""
    bunches: dict[tuple[Any, ...], list[FailingCell]] = {}
    for cell, (status, entry) in statuses.items():
        key = (status, cell.klass, cell.scenario, cell.label, cell.budget, entry)
        bunches.setdefault(key, []).append(cell)
    out = []
    for (status, klass, scenario, label, budget, entry), cells in bunches.items():
        said = details[status == FIXED]
        what, why = _what(klass, (w for c in cells for w in said.get(c, [])))
        before = ""
        if status == STILL:  # the same class, maybe another invariant or packer failure
            before = _what(klass, (w for c in cells for w in details[1].get(c, [])))[0]
        turns = tuple(sorted(c.turn for c in cells))
        why = entry.reason if entry is not None else why
        before = "" if before == what else before
        out.append(CellGroup(status, klass, scenario, label, budget, turns, what, why, before))
    out.sort(
        key=lambda g: (
            STATUSES.index(g.status),
            order.get((g.label, g.budget), len(order)),
            g.label,
            g.budget,
            g.scenario,
            _CLASS_ORDER.index(g.klass),
            g.why,
        )
    )
    return tuple(out)


def judge(
    baseline: Mapping[str, Any],
    current: Mapping[str, Any],
    gates: Gates,
    sources: tuple[str, str] = ("baseline", "current"),
) -> Judgement:
    """Each failing cell's status (see the module's docstring). Without a
    ``no_new`` rule or a known failure, and with the current run's failing cells
    unlisted, nothing is judged cell by cell (the absolute rules read the counts)."""
    ratchets = {"hard_invariants": gates.hard_invariants == "no_new"}
    ratchets["expectations"] = gates.expectations == "no_new"
    needs = " and ".join(
        [f"{rule}: no_new" for rule, on in ratchets.items() if on]
        + (["known_failures"] if gates.known_failures else [])
    )
    base = failing_cells(baseline, sources[0])
    cur = failing_cells(current, sources[1])
    if base is None and any(ratchets.values()):
        fix = "re-write the baseline with `packproof baseline`"
        raise _not_listed("baseline", sources[0], needs, fix)
    if cur is None and needs:
        raise _not_listed("current", sources[1], needs, "re-run `packproof eval` to list them")
    if cur is None:
        return Judgement()
    failed_before = set(base or ())
    statuses: dict[FailingCell, tuple[str, KnownFailure | None]] = {}
    for cell in cur:
        entry = next((k for k in gates.known_failures if k.matches(cell)), None)
        if entry is not None:
            statuses[cell] = (KNOWN, entry)
        elif ratchets[RULE_OF[cell.klass]]:
            statuses[cell] = (STILL if cell in failed_before else NEW_FAILURE, None)
        else:
            statuses[cell] = (FAILING_NOW, None)
    present = {group_key(g) for g in current["groups"]}
    failing_now = {(*c[:4], RULE_OF[c.klass]) for c in cur}
    # a cell the packer failed was not judged at all: none of its expectations is fixed
    failing_now |= {(*c[:4], "expectations") for c in cur if c.klass == "cell_failures"}
    for cell in base or ():
        if cell[2:4] in present and (*cell[:4], RULE_OF[cell.klass]) not in failing_now:
            statuses[cell] = (FIXED, None)
    counts: dict[tuple[str, str, str, str], set[tuple[str, int]]] = {}
    for cell, (status, _) in statuses.items():
        key = (cell.label, cell.budget, RULE_OF[cell.klass], status)
        counts.setdefault(key, set()).add((cell.scenario, cell.turn))
    used = {entry for status, entry in statuses.values() if entry is not None}
    order = {group_key(g): i for i, g in enumerate(current["groups"])}
    return Judgement(
        groups=_grouped(statuses, (_details(current), _details(baseline)), order),
        stale=tuple(k for k in gates.known_failures if k not in used),
        counts={key: frozenset(cells) for key, cells in counts.items()},
        excused=frozenset(
            c[:4] for c, (s, _) in statuses.items() if s == KNOWN and c.klass == "expectations"
        ),
        listed=True,
    )
