"""Packing strategies: one module each, registered by name in :data:`REGISTRY`."""

from . import bm25, bm25lite, chronological, clarity, hybrid
from .base import (
    REGISTRY,
    ParamInfo,
    Ranking,
    ScoringView,
    Strategy,
    StrategyBase,
    build_strategy,
    parse_spec,
    register,
)

__all__ = [
    "REGISTRY",
    "ParamInfo",
    "Ranking",
    "ScoringView",
    "Strategy",
    "StrategyBase",
    "bm25",
    "bm25lite",
    "build_strategy",
    "chronological",
    "clarity",
    "hybrid",
    "parse_spec",
    "register",
]
