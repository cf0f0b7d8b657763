"""What a conversation's cells say together: each pack's prefix stability
against the previous turn's pack, and, for a replay, every step's prompt priced
under each prompt-cache profile (REFERENCE.md section 5; docs/metrics.md).

The runner gives each record its pack as ``_pack``: ``(id, tokens)`` in pack
order. :func:`finish` reads the records of one task's turns in turn order and

- sets ``prefix_stability`` and ``prefix_stability_tokens`` in each record's
  metrics: the share of the previous (non-probe) turn's pack, in items and in
  tokens, that this pack keeps as an unchanged prefix; None on a scenario's first
  turn, on probes, and on cells an external packer failed;
- for a replay, adds ``t``, ``probe``, ``breakpoints`` (the cache breakpoints a
  cache-aware pack suggests, as item counts in pack order, from the runner's
  ``_breakpoints``; None otherwise), ``segments`` (the pack), ``prefix_break``,
  ``kept_prefix_tokens``, ``question_tokens`` (probes) and ``cache``: per profile
  and static prefix size, the step's cached, written and uncached tokens and its
  cost. A step's prompt is the static prefix (one segment, omitted when 0) then
  the pack; a probe's prompt adds its question as one last segment. Each
  (spec, budget) is one chain, priced from an empty cache; a probe is priced
  from the state reached and leaves it as it was (``price_chain``);
- for a replay chain whose packs suggest breakpoints, adds ``cache_placements``:
  per placement a caller would choose (:data:`PLACEMENTS`), then per profile
  that takes a caller's breakpoints and static prefix size, the same figures
  (docs/metrics.md, "Breakpoint placements"). ``cache`` stays the default
  placement's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, NamedTuple

import numpy as np

from packproof.evals.metrics.cache.columns import price_columns
from packproof.evals.metrics.cache.model import Profile, Prompts, Step
from packproof.evals.metrics.stability import kept_prefix
from packproof.evals.run.compact import CACHE_ROW, ChainFigures
from packproof.evals.scenarios.format import Scenario
from packproof.packer.cacheaware import PreviousPack
from packproof.packer.errors import InputError
from packproof.packer.jsonio import round_floats
from packproof.packer.model import Items
from packproof.packer.tokens import count_tokens

__all__ = [
    "BREAKPOINTS",
    "PLACEMENTS",
    "QUESTION_ID",
    "STATIC_ID",
    "Chains",
    "Link",
    "finish",
    "placed_profiles",
    "placement_breakpoints",
    "previous_pack",
]

# Segment ids of the static prefix (as a chain priced from steps names it; a
# replay's prefix is put first by Prompts.headed, a segment no step has) and of
# a probe's question. Segment identity only matters between prompts of one
# chain, where a question is always last and never stored, so no item id can be
# confused with it.
STATIC_ID: Final = "<static>"
QUESTION_ID: Final = "<question>"
PACK: Final = "_pack"  # the runner's private field: (id, tokens) in pack order

BREAKPOINTS: Final = "_breakpoints"  # the runner's private field: the pack's suggestion

Pack = Sequence[tuple[str, int]]
# a chain's figures: per (placement or None, profile, static prefix) its columns
Columns_ = dict[tuple[str | None, str, str], tuple[list[Any], ...]]
# The breakpoints a caller would place, besides the profile's default:
# after the static prefix, the pack's stable end and its end; or the first two.
PLACEMENTS: Final = ("static+stable+end", "static+stable")


class Link(NamedTuple):
    """A cache-aware chain's last step: its pack (ids in pack order; with
    carry_recall false, its stable part), its time, and, with carry_recall
    false, its recall block (ids in block order) and that block's age."""

    ids: list[str]
    t: float | None
    recall: list[str] | None = None
    recall_age: int | None = None


# A replay's cache-aware chains: per (spec, budget), the last step, fed to the
# chain's next request as its previous pack.
Chains = dict[tuple[str, str], Link]


def previous_pack(
    chains: Chains | None, chain: tuple[str, str], items: Items, t: float | None
) -> PreviousPack | None:
    """The chain's last step pack as a request's previous pack (a replay only),
    with the seconds since that step (and its recall block apart, when given)."""
    if chains is None or chain not in chains:
        return None
    link = chains[chain]
    position = items.position
    table, start = items.base_window()
    # a step's items are most often the first ones of the conversation's table:
    # its own id -> position map, read directly, each position checked after
    lookup = table.position if start == 0 else position

    def positions(ids: list[str]) -> np.ndarray:
        try:
            at = np.array([lookup[ref] for ref in ids], dtype=np.int64)
        except KeyError:
            at = None
        if at is None or (len(at) and int(at.max()) >= len(items)):
            missing = next(ref for ref in ids if ref not in position)
            raise InputError(
                "/previous_pack",
                f"the previous step packed {missing!r}, which this step's items lack "
                "(a replay step must keep every earlier item)",
            )
        return at

    elapsed = None if t is None or link.t is None else t - link.t
    recall = None if link.recall is None else positions(link.recall)
    return PreviousPack(positions(link.ids), elapsed, recall, link.recall_age)


def _share(kept: int, whole: int) -> float:
    return kept / whole if whole else 1.0


def finish(
    scenario: Scenario,
    records: Sequence[dict[str, Any]],
    profiles: Mapping[str, Profile],
    static_prefix_tokens: Sequence[int],
    previous: Mapping[tuple[str, str], Pack] | None = None,
    whole: bool = True,
) -> None:
    """Annotate ``records`` (one task's, in turn order) in place and drop their
    ``_pack``. ``previous`` holds the packs of the turn before the task's first,
    by (spec, budget), when the task does not start the scenario. Without
    ``whole``, a priced record carries its row of its chain's figures
    (``CACHE_ROW``, as the journal's reader gives it) for ``cache`` and
    ``cache_placements``, which the journal writes as columns as they are."""
    last: dict[tuple[str, str], Pack] = dict(previous or {})
    replay = scenario.replay
    chains: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for record in records:
        chain = (record["spec"], str(record["budget"]))
        turn = scenario.turns[record["turn"]]
        pack: Pack = record[PACK]
        failed = record["status"] != "ok"
        before = last.get(chain)
        stable: tuple[float | None, float | None] = (None, None)
        kept = (0, 0)
        if before is not None and not failed:
            kept = kept_prefix(before, pack)
            if not turn.probe:
                stable = (_share(kept[0], len(before)), _share(kept[1], sum(n for _, n in before)))
        if record["metrics"]:
            record["metrics"]["prefix_stability"], record["metrics"]["prefix_stability_tokens"] = (
                stable
            )
        if not failed and not turn.probe:
            last[chain] = pack
        if replay:
            record["t"] = turn.t
            record["probe"] = turn.probe
            record["breakpoints"] = record.get(BREAKPOINTS)
            record["segments"] = list(map(list, pack))
            record["prefix_break"] = before is not None and kept[0] < len(before)
            record["kept_prefix_tokens"] = kept[1]
            if turn.probe:
                counter = turn.request["token_counter"]
                record["question_tokens"] = int(
                    count_tokens([turn.request["prompt"] or ""], counter)[0]
                )
            if not failed:
                chains.setdefault(chain, []).append(record)
        del record[PACK]
        record.pop(BREAKPOINTS, None)
    for chain_records in chains.values():
        figures = _price(scenario, chain_records, profiles, static_prefix_tokens)
        if whole:
            figures.spread(chain_records)
            for r in chain_records:
                r.setdefault("cache", {})
        else:
            for i, r in enumerate(chain_records):
                r[CACHE_ROW] = (figures, i)


def _price(
    scenario: Scenario,
    records: Sequence[dict[str, Any]],
    profiles: Mapping[str, Profile],
    static_prefix_tokens: Sequence[int],
) -> ChainFigures:
    """A chain's figures (its records in turn order): each step priced under
    every profile and static prefix size, as one chain, with the default
    breakpoints (a record's ``cache``). When the chain's packs suggest
    breakpoints (cache-aware specs), also under each of :data:`PLACEMENTS`, for
    the profiles where a caller places breakpoints (:func:`placed_profiles`; a
    record's ``cache_placements``)."""
    for r in records:
        if not r["segments"] and not r["probe"]:
            raise InputError(
                f"turn {r['turn']}",
                "a replay step packed nothing: its newest item must be in the fresh tail "
                "(a fresh_tail.max_tokens cap can leave it out)",
                source=f"scenario {scenario.id} ({scenario.file})",
            )
    placed = placed_profiles(profiles)
    if not any(r.get("breakpoints") is not None for r in records):
        placed = {}
    columns: Columns_ = {}
    # encoded once (with a static prefix: the same, the prefix put first), then
    # priced under each profile and placement
    plain = Prompts.of(
        Step(
            r["t"],
            [*r["segments"], *([(QUESTION_ID, r["question_tokens"])] if r["probe"] else [])],
            0,
            r["probe"],
        )
        for r in records
    )
    for static in static_prefix_tokens:
        head = 1 if static else 0
        prompts = plain.headed(static) if static else plain
        _store(columns, None, static, profiles, prompts)
        for placement in PLACEMENTS if placed else ():
            marks = [
                placement_breakpoints(placement, head, len(r["segments"]), r["breakpoints"])
                for r in records
            ]
            _store(columns, placement, static, placed, prompts.placed(marks))
    return ChainFigures(columns, bool(placed))


def placed_profiles(profiles: Mapping[str, Profile]) -> dict[str, Profile]:
    """The profiles a caller's breakpoints apply to: ``breakpoints`` mode, with
    room for the three a placement uses (in ``prefix`` mode the provider
    decides, so every placement costs what the default does)."""
    return {
        name: p
        for name, p in profiles.items()
        if p.mode == "breakpoints" and p.max_breakpoints >= 3
    }


def placement_breakpoints(
    placement: str, static_segments: int, pack_items: int, suggested: Sequence[int] | None
) -> list[int]:
    """A step's breakpoints (segment counts) under ``placement``: after the
    static prefix (when there is one); after the part of the pack the next step
    keeps, the first breakpoint the pack suggests (its stable part, or a recall
    block placed first; the whole pack when it suggests none); and, for
    ``static+stable+end``, at the end of the pack. A probe's question follows
    the end breakpoint: it is never reused, so it is billed as uncached input."""
    kept = suggested[0] if suggested else pack_items
    marks = {static_segments, static_segments + kept}
    if placement == "static+stable+end":
        marks.add(static_segments + pack_items)
    return sorted(m for m in marks if m > 0)


def _store(
    columns: Columns_,
    placement: str | None,
    static: int,
    profiles: Mapping[str, Profile],
    prompts: Prompts,
) -> None:
    """The chain's figures under each profile, as the columns of
    ``(placement, profile, static)``: cached, written, uncached, cost (rounded
    as JSON writes it)."""
    key = str(static)
    for name, priced in price_columns(prompts, profiles).items():
        cost: list[float] = round_floats(priced.cost).tolist()
        columns[placement, name, key] = (priced.cached, priced.written, priced.uncached, cost)
