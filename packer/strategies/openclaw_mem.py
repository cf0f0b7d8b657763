"""openclaw-mem's own pack policy (``cmd_pack``), as a strategy that decides the
whole pack (:class:`~packproof.packer.strategies.base.Policy`; the steps in
:mod:`packproof.packer.openclaw`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from .base import Ranking, ScoringView, StrategyBase, param, register

if TYPE_CHECKING:
    from ..pipeline import Reserved
    from ..policy import PolicyDecision
    from ..request import Request

__all__ = ["OpenclawMem"]

_ON_OFF = ("on", "off")


@register
@dataclass(frozen=True)
class OpenclawMem(StrategyBase):
    """openclaw-mem's ``pack`` selection (phenomenoner/openclaw-mem at 7a3a848,
    ``cmd_pack``), exact against its code on its recorded cases: reciprocal rank
    fusion of the retrieval lanes (the request's ``retrieval``, else packproof's
    bm25 ranking as the lexical lane), the archive and supersedes filters, the
    ``composite`` or ``relevance`` order (synthesis cards, trust tier, then the
    composite score, or importance, fused score, lanes and time), synthesis
    cards preferred over the records they cover, a protected tail with its own
    token budget and slots (the request's fresh tail), soft quotas, and a
    first-fit fill. Parameters are openclaw-mem's options and settings, with its
    built-in defaults; the request's ``max_items`` is ``--limit`` and its
    ``trust_policy: exclude_quarantined`` its ``exclude_quarantined_fail_open``.
    Its receipts are in the trace's ``extensions.openclaw_mem``."""

    name: ClassVar[str] = "openclaw-mem"
    formula: ClassVar[str] = (
        "order: (card first, trust, -rrf*w_importance*0.5^(age/half_life)*use_boost*state_gate)"
        " | relevance: (card first, trust, importance, -rrf, -lanes, -ts)"
    )

    profile: str = param(
        "composite",
        "scoring profile (OPENCLAW_MEM_SCORING_PROFILE)",
        choices=("composite", "relevance"),
    )
    limit: int = param(12, "--limit, when the request has no max_items", minimum=1, integer=True)
    tail_budget_tokens: int = param(
        0,
        "--tail-budget-tokens: tokens reserved for the tail (0: no tail)",
        minimum=0,
        integer=True,
    )
    tail_budget: str = param(
        "fixed",
        "fixed: reserve tail_budget_tokens; fit: reserve what the tail lines take (as a caller "
        "passing --tail-budget-tokens equal to its tail's size), so a tail that fits is kept",
        choices=("fixed", "fit"),
    )
    tail_max_items: int = param(
        4, "--tail-max-items: keep the newest N tail lines (<= 0: all)", integer=True
    )
    include_archived: str = param(
        "off", "--include-archived: keep soft-archived records", choices=("off", "on")
    )
    quotas: str = param("on", "soft quotas (OPENCLAW_MEM_QUOTA_ENABLED)", choices=_ON_OFF)
    preference_min: int = param(1, "preference records reserved first", minimum=0, integer=True)
    decision_min: int = param(1, "decision records reserved next", minimum=0, integer=True)
    event_max_ratio: float = param(0.4, "event cap: share of the memory slots (clamped to [0, 1])")
    relevance_factor: str = param("on", "composite: the fused score", choices=_ON_OFF)
    importance_factor: str = param("on", "composite: the importance weight", choices=_ON_OFF)
    recency_factor: str = param("on", "composite: the recency decay", choices=_ON_OFF)
    use_factor: str = param("on", "composite: the use boost", choices=_ON_OFF)
    state_factor: str = param("on", "composite: the lifecycle gate", choices=_ON_OFF)

    def rank(self, view: ScoringView) -> Ranking:
        """The lexical lane without the request's ``retrieval``: packproof's bm25."""
        from .bm25 import BM25

        return BM25().rank(view)

    def decide(self, req: Request, reserved: Reserved) -> PolicyDecision:
        """The whole pack, as openclaw-mem's ``pack`` decides it."""
        from ..openclaw.pack import pack_openclaw  # the steps load when first used

        return pack_openclaw(self, req, reserved)
