"""The journal's compact form of replay records, and back.

A replay's records are most of a run's bytes when stored whole: every step's
full pack, and per step its figures under every cache profile, static prefix
and breakpoint placement as one small object each. The journal stores them
compactly, and :func:`decode` gives every reader the whole records back, so
reports, ``load_run``, ``compare`` and the tuner read a run as before:

- **The pack as a delta.** A record's ``segments`` become ``pack_delta``:
  ``{"after": T, "keep": K, "add": [[id, tokens], ...]}`` is the first ``K``
  segments of the pack of turn ``T`` (the chain's step before this record: the
  last one not a probe and not failed, as the prefix stability reads it),
  followed by ``add``. A chain's first record, and a record whose pack keeps
  nothing of that step's, store ``{"add": [...]}``: the whole pack. The
  record's ``selected`` (its packed ids, in ordinal order) goes into the delta
  as ``"selected": "pack"`` when it is the pack's ids in pack order, else as
  their positions in the pack (a cache-aware pack orders itself). A reader
  may keep the deltas as they are, made whole when asked (evals/run/packs.py).
- **The cache figures once per chain, in columns.** A chain's records drop
  ``cache`` and ``cache_placements``; one line after them, keyed
  :func:`chain_key`, holds ``columns``: ``turns`` (its priced records' turns,
  in order), and per profile and static prefix (and, under
  ``cache_placements``, per placement first) the lists ``cached``,
  ``written``, ``uncached`` and ``cost``, one value per turn.

A chain is one (suite, scenario, spec, budget). A replay's task holds every
turn of its chains, so a chain's records and its columns are one batch of the
journal, in turn order (evals/run/runner.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from packproof.evals.run.packs import (
    PACK_ROW,
    SELECTED_PACK,
    ChainPacks,
    make_whole,
    names_ids,
    pack_ids,
)
from packproof.packer.errors import InputError
from packproof.packer.jsonio import mark_float_list

__all__ = [
    "CACHE_ROW",
    "CHAIN_COLUMNS",
    "FIGURES",
    "ChainFigures",
    "chain_key",
    "decode",
    "encode",
]

CHAIN_COLUMNS: Final = "columns"  # the field that marks a chain's line
# a record read without its figures made whole: (its chain's ChainFigures, its row)
CACHE_ROW: Final = "_cache_row"
FIGURES: Final = ("cached", "written", "uncached", "cost")  # a step's figures, in record order
_CACHE_FIELDS: Final = ("cache", "cache_placements")

Chain = tuple[str, str, str, str]


def chain_key(suite: str, scenario: str, spec: str, budget: Any) -> str:
    """The journal key of a chain's columns (a cell's key names its turn with
    ``#``; a chain's ends with ``#cache``, which no cell key does)."""
    return f"{suite}/{scenario}|{spec}|{budget}#cache"


def _chain(record: Mapping[str, Any]) -> Chain:
    return (record["suite"], record["scenario"], record["spec"], str(record["budget"]))


def _kept(before: Sequence[Any], after: Sequence[Any]) -> int:
    n = min(len(before), len(after))
    k = 0
    while k < n and before[k] == after[k]:
        k += 1
    return k


def encode(records: Iterable[dict[str, Any]]) -> list[tuple[str, dict[str, Any], bool]]:
    """Each record in its compact form, then each chain's columns: ``(key,
    object, is_cell)`` in journal order; a chain's columns are ready for
    ``dumps(prepared=True)``. Records without ``segments`` (not a
    replay's) are unchanged; ``records`` are changed in place."""
    out: list[tuple[str, dict[str, Any], bool]] = []
    last: dict[Chain, tuple[int, list[Any]]] = {}
    columns: dict[Chain, dict[str, Any]] = {}
    rows: dict[Chain, tuple[ChainFigures, list[int], list[int]]] = {}
    for r in records:
        if PACK_ROW in r:  # read without its pack made whole
            make_whole([r])
        row = r.pop(CACHE_ROW, None)
        if row is not None:  # figures already in columns (the runner's, a reader's)
            held = rows.setdefault(_chain(r), (row[0], [], []))
            if held[0] is not row[0]:
                raise ValueError(f"the records of chain {_chain(r)} hold two sets of figures")
            held[1].append(r["turn"])
            held[2].append(row[1])
        if "segments" in r:
            chain = _chain(r)
            segments = r.pop("segments")
            before = last.get(chain)
            keep = _kept(before[1], segments) if before is not None else 0
            if keep:
                assert before is not None
                delta = {"after": before[0], "keep": keep, "add": segments[keep:]}
            else:
                delta = {"add": segments}
            _selected_in(r, segments, delta)
            r["pack_delta"] = delta
            if r["status"] == "ok" and not r.get("probe"):
                last[chain] = (r["turn"], segments)
            if "cache" in r:
                _add_columns(columns.setdefault(chain, {"turns": []}), r)
        out.append((r["key"], r, True))
    for chain, (figures, turns, picked) in rows.items():
        if chain in columns:
            raise ValueError(f"the records of chain {chain} hold figures in two forms")
        columns[chain] = figures.columns_of(turns, picked)
    for chain, cols in columns.items():
        key = chain_key(*chain)
        out.append((key, {"key": key, CHAIN_COLUMNS: _prepared(cols)}, False))
    return out


def _selected_in(r: dict[str, Any], segments: Sequence[Any], delta: dict[str, Any]) -> None:
    """Move a record's ``selected`` (the ids it packed, in ordinal order) into its
    ``delta`` when its pack names them: ``"pack"`` when they are the pack's ids in
    pack order, else their positions in the pack (a cache-aware pack's order
    differs); a ``selected`` the pack does not name stays as it is."""
    selected = r.get("selected")
    ids = pack_ids(segments)
    if selected == ids:
        del r["selected"]
        delta["selected"] = SELECTED_PACK
        return
    if type(selected) is not list or len(selected) != len(ids):
        return
    try:
        at = {ref: i for i, ref in enumerate(ids)}
        positions = [at[ref] for ref in selected]
    except (KeyError, TypeError):  # an id the pack lacks, or not an id at all
        return
    if len(at) == len(ids) == len(set(positions)):
        del r["selected"]
        delta["selected"] = positions


def _prepared(cols: dict[str, Any]) -> dict[str, Any]:
    """The columns fit for ``dumps(prepared=True)``: their only floats, the costs
    (already canonical), marked where JSON would write them otherwise."""
    for name in _CACHE_FIELDS:
        by_profile = cols.get(name, {})
        sections = by_profile.values() if name == "cache_placements" else [by_profile]
        for section in sections:
            for by_static in section.values():
                for col in by_static.values():
                    col["cost"] = mark_float_list(col["cost"])
    return cols


def _add_columns(cols: dict[str, Any], record: dict[str, Any]) -> None:
    cols["turns"].append(record["turn"])
    for name in _CACHE_FIELDS:
        figures = record.pop(name, None)
        if figures is None:
            continue
        target = cols.setdefault(name, {})
        if name == "cache":
            _append(target, figures)
        else:
            for placement, by_profile in figures.items():
                _append(target.setdefault(placement, {}), by_profile)


def _append(target: dict[str, Any], by_profile: Mapping[str, Any]) -> None:
    for profile, by_static in by_profile.items():
        for static, f in by_static.items():
            col = target.setdefault(profile, {}).setdefault(static, {k: [] for k in FIGURES})
            for k in FIGURES:
                col[k].append(f[k])


class Decoder:
    """Records read in journal order made whole again: each ``pack_delta``
    resolved against its chain's step before it (:meth:`record`; or, without
    ``packs``, checked and left as its chain's row: :data:`PACK_ROW`), then
    each chain's columns spread over its records (:meth:`finish`). Errors name
    the line of the journal (``where``) and what was expected."""

    def __init__(self, source: str, packs: bool = True) -> None:
        self.source, self.whole_packs = source, packs
        self.last: dict[Chain, tuple[int, list[Any]]] = {}
        # without whole packs: each chain's rows, and its last step's (turn, length, row)
        self.packs: dict[Chain, ChainPacks] = {}
        self.last_row: dict[Chain, tuple[int, int, int]] = {}
        self.rowed: list[dict[str, Any]] = []  # the records given a PACK_ROW
        self.replays: dict[Chain, dict[int, dict[str, Any]]] = {}
        self.columns: list[tuple[int, dict[str, Any]]] = []
        self.chain_keys: dict[str, Chain] = {}

    def _fail(self, n: int, message: str) -> InputError:
        return InputError(f"line {n}", message, source=self.source)

    def record(self, n: int, r: dict[str, Any]) -> None:
        delta = r.pop("pack_delta", None)
        if not self.whole_packs:
            self._record_row(n, r, delta)
            return
        if delta is None:
            if "segments" not in r:
                return
            segments = self._segments(n, r)
        else:
            before = self.last.get(_chain(r))
            keep = self._keep(n, delta, None if before is None else (before[0], len(before[1])))
            add: list[Any] = delta["add"]
            segments = list(add) if keep is None else before[1][:keep] + add  # type: ignore[index]
            r["segments"] = segments
            if "selected" in delta:
                r["selected"] = self._selected(n, segments, delta["selected"])
        chain = _chain(r)
        self.replays.setdefault(chain, {})[r["turn"]] = r
        if r["status"] == "ok" and not r.get("probe"):
            self.last[chain] = (r["turn"], segments)

    def _record_row(self, n: int, r: dict[str, Any], delta: Any) -> None:
        """:meth:`record` leaving the pack as its chain's row (the same checks;
        every added segment's shape checked as it is added)."""
        if delta is None and "segments" not in r:
            return
        chain = _chain(r)
        packs = self.packs.setdefault(chain, ChainPacks())
        if delta is None:  # a whole pack in the record: a row of its own
            segments = self._segments(n, r)
            length, row = len(segments), packs.add(None, 0, segments, None)
        else:
            before = self.last_row.get(chain)
            keep = self._keep(n, delta, None if before is None else before[:2])
            add = delta["add"]
            self._ids(n, add)
            length = len(add) + (keep or 0)
            if "selected" in delta and not names_ids(delta["selected"], length):
                raise self._bad_selected(n, length, delta["selected"])
            base = None if keep is None else before[2]  # type: ignore[index]
            row = packs.add(base, keep or 0, add, delta.get("selected"))
            r[PACK_ROW] = (packs, row)
            self.rowed.append(r)
        self.replays.setdefault(chain, {})[r["turn"]] = r
        if r["status"] == "ok" and not r.get("probe"):
            self.last_row[chain] = (r["turn"], length, row)

    def _segments(self, n: int, r: dict[str, Any]) -> list[Any]:
        if not isinstance(r["segments"], list):
            raise self._fail(n, f"segments must be a list, found {type(r['segments']).__name__}")
        return r["segments"]

    def _keep(self, n: int, delta: Any, before: tuple[int, int] | None) -> int | None:
        """The delta's ``keep`` (None: ``add`` is the whole pack), checked against
        the chain's step before it: its (turn, pack length)."""
        if not isinstance(delta, dict) or not isinstance(delta.get("add"), list):
            raise self._fail(n, 'pack_delta is not {"add": [...]} with optional after and keep')
        if "after" not in delta:
            return None
        after, keep = delta["after"], delta.get("keep")
        if before is None or before[0] != after:
            found = "none" if before is None else f"turn {before[0]}"
            raise self._fail(
                n,
                f"pack_delta is relative to turn {after!r} of its chain, but the chain's "
                f"step before it in the file is {found} (a journal cut or reordered?)",
            )
        if type(keep) is not int or not 0 <= keep <= before[1]:
            raise self._fail(n, f"pack_delta keep must be 0..{before[1]}, found {keep!r}")
        return keep

    def _selected(self, n: int, segments: list[Any], selected: Any) -> list[Any]:
        """A record's ``selected`` from its pack (``pack_delta.selected``)."""
        ids = self._ids(n, segments)
        if not names_ids(selected, len(ids)):
            raise self._bad_selected(n, len(ids), selected)
        return ids if selected == SELECTED_PACK else [ids[i] for i in selected]

    def _ids(self, n: int, segments: list[Any]) -> list[Any]:
        """The ids of a pack's segments, each checked to be ``[id, tokens]``."""
        try:
            return pack_ids(segments)
        except (IndexError, KeyError, TypeError):
            raise self._fail(n, "pack_delta holds a segment that is not [id, tokens]") from None

    def _bad_selected(self, n: int, length: int, selected: Any) -> InputError:
        return self._fail(
            n,
            f'pack_delta selected must be "{SELECTED_PACK}" or positions in its pack of '
            f"{length} segments, found {selected!r}",
        )

    def chain_columns(self, n: int, line: dict[str, Any]) -> None:
        self.columns.append((n, line))

    def finish(self, whole: bool = True) -> None:
        """Spread every chain's columns over its records: as each record's
        ``cache`` and ``cache_placements`` (``whole``), or as its row of the
        chain's :class:`ChainFigures` (:data:`CACHE_ROW`). ``whole`` makes the
        packs left as rows whole too."""
        if whole:
            make_whole(self.rowed)
            self.rowed = []
        for n, line in self.columns:
            key, cols = line["key"], line[CHAIN_COLUMNS]
            turns = cols.get("turns") if isinstance(cols, dict) else None
            if not isinstance(turns, list):
                raise self._fail(n, "chain columns without a turns list")
            chain = self._keys().get(key)
            records = None if chain is None else self.replays[chain]
            if records is None or any(t not in records for t in turns):
                raise self._fail(n, f"the columns of {key!r} name turns the file has no record of")
            rows = [records[t] for t in turns]
            figures = self._figures(n, len(rows), cols)
            if whole:
                figures.spread(rows)
            else:
                for i, r in enumerate(rows):
                    r[CACHE_ROW] = (figures, i)

    def _keys(self) -> dict[str, Chain]:
        if len(self.chain_keys) != len(self.replays):
            self.chain_keys = {chain_key(*c): c for c in self.replays}
        return self.chain_keys

    def _figures(self, n: int, count: int, cols: dict[str, Any]) -> ChainFigures:
        """The columns checked: every one a list of ``count`` values."""
        out: dict[tuple[str | None, str, str], tuple[list[Any], ...]] = {}
        sections = [(None, "cache", cols.get("cache"))]
        placements = cols.get("cache_placements")
        if isinstance(placements, dict):
            sections += [(p, f"cache_placements/{p}", by) for p, by in placements.items()]
        for placement, where, by_profile in sections:
            for profile, by_static in (by_profile or {}).items():
                for static, col in by_static.items():
                    lists = tuple(col.get(k) if isinstance(col, dict) else None for k in FIGURES)
                    if any(not isinstance(v, list) or len(v) != count for v in lists):
                        raise self._fail(
                            n,
                            f"columns {where}/{profile}/{static}: {', '.join(FIGURES)} must "
                            f"each hold {count} values, one per turn",
                        )
                    out[placement, profile, static] = tuple(v for v in lists if v is not None)
        return ChainFigures(out, placements is not None)


class ChainFigures:
    """One chain's cache figures as the journal stores them: per (placement,
    profile, static prefix) the columns ``cached``, ``written``, ``uncached``
    and ``cost`` (placement None: the default, a record's ``cache``), one value
    per priced record, in turn order. A report sums them without making each
    record's figures whole (evals/report/replay.py)."""

    def __init__(
        self, columns: dict[tuple[str | None, str, str], tuple[list[Any], ...]], placed: bool
    ) -> None:
        self.columns = columns
        self.placed = placed  # the chain's records carry cache_placements (maybe empty)

    def columns_of(self, turns: list[int], picked: list[int]) -> dict[str, Any]:
        """The chain's line of columns (before :func:`_prepared`) for its records
        of ``turns``, whose rows are ``picked``."""
        cols: dict[str, Any] = {"turns": turns, "cache": {}}
        if self.placed:
            cols["cache_placements"] = {}
        every = picked == list(range(len(picked)))
        for (placement, profile, static), lists in self.columns.items():
            chosen = (
                lists
                if every and all(len(v) == len(picked) for v in lists)
                else tuple([v[i] for i in picked] for v in lists)
            )
            section = (
                cols["cache"]
                if placement is None
                else cols["cache_placements"].setdefault(placement, {})
            )
            section.setdefault(profile, {})[static] = dict(zip(FIGURES, chosen, strict=True))
        return cols

    def spread(self, rows: Sequence[dict[str, Any]]) -> None:
        """Each row's ``cache`` and ``cache_placements``, as the runner made them."""
        default = any(p is None for p, _, _ in self.columns)
        cache: list[dict[str, Any]] | None = [{} for _ in rows] if default else None
        placed: list[dict[str, Any]] | None = [{} for _ in rows] if self.placed else None
        for (placement, profile, static), lists in self.columns.items():
            figures = [
                {"cached": a, "written": b, "uncached": c, "cost": d}
                for a, b, c, d in zip(*lists, strict=True)
            ]
            if placement is None:
                assert cache is not None
                for into, f in zip(cache, figures, strict=True):
                    into.setdefault(profile, {})[static] = f
            else:
                assert placed is not None
                for into, f in zip(placed, figures, strict=True):
                    into.setdefault(placement, {}).setdefault(profile, {})[static] = f
        for i, r in enumerate(rows):
            if cache is not None:
                r["cache"] = cache[i]
            if placed is not None:
                r["cache_placements"] = placed[i]


def decode(source: str, packs: bool = True) -> Decoder:
    """A :class:`Decoder` for the journal ``source`` (its path, for errors);
    without ``packs``, each replay record's pack is left as its chain's row."""
    return Decoder(source, packs)
