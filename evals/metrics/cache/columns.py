"""One chain priced under many profiles at once, as columns.

What a step caches, writes and leaves uncached depends on a profile's cache
mechanics alone (mode, minimum, granularity, lifetime, refresh, lookback,
breakpoints, misses); its prices (``read``, ``write``) and long-context rule
only weigh those tokens into a cost. Profiles that differ only there (OpenAI's
models at different read prices, say) are priced once and costed each, with the
same floating-point operations as the pricer (model.py, step 4), so every cost
has the bits :func:`~packproof.evals.metrics.cache.model.price_prompts` gives
(tested against it for every shipped profile).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import astuple, replace
from typing import NamedTuple

import numpy as np

from packproof.evals.metrics.cache.model import Profile, Prompts, price_prompts

__all__ = ["Columns", "mechanics", "price_columns"]


class Columns(NamedTuple):
    """A chain's steps under one profile: tokens cached, written and uncached,
    and the cost (input-token units, not rounded), one value per step."""

    cached: list[int]
    written: list[int]
    uncached: list[int]
    cost: np.ndarray


def mechanics(profile: Profile) -> Hashable:
    """What decides a step's cached, written and uncached tokens under ``profile``:
    the profile with its prices, long-context rule and provenance left out."""
    return astuple(
        replace(
            profile,
            read=0.0,
            write=0.0,
            long_context_tokens=0,
            long_context_factor=1.0,
            source="",
            date="",
        )
    )


def price_columns(prompts: Prompts, profiles: Mapping[str, Profile]) -> dict[str, Columns]:
    """Every profile's :class:`Columns` for the chain ``prompts``, in the order of
    ``profiles``; each set of profiles with the same :func:`mechanics` priced once."""
    priced: dict[Hashable, tuple[list[int], list[int], list[int]]] = {}
    out: dict[str, Columns] = {}
    for name, profile in profiles.items():
        key = mechanics(profile)
        if key not in priced:
            costs = price_prompts(prompts, profile)
            priced[key] = (
                [c[0] for c in costs],
                [c[1] for c in costs],
                [c[2] for c in costs],
            )
        cached, written, uncached = priced[key]
        out[name] = Columns(cached, written, uncached, _costs(profile, cached, written, uncached))
    return out


def _costs(
    profile: Profile, cached: list[int], written: list[int], uncached: list[int]
) -> np.ndarray:
    """read*H + write*W + U per step, times the long-context factor past its
    threshold: the pricer's operations, in its order, on float64 columns."""
    hit = np.asarray(cached, dtype=np.float64)
    wrote = np.asarray(written, dtype=np.float64)
    rest = np.asarray(uncached, dtype=np.float64)
    cost: np.ndarray = profile.read * hit + profile.write * wrote + rest
    if profile.long_context_tokens:
        total = np.asarray(cached, dtype=np.int64) + written + np.asarray(uncached, np.int64)
        longer = total > profile.long_context_tokens
        cost[longer] *= profile.long_context_factor
    return cost
