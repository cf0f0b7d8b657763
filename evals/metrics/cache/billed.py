"""A counterfactual replay of a Claude Code session priced as the session was
billed (docs/sessions.md, "Priced as billed"), beside what it actually cost.

A chain is one scenario's steps as one spec packed them at one budget, in turn
order. Each step carries what the importer recorded of its call
(docs/claude-code.md, "Tags for pricing as billed"): its model, its static
prefix (system prompt, tools and the session's context block, inferred), the
part of that prefix already cached before the chain's first call on the model
(the warm start), and the call's billed usage. The chain is priced as
:mod:`~packproof.evals.metrics.cache.check` prices the calls as sent:

- per model, one :class:`~packproof.evals.metrics.cache.model.Pricer` (models
  never share entries) under the shipped ``anthropic`` profile with the model's
  minimum (``claude-prices.yaml``), or ``anthropic-1h`` (writes 2x, one hour)
  when more than half of the chain's writing calls on that model wrote 1-hour
  entries;
- a step's prompt is its static prefix, then its pack (one segment an item,
  renamed after each task notification, as check.py's rule 3 does); the
  warm part of the static prefix is a segment of its own, written by a *seed*
  step one second before the model's first step (not counted), as check.py's
  warm start does; the rest of the prefix is written by the first step;
- a step's cost in USD is its cost in input-token units x the model's input
  price / 10^6; the bill's is :func:`~packproof.evals.metrics.cache.check.billed_usd`
  of the recorded usage at the same price.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from packproof.evals.metrics.cache.check import Prices, billed_usd, model_profile
from packproof.evals.metrics.cache.model import Pricer, Prompts

__all__ = ["BilledStep", "StepBill", "one_hour", "price_as_billed"]


class BilledStep(NamedTuple):
    """One step of a chain: its time (s), its call's model, static prefix tokens,
    the static tokens already cached before it (set on the chain's first step
    on its model; None on the others), its pack ``(id, tokens)`` in pack order,
    its call's usage (``cached``, ``written``, ``written_1h``, ``input``), and
    how many background-task notifications its session had before it: a new
    count gives every item a new identity (the prompt breaks after the static
    prefix; docs/claude-code.md, inferred rule 3)."""

    t: float
    model: str
    static: int
    warm: int | None
    pack: Sequence[tuple[str, int]]
    usage: Mapping[str, int]
    epoch: int = 0


class StepBill(NamedTuple):
    """A step priced: the counterfactual's cached, written and uncached tokens
    and its USD, and the call's billed tokens (cached, prompt) and USD."""

    cached: int
    written: int
    uncached: int
    usd: float
    billed_cached: int
    billed_prompt: int
    billed_usd: float


def one_hour(usages: Sequence[Mapping[str, int]]) -> bool:
    """Whether calls were priced with 1-hour entries: more than half of those that
    wrote anything wrote 1-hour entries (check.py's rule)."""
    wrote = sum(u["written"] > 0 for u in usages)
    return 2 * sum(u["written_1h"] > 0 for u in usages) > wrote


def _static_segments(model: str, static: int, warm: int) -> list[tuple[str, int]]:
    """The static prefix as segments: the warm part apart when only part of it
    was cached. Ids carry the tokens, so a prefix of another size is another."""
    if static <= 0:
        return []
    if 0 < warm < static:
        return [(f"<static|{model}|{warm}>", warm), (f"<static|{model}|{warm}+>", static - warm)]
    return [(f"<static|{model}|{static}>", static)]


def price_as_billed(steps: Sequence[BilledStep], prices: Prices) -> list[StepBill]:
    """Each step of one chain (in time order) priced as billed (module docstring)."""
    by_model: dict[str, list[int]] = {}
    for i, step in enumerate(steps):
        by_model.setdefault(step.model, []).append(i)
    out: list[StepBill | None] = [None] * len(steps)
    for model, indices in by_model.items():
        mine = [steps[i] for i in indices]
        profile = model_profile(model, one_hour([s.usage for s in mine]), prices)
        price = prices.price(model)
        first = mine[0]
        warm = first.warm if first.warm is not None else 0
        head = _static_segments(model, first.static, min(warm, first.static))
        prompts = Prompts()
        seeded = 0
        if warm > 0 and head:  # the warm part, written just before by other sessions
            prompts.add(first.t - 1.0, [head[0][0]], [head[0][1]], 0, False)
            seeded = 1
        for s in mine:
            own = head if s.static == first.static else _static_segments(model, s.static, 0)
            pack = s.pack if not s.epoch else [(f"{i}|{s.epoch}", k) for i, k in s.pack]
            segments = [*own, *pack]
            prompts.add(
                s.t, (sid for sid, _ in segments), (k for _, k in segments), len(own), False
            )
        costs = Pricer(profile).price(prompts)[seeded:]
        for i, s, cost in zip(indices, mine, costs, strict=True):
            u = s.usage
            out[i] = StepBill(
                cost.cached,
                cost.written,
                cost.uncached,
                price * cost.cost / 1e6,
                u["cached"],
                u["cached"] + u["written"] + u["input"],
                billed_usd(u["cached"], u["written"], u["written_1h"], u["input"], price),
            )
    return [b for b in out if b is not None]
