"""Known failures: failing cells a team has decided to live with, each named in
``gates.yaml`` under ``known_failures:`` with the reason (docs/gate.md, "Known
failures"; schema ``gates.v1.json`` ``/properties/known_failures``).

An entry names a scenario and, optionally, narrows it to one strategy label,
budget, turn and failure class. It excuses every failing cell it matches, under
absolute rules and ``no_new`` alike. An entry that matches no failing cell of
the current run is stale: the gate reports it, so the list only shrinks.

The scenario is a shell-style pattern (:func:`fnmatch.fnmatchcase`: ``*``,
``?``, ``[seq]``; ``*`` also matches ``/``). With a ``/`` it is matched against
``suite/scenario id`` (``fresh-tail-anchors/tail-*``); without one, against the
scenario id alone, in any suite (``tail-anchored-kept-over-budget``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Final, NamedTuple

from packproof.evals.scenarios.yamlsafe import LineMap

__all__ = ["CLASS_WORDS", "FailingCell", "KnownFailure", "known_failures"]

# A failure class in words, for the lines the gate prints (classes:
# evals/report/failures.py).
CLASS_WORDS: Final = {
    "hard_invariants": "hard invariants",
    "cell_failures": "packer failures",
    "expectations": "expectations",
}


class FailingCell(NamedTuple):
    """One cell that failed one failure class: the cell is (suite/scenario,
    turn, strategy label, budget), as ``summary["failures"]["scenarios"]`` lists it."""

    scenario: str
    turn: int
    label: str
    budget: str
    klass: str


@dataclass(frozen=True)
class KnownFailure:
    """One ``known_failures`` entry; ``None`` matches anything. ``where`` names
    its file and line (``gates.yaml line 12``), for the reader of a stale entry."""

    scenario: str
    reason: str
    label: str | None = None
    budget: str | None = None
    turn: int | None = None
    klass: str | None = None
    where: str = ""

    def matches(self, cell: FailingCell) -> bool:
        """Whether this entry excuses ``cell``."""
        target = cell.scenario if "/" in self.scenario else cell.scenario.partition("/")[2]
        return (
            fnmatchcase(target, self.scenario)
            and self.label in (None, cell.label)
            and self.budget in (None, cell.budget)
            and self.turn in (None, cell.turn)
            and self.klass in (None, cell.klass)
        )

    def describe(self) -> str:
        """The entry as written: ``fresh-tail-anchors/* (label newest, turn 0)``."""
        narrowed = [
            f"{name} {value}"
            for name, value in (
                ("label", self.label),
                ("budget", self.budget),
                ("turn", self.turn),
                ("class", self.klass),
            )
            if value is not None
        ]
        return self.scenario + (f" ({', '.join(narrowed)})" if narrowed else "")


def known_failures(entries: list[Mapping[str, Any]], lines: LineMap) -> tuple[KnownFailure, ...]:
    """The entries of a gates file already checked against its schema;
    ``lines`` maps an entry's JSON pointer to its line."""
    out = []
    for i, entry in enumerate(entries):
        budget, turn = entry.get("budget"), entry.get("turn")
        out.append(
            KnownFailure(
                scenario=entry["scenario"],
                reason=" ".join(entry["reason"].split()),
                label=entry.get("label"),
                budget=None if budget is None else str(budget),
                turn=None if turn is None else int(turn),
                klass=entry.get("class"),
                where=f"{lines.source} line {lines.line(f'/known_failures/{i}')}",
            )
        )
    return tuple(out)
