"""A replay's packs read as the journal stores them, made whole only when asked.

The journal stores a step's pack as what changed from its chain's step before
(evals/run/compact.py). Made whole, every record holds its whole pack and the
ids it selected: a list of every segment per step, which the reports never read
but for the few turns the HTML report shows. A reader that leaves the packs as
they are stored (``read_results(..., whole=False)``, what an eval's reports
read) gives each replay record :data:`PACK_ROW` instead: its chain's
:class:`ChainPacks` and its row there. :func:`selected_ids` reads a record's
selected ids either way; :func:`make_whole` gives it ``segments`` and
``selected`` as a whole read would.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

__all__ = [
    "PACK_ROW",
    "SELECTED_PACK",
    "ChainPacks",
    "make_whole",
    "names_ids",
    "pack_ids",
    "selected_ids",
]

# a record read without its pack made whole: (its chain's ChainPacks, its row)
PACK_ROW: Final = "_pack_row"
SELECTED_PACK: Final = "pack"  # a record's selected ids are its pack's, in pack order
_WHOLE: Final = -1  # a row that is a whole pack, not a delta on an earlier one


def pack_ids(segments: Sequence[Any]) -> list[Any]:
    """The ids of a pack's ``[id, tokens]`` segments, in pack order."""
    return [s[0] for s in segments]


def names_ids(selected: Any, length: int) -> bool:
    """Whether ``selected`` (a record's as the journal stores it) names ids of a
    pack of ``length`` segments: ``"pack"``, or positions in it."""
    if selected == SELECTED_PACK:
        return True
    if type(selected) is not list:
        return False
    return all(isinstance(i, int) and 0 <= i < length for i in selected)


class ChainPacks:
    """One chain's packs in journal order, each a row ``(base, keep, add,
    selected)``: the first ``keep`` segments of row ``base``'s pack then
    ``add`` (``add`` alone when the row is a whole pack: ``base`` -1), and
    ``selected`` as the journal stores it (``"pack"``, positions in the pack,
    or None)."""

    __slots__ = ("rows",)

    def __init__(self) -> None:
        self.rows: list[tuple[int, int, list[Any], Any]] = []

    def add(self, base: int | None, keep: int, add: list[Any], selected: Any) -> int:
        """A row (``base`` None: ``add`` is the whole pack); its index."""
        self.rows.append((_WHOLE if base is None else base, keep, add, selected))
        return len(self.rows) - 1

    def segments(self, row: int) -> list[Any]:
        """Row ``row``'s whole pack (from the last whole pack before it)."""
        path = [row]
        while self.rows[path[-1]][0] != _WHOLE:
            path.append(self.rows[path[-1]][0])
        segments: list[Any] = []
        for at in reversed(path):
            base, keep, add, _ = self.rows[at]
            segments = list(add) if base == _WHOLE else segments[:keep] + add
        return segments

    def selected(self, row: int, segments: Sequence[Any] | None = None) -> list[Any] | None:
        """Row ``row``'s selected ids (None when the journal kept them whole in
        the record); ``segments``: its pack, when already made whole."""
        stored = self.rows[row][3]
        if stored is None:
            return None
        ids = pack_ids(self.segments(row) if segments is None else segments)
        return ids if stored == SELECTED_PACK else [ids[i] for i in stored]

    def every(self) -> list[list[Any]]:
        """Every row's whole pack, in one pass."""
        out: list[list[Any]] = []
        for base, keep, add, _ in self.rows:
            out.append(list(add) if base == _WHOLE else out[base][:keep] + add)
        return out


def selected_ids(record: Mapping[str, Any]) -> Any:
    """A record's ``selected``, made whole or not (None when it has none)."""
    if "selected" in record or PACK_ROW not in record:
        return record.get("selected")
    packs, row = record[PACK_ROW]
    return packs.selected(row)


def make_whole(records: Iterable[dict[str, Any]]) -> None:
    """Give each record left with :data:`PACK_ROW` its ``segments`` and
    ``selected`` (each chain's packs made in one pass)."""
    made: dict[ChainPacks, list[list[Any]]] = {}
    for r in records:
        if PACK_ROW not in r:
            continue
        packs, row = r.pop(PACK_ROW)
        every = made.get(packs)
        if every is None:
            every = made[packs] = packs.every()
        r["segments"] = every[row]
        selected = packs.selected(row, every[row])
        if selected is not None:
            r["selected"] = selected
