"""Packing strategies: one module each, registered by name in :data:`REGISTRY`."""

from . import bm25, bm25lite, chronological, clarity, clarity2, hybrid, openclaw_mem
from .base import (
    REGISTRY,
    ParamInfo,
    Policy,
    Ranking,
    ScoringView,
    Strategy,
    StrategyBase,
    build_strategy,
    is_policy,
    is_policy_name,
    parse_spec,
    register,
    strategy_from_json,
)

__all__ = [
    "REGISTRY",
    "ParamInfo",
    "Policy",
    "Ranking",
    "ScoringView",
    "Strategy",
    "StrategyBase",
    "bm25",
    "bm25lite",
    "build_strategy",
    "chronological",
    "clarity",
    "clarity2",
    "hybrid",
    "is_policy",
    "is_policy_name",
    "openclaw_mem",
    "parse_spec",
    "register",
    "strategy_from_json",
]
