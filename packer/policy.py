"""What a strategy that decides the whole pack returns (the :class:`Policy` hook).

Most strategies only score and order the evictable candidates; the shared
pipeline reserves the tail and anchors and fills the budget. A peer system's
pack policy (openclaw-mem's: its own candidates, filters, order, tail budget,
quotas and fill) cannot be written that way without changing what it selects,
so a strategy may instead provide the whole decision: a :class:`Policy`
(:mod:`packproof.packer.strategies.base`) has ``decide(req, reserved) ->
PolicyDecision``. The pipeline (:func:`packproof.packer.pipeline.decide`) hands
it the request and packproof's reservation (made once per request: the fresh
tail, for the policy to use as it does) and makes its
:class:`~packproof.packer.result.PackResult` from the decision, which is then
rendered, measured and explained as any other. Its outcome codes are
packproof's; what the policy decided beyond them (each item's reasons in the
policy's own words, the bundle text, the policy's receipts) travels in a
:class:`PolicyOutcome`.

This module holds plain data only, so that a policy's own modules can build it
without importing the pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .strategies.base import Ranking

__all__ = ["PolicyDecision", "PolicyOutcome"]


@dataclass(frozen=True, eq=False)
class PolicyOutcome:
    """What a policy decided beyond packproof's outcome codes.

    ``reasons``: per item (ordinal order), its reason tokens, the outcome's
    first (as every trace has it), then the policy's own in its order.
    ``bundle_text``: the pack's bundle text, as the policy writes it.
    ``extensions``: the policy's receipts, by name, for the trace's
    ``extensions`` object."""

    reasons: Sequence[tuple[str, ...]]
    bundle_text: str
    extensions: Mapping[str, Any]


@dataclass(frozen=True, eq=False)
class PolicyDecision:
    """A policy's pack, as arrays over the request's items (ordinal order), with
    the meaning :class:`~packproof.packer.result.PackResult` gives them:
    ``evictable`` the positions the policy ranks (``ranking`` scores them, in
    that order), ``in_tail`` its protected tail, ``tail_tokens`` what the tail
    used, ``remaining_tokens`` and ``evictable_slots`` the budget and slots left
    for the rest, ``pack_order`` the packed positions in pack order;
    ``anchored`` and ``anchor_tokens`` the anchors the policy keeps as packproof
    does (None and 0: it knows no anchors)."""

    ranking: Ranking
    evictable: np.ndarray
    outcome: np.ndarray
    in_tail: np.ndarray
    rank: np.ndarray
    tail_start: int | None
    tail_tokens: int
    remaining_tokens: int
    evictable_slots: int | None
    pack_order: np.ndarray
    explained: PolicyOutcome
    anchored: np.ndarray | None = None
    anchor_tokens: int = 0
