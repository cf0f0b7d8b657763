"""What the gate can check: every metric a summary carries, where it is read
from, which way is better, and whether its values lie in [0, 1].

The names come from the report itself, so a metric the report adds is a metric
the gate knows (tests/evals/gate/test_gate.py fails until it has a direction here):

- ``cell``: the per-cell metrics (:data:`~packproof.evals.report.model.METRICS`),
  read from ``groups[i]["metrics"][name]``;
- ``group``: ``prefix_stability`` and ``prefix_stability_tokens``, read from
  ``groups[i][name]`` (each conversation's mean, then their mean; the cells of
  ``metrics.csv`` carry them too, so they can be tested for significance);
- ``replay``: the per-chain and per-probe values of the replay groups
  (:data:`~packproof.evals.report.replay.CHAIN_STATS` and ``PROBE_STATS``), read
  from ``replay["groups"][i][name]``; a replay group's own prefix stability is
  the main group's, so those two names stay ``group``.

Directions agree with the report's arrows (``evals/report/text.py``: ↑ for the
recall metrics and prefix stability, ↓ for regret) and with its verdict, which
counts ``tokens_used`` and ``input_cost`` as costs; a test checks the arrows.
``selected_count`` has no better direction: it may move either way by at most
its allowance. Latency is not gateable: it measures the machine, not the packer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from packproof.evals.report.model import METRICS
from packproof.evals.report.replay import CHAIN_STATS, PROBE_STATS

__all__ = [
    "GATEABLE",
    "GROUP_METRICS",
    "LOWER_IS_BETTER",
    "REPLAY_METRICS",
    "Gateable",
    "unlisted",
]

Better = Literal[1, -1, 0]
Source = Literal["cell", "group", "replay"]

GROUP_METRICS: Final = ("prefix_stability", "prefix_stability_tokens")
# name -> (which way is better, values in [0, 1]); every name the summary
# carries must be here: a new metric's direction is a decision, not a default.
_TABLE: Final[dict[str, tuple[Better, bool]]] = {
    # per cell
    "evidence_recall": (1, True),
    "evidence_hit": (1, True),
    "ndcg@10": (1, True),
    "mrr": (1, True),
    "oracle_recall": (1, True),
    "regret": (-1, True),
    "expectation_pass": (1, True),
    "must_include_recall": (1, True),
    "budget_utilisation": (-1, False),  # tokens_used / budget: above 1 when the tail overflows
    "selected_count": (0, False),
    "tokens_used": (-1, False),
    "answer_token_recall": (1, True),
    "answer_token_ceiling": (1, True),
    # per group
    "prefix_stability": (1, True),
    "prefix_stability_tokens": (1, True),
    # per replay chain
    "cache_hit_rate": (1, True),
    "relative_cost": (-1, False),  # a multiple of the input price: writes can push it above 1
    "input_cost": (-1, False),  # every request: conversation steps and probes
    "input_tokens": (-1, False),
    "conversation_cost": (-1, False),
    "probe_cost": (-1, False),
    "prefix_breaks": (-1, False),
    "break_share": (-1, True),
    "first_break": (1, False),  # a later first break keeps the cache longer
    "divergence_tokens": (1, False),  # more of the previous pack kept before a break
    # per replay probe
    "probe_recall": (1, True),
    "probe_hit_rate": (1, True),
    "probe_relative_cost": (-1, False),
}


@dataclass(frozen=True)
class Gateable:
    """One metric the gate can check."""

    name: str
    source: Source
    better: Better  # +1 higher is better, -1 lower, 0 neither (either way is a change)
    share: bool  # values in [0, 1], so an allowance above 1 is a mistake

    @property
    def per_cell(self) -> bool:
        """Whether ``metrics.csv`` has it per cell, so a paired test can judge a
        drop (replay values are per chain or per probe: it has them per group)."""
        return self.source != "replay"

    def wrong_way(self, change: float) -> float:
        """How far ``change`` (current - baseline) moved the wrong way: the
        drop, the rise for a cost, the distance either way when neither is better."""
        return abs(change) if self.better == 0 else -self.better * change


def _catalog() -> dict[str, Gateable]:
    sources: dict[str, Source] = {m: "cell" for m in METRICS}
    sources.update({m: "group" for m in GROUP_METRICS})
    sources.update({m: "replay" for m in (*CHAIN_STATS, *PROBE_STATS) if m not in sources})
    return {m: Gateable(m, src, *_TABLE[m]) for m, src in sources.items() if m in _TABLE}


GATEABLE: Final = _catalog()
REPLAY_METRICS: Final = frozenset(m for m, g in GATEABLE.items() if g.source == "replay")
LOWER_IS_BETTER: Final = frozenset(m for m, g in GATEABLE.items() if g.better == -1)


def unlisted() -> list[str]:
    """The report's metrics with no row in the table (a test wants none)."""
    return sorted({*METRICS, *CHAIN_STATS, *PROBE_STATS, *GROUP_METRICS} - _TABLE.keys())
