"""What a chain's priced steps add up to (the ``total`` line of ``packproof cache
simulate``), summed as the steps are priced: :class:`RunningTotals` holds a
handful of numbers whatever the chain's length, and gives what
:func:`chain_totals` gives over the whole list of costs.

A cost sum is exact until it is read (then correctly rounded, as ``math.fsum``
rounds): every float is an integer multiple of 2**-1074, so the running sum is
kept as that integer, and a chain summed in batches gives the same bits as one
summed at once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

__all__ = ["ChainTotals", "RunningTotals", "StepCost", "Totals", "chain_totals"]

_UNITS: Final = 1074  # the smallest float is 2**-1074


class StepCost(NamedTuple):
    """One step's tokens cached H, written W and uncached U (H + W + U = N), its
    cost read*H + write*W + U (input-token units), whether a break, a probe."""

    cached: int
    written: int
    uncached: int
    cost: float
    prefix_break: bool
    probe: bool = False


@dataclass(frozen=True)
class Totals:
    """Sums over steps. ``cache_hit_rate`` = cached / input_tokens and
    ``relative_cost`` = cost / input_tokens (null when there are no tokens)."""

    steps: int
    input_tokens: int
    cached: int
    written: int
    uncached: int
    cost: float
    cache_hit_rate: float | None
    relative_cost: float | None

    @staticmethod
    def of(costs: Sequence[StepCost]) -> Totals:
        cached, written = sum(c.cached for c in costs), sum(c.written for c in costs)
        uncached = sum(c.uncached for c in costs)
        return _totals(len(costs), cached, written, uncached, math.fsum(c.cost for c in costs))

    def to_json(self) -> dict[str, Any]:
        return {k: v.to_json() if isinstance(v, Totals) else v for k, v in vars(self).items()}


def _totals(steps: int, cached: int, written: int, uncached: int, cost: float) -> Totals:
    tokens = cached + written + uncached
    rates = (cached / tokens, cost / tokens) if tokens else (None, None)
    return Totals(steps, tokens, cached, written, uncached, cost, *rates)


@dataclass(frozen=True)
class ChainTotals(Totals):
    """A chain's sums over its conversation steps, its prefix breaks (``first_break``:
    the first's index among those steps, or null), and its probes' sums apart."""

    prefix_breaks: int
    first_break: int | None
    probes: Totals


class _Sums:
    """Running sums of one kind of step; the cost in units of 2**-1074."""

    __slots__ = ("cached", "cost", "steps", "uncached", "written")

    def __init__(self) -> None:
        self.steps = self.cached = self.written = self.uncached = self.cost = 0

    def add(self, cost: StepCost) -> None:
        self.steps += 1
        self.cached += cost.cached
        self.written += cost.written
        self.uncached += cost.uncached
        # a finite cost is n / 2**k, k <= 1074: n * 2**(1074 - k) units, exactly
        n, d = float(cost.cost).as_integer_ratio()
        self.cost += n << (_UNITS + 1 - d.bit_length())

    def totals(self) -> Totals:
        # int / int is correctly rounded: the float nearest the exact sum, as fsum's
        cost = self.cost / (1 << _UNITS)
        return _totals(self.steps, self.cached, self.written, self.uncached, cost)


class RunningTotals:
    """A chain's totals, added to as its steps are priced (in chain order)."""

    def __init__(self) -> None:
        self.conversation, self.probes = _Sums(), _Sums()
        self.prefix_breaks = 0
        self.first_break: int | None = None

    def add(self, costs: Iterable[StepCost]) -> None:
        for cost in costs:
            if cost.probe:
                self.probes.add(cost)
                continue
            if cost.prefix_break:
                self.prefix_breaks += 1
                if self.first_break is None:
                    self.first_break = self.conversation.steps
            self.conversation.add(cost)

    def result(self) -> ChainTotals:
        return ChainTotals(
            **vars(self.conversation.totals()),
            prefix_breaks=self.prefix_breaks,
            first_break=self.first_break,
            probes=self.probes.totals(),
        )


def chain_totals(costs: Iterable[StepCost]) -> ChainTotals:
    """A chain's totals: its conversation steps', and its probes' in ``probes``."""
    running = RunningTotals()
    running.add(costs)
    return running.result()
