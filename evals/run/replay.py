"""What a conversation's cells say together: each pack's prefix stability
against the previous turn's pack, and, for a replay, every step's prompt priced
under each prompt-cache profile (REFERENCE.md section 5; docs/metrics.md).

The runner gives each record its pack as ``_pack``: ``(id, tokens)`` in pack
order. :func:`finish` reads the records of one task's turns in turn order and

- sets ``prefix_stability`` and ``prefix_stability_tokens`` in each record's
  metrics: the share of the previous (non-probe) turn's pack, in items and in
  tokens, that this pack keeps as an unchanged prefix; None on a scenario's first
  turn, on probes, and on cells an external packer failed;
- for a replay, adds ``t``, ``probe``, ``segments`` (the pack), ``prefix_break``,
  ``kept_prefix_tokens``, ``question_tokens`` (probes) and ``cache``: per profile
  and static prefix size, the step's cached, written and uncached tokens and its
  cost. A step's prompt is the static prefix (one segment, omitted when 0) then
  the pack; a probe's prompt adds its question as one last segment. Each
  (spec, budget) is one chain, priced from an empty cache; a probe is priced
  from the state reached and leaves it as it was (``price_chain``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np

from packproof.evals.metrics.cache.model import Profile, Prompts, Step, price_prompts
from packproof.evals.metrics.stability import kept_prefix
from packproof.evals.scenarios.format import Scenario
from packproof.packer.cacheaware import PreviousPack
from packproof.packer.errors import InputError
from packproof.packer.jsonio import round_float
from packproof.packer.model import Items
from packproof.packer.tokens import count_tokens

__all__ = ["QUESTION_ID", "STATIC_ID", "Chains", "finish", "previous_pack"]

# Segment ids of the static prefix and of a probe's question. Segment identity
# only matters between prompts of one chain, where the static prefix is always
# first and a question always last and never stored, so no item id can be
# confused with either.
STATIC_ID: Final = "<static>"
QUESTION_ID: Final = "<question>"
PACK: Final = "_pack"  # the runner's private field: (id, tokens) in pack order

Pack = Sequence[tuple[str, int]]
# A replay's cache-aware chains: per (spec, budget), the last step's pack (ids in
# pack order) and its time, fed to the chain's next request as its previous pack.
Chains = dict[tuple[str, str], tuple[list[str], float | None]]


def previous_pack(
    chains: Chains | None, chain: tuple[str, str], items: Items, t: float | None
) -> PreviousPack | None:
    """The chain's last step pack as a request's previous pack (a replay only),
    with the seconds since that step."""
    if chains is None or chain not in chains:
        return None
    ids, sent = chains[chain]
    position = items.position
    missing = next((ref for ref in ids if ref not in position), None)
    if missing is not None:
        raise InputError(
            "/previous_pack",
            f"the previous step packed {missing!r}, which this step's items lack "
            "(a replay step must keep every earlier item)",
        )
    elapsed = None if t is None or sent is None else t - sent
    return PreviousPack(np.array([position[ref] for ref in ids], dtype=np.int64), elapsed)


def _share(kept: int, whole: int) -> float:
    return kept / whole if whole else 1.0


def finish(
    scenario: Scenario,
    records: Sequence[dict[str, Any]],
    profiles: Mapping[str, Profile],
    static_prefix_tokens: Sequence[int],
    previous: Mapping[tuple[str, str], Pack] | None = None,
) -> None:
    """Annotate ``records`` (one task's, in turn order) in place and drop their
    ``_pack``. ``previous`` holds the packs of the turn before the task's first,
    by (spec, budget), when the task does not start the scenario."""
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
            record["segments"] = [list(s) for s in pack]
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
    for chain_records in chains.values():
        _price(scenario, chain_records, profiles, static_prefix_tokens)


def _price(
    scenario: Scenario,
    records: Sequence[dict[str, Any]],
    profiles: Mapping[str, Profile],
    static_prefix_tokens: Sequence[int],
) -> None:
    """Each record's ``cache``: its step priced under every profile and static
    prefix size, as one chain in turn order."""
    for r in records:
        if not r["segments"] and not r["probe"]:
            raise InputError(
                f"turn {r['turn']}",
                "a replay step packed nothing: its newest item must be in the fresh tail "
                "(a fresh_tail.max_tokens cap can leave it out)",
                source=f"scenario {scenario.id} ({scenario.file})",
            )
        r["cache"] = {}
    for static in static_prefix_tokens:
        head = [(STATIC_ID, static)] if static else []
        steps = [
            Step(
                r["t"],
                [
                    *head,
                    *r["segments"],
                    *([(QUESTION_ID, r["question_tokens"])] if r["probe"] else []),
                ],
                len(head),
                r["probe"],
            )
            for r in records
        ]
        prompts = Prompts.of(steps)  # encoded once, priced under each profile
        for name, profile in profiles.items():
            for r, cost in zip(records, price_prompts(prompts, profile), strict=True):
                r["cache"].setdefault(name, {})[str(static)] = {
                    "cached": cost.cached,
                    "written": cost.written,
                    "uncached": cost.uncached,
                    "cost": round_float(cost.cost),
                }
