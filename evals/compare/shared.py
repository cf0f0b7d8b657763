"""What two runs share, for ``packproof compare``: the scenarios both have (the
ones compared), the ones added or removed, the ones changed, and whether the
two sides are one run.

- A run has a scenario when its ``metrics.csv`` has a cell of it: its
  ``suite/scenario`` (the cells' cluster). *Added*: only in B; *removed*: only
  in A. Neither is compared; the runs are compared on the cells both have.
- *Changed*: the same ``suite/scenario`` id in both runs, other content. A run
  records each scenario's sha256 in its manifest (``manifest.scenarios``: the
  compiled scenario's sha256 over its normalised content, turns, items,
  evidence and expectations; ``evals/scenarios/format.py``), so a change is
  found per scenario when both runs record them. A changed scenario's cells
  are still paired, by scenario id and turn, and said to be changed.
- A run whose manifest has no ``scenarios`` only shows a change of a whole
  suite file: same file name, other sha256. Then
  which of that suite's scenarios changed cannot be told, and the output says
  so.
- One run on both sides: the same folder, or two folders with the same run id
  (the same inputs, as far as the id records them:
  :mod:`~packproof.evals.run.identity`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from packproof.evals.report.text import plural
from packproof.packer.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from packproof.evals.compare.pairs import Cells

__all__ = ["SameRun", "Shared", "no_shared_cell", "same_run", "shared_notes", "shared_scenarios"]

SameRun = Literal["folder", "run_id"]
_NAMED = 4  # scenarios named in a note before "and N more"


@dataclass(frozen=True)
class Shared:
    """The scenarios (``suite/scenario``) of two runs: in both, only in B
    (``added``), only in A (``removed``), in both with other content
    (``changed``); the suite files with the same name and other content; the
    runs that record no scenario hashes ("A", "B")."""

    both: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    changed_suites: tuple[str, ...] = ()
    unhashed: tuple[str, ...] = ()

    @property
    def differ(self) -> bool:
        return bool(self.added or self.removed or self.changed or self.changed_suites)


def _hashes(cells: Cells) -> Mapping[str, str] | None:
    found = cells.summary["manifest"].get("scenarios")
    return found if isinstance(found, Mapping) else None


def shared_scenarios(a: Cells, b: Cells) -> Shared:
    """The scenarios of runs ``a`` and ``b`` compared (see the module docstring),
    each list sorted."""
    in_a, in_b = set(a.frame["cluster"]), set(b.frame["cluster"])
    ha, hb = _hashes(a), _hashes(b)
    both = sorted(in_a & in_b)
    changed = (
        [s for s in both if s in ha and s in hb and ha[s] != hb[s]]
        if ha is not None and hb is not None
        else []
    )
    sa, sb = a.suites, b.suites
    return Shared(
        both=tuple(both),
        added=tuple(sorted(in_b - in_a)),
        removed=tuple(sorted(in_a - in_b)),
        changed=tuple(changed),
        changed_suites=tuple(sorted(n for n in sa.keys() & sb.keys() if sa[n] != sb[n])),
        unhashed=tuple(role for role, h in (("A", ha), ("B", hb)) if h is None),
    )


def same_run(a: Cells, b: Cells) -> SameRun | None:
    """Whether A and B are one run: the same folder, or the same run id."""
    if a.source.resolve() == b.source.resolve():
        return "folder"
    ids = [c.summary["manifest"].get("run_id") for c in (a, b)]
    return "run_id" if ids[0] is not None and ids[0] == ids[1] else None


def _some(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_NAMED])
    return shown + (f" and {len(names) - _NAMED} more" if len(names) > _NAMED else "")


def shared_notes(shared: Shared, same: SameRun | None, run_id: str) -> list[str]:
    """What the verdict says of the scenarios and of one run on both sides."""
    notes = []
    if same == "folder":
        notes.append(
            f"A and B are the same run folder ({run_id}): the run is compared with itself, "
            "so every paired cell is equal."
        )
    elif same == "run_id":
        notes.append(
            f"A and B have the same run id ({run_id}), read from two folders: the same inputs "
            "as far as the run id records them, so a difference comes from where or how they "
            "ran, not from what they ran."
        )
    if shared.added or shared.removed:
        apart = [
            f"{plural(len(names), 'scenario')} only in {side} ({word}: {_some(names)})"
            for side, word, names in (
                ("B", "added", shared.added),
                ("A", "removed", shared.removed),
            )
            if names
        ]
        notes.append(
            f"Compared on the {plural(len(shared.both), 'scenario')} both runs have; "
            f"not compared: {' and '.join(apart)}."
        )
    if shared.changed:
        notes.append(
            f"{plural(len(shared.changed), 'scenario')} changed between the runs (same id, "
            f"other content: {_some(shared.changed)}): their cells were paired by scenario id "
            "and turn."
        )
    if shared.changed_suites and shared.unhashed:
        who = (
            "runs A and B record"
            if len(shared.unhashed) == 2
            else f"run {shared.unhashed[0]} records"
        )
        notes.append(
            f"Suites changed between the runs ({', '.join(shared.changed_suites)}: same file "
            f"name, other contents), and {who} no scenario hashes: which of the scenarios both "
            "runs have changed, if any, cannot be told; cells were paired by scenario id and turn."
        )
    return notes


def no_shared_cell(a: Cells, b: Cells) -> InputError:
    """The refusal of two runs with no cell in common, saying what they lack."""
    fa, fb = a.frame, b.frame

    def values(frame: pd.DataFrame, column: str) -> str:
        return _some(sorted(map(str, frame[column].unique())))

    if not set(fa["cluster"]) & set(fb["cluster"]):
        why = (
            f"no scenario in common (A: {plural(fa['cluster'].nunique(), 'scenario')}, "
            f"B: {plural(fb['cluster'].nunique(), 'scenario')})"
        )
    elif not set(fa["label"]) & set(fb["label"]):
        why = f"no strategy label in common (A: {values(fa, 'label')}; B: {values(fb, 'label')})"
    elif not set(fa["budget"]) & set(fb["budget"]):
        why = f"no budget in common (A: {values(fa, 'budget')}; B: {values(fb, 'budget')})"
    else:
        why = "no turn of a shared scenario with a shared strategy label and budget"
    return InputError(
        "",
        f"the runs share no cell (suite, scenario, turn, strategy label and budget): {why}",
        source=f"{a.source} vs {b.source}",
    )
