"""A documented hybrid of relevance, recency, usage, importance and trust."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Final
from weakref import WeakKeyDictionary

import numpy as np

from ..model import IMPORTANCE, TRUST, Items
from .base import Ranking, ScoringView, StrategyBase, param, register
from .bm25 import Bm25Params
from .clarity import ClarityUsageParams

__all__ = ["Hybrid", "max_normalise"]


def max_normalise(values: np.ndarray) -> np.ndarray:
    """``values / max(values)``, all zeros when the maximum is not positive."""
    top = float(values.max()) if len(values) else 0.0
    return values / top if top > 0 else np.zeros_like(values)


@register
@dataclass(frozen=True)
class Hybrid(StrategyBase, Bm25Params, ClarityUsageParams):
    """Weighted mixture, every weight a parameter and every part in the trace:

        relevance = bm25 / max(bm25 over candidates)              (0 when no match)
        recency   = 0.5 ** (max(0, current_turn - turn) / half_life_turns)
        usage     = clarity_usage / max(clarity_usage over candidates)
        score     = (w_relevance*relevance + w_recency*recency + w_usage*usage)
                    * importance_weight[importance] * trust_weight[trust]

    Importance weights are openclaw-mem's composite profile (must 1.2, nice 1.0,
    unknown 1.0, ignore 0.8); trust weights are packproof's defaults (openclaw-mem
    ranks by trust tier first, which a product of weights cannot express). With no
    searchable prompt the relevance part is 0 and the other parts still rank.
    """

    name: ClassVar[str] = "hybrid"
    formula: ClassVar[str] = (
        "(w_rel*bm25/max + w_rec*0.5^(age/hl) + w_use*usage/max) * w_importance * w_trust"
    )

    w_relevance: float = param(0.7, "weight of max-normalised BM25 relevance", minimum=0)
    w_recency: float = param(0.2, "weight of the recency decay", minimum=0)
    w_usage: float = param(0.1, "weight of max-normalised Clarity usage", minimum=0)
    half_life_turns: float = param(
        8.0, "turns for the recency part to halve (0: only now)", minimum=0
    )
    importance_must_remember: float = param(1.2, "multiplier, importance must_remember", minimum=0)
    importance_nice_to_have: float = param(1.0, "multiplier, importance nice_to_have", minimum=0)
    importance_unknown: float = param(1.0, "multiplier, importance unknown", minimum=0)
    importance_ignore: float = param(0.8, "multiplier, importance ignore", minimum=0)
    trust_trusted: float = param(1.0, "multiplier, trust trusted", minimum=0)
    trust_unknown: float = param(1.0, "multiplier, trust unknown", minimum=0)
    trust_untrusted: float = param(0.8, "multiplier, trust untrusted", minimum=0)
    trust_quarantined: float = param(0.5, "multiplier, trust quarantined", minimum=0)

    def rank(self, view: ScoringView) -> Ranking:
        items = view.items
        bm25, terms = self.relevance(view)
        relevance = max_normalise(bm25)
        base, start = items.base_window()
        if base is items or not len(items):
            parts, unit = self.parts(items, view.current_turn), (False, False)
        else:  # a window of a table (a replay's step): read what the table fixes
            shared = _shared(self, base)
            parts, unit = shared.parts(items, start, view.current_turn), shared.unit(start, items)
        recency, usage_raw, w_imp, w_trust = parts
        usage = max_normalise(usage_raw)
        # (w_rel*relevance + w_rec*recency + w_use*usage) * w_imp * w_trust, in that
        # order, in place; a weight of 1 everywhere leaves every score as it is
        scores = np.multiply(self.w_relevance, relevance)
        part = np.multiply(self.w_recency, recency)
        scores += part
        scores += np.multiply(self.w_usage, usage, out=part)
        if not unit[0]:
            scores *= w_imp
        if not unit[1]:
            scores *= w_trust
        return Ranking(
            scores=scores,
            components={
                "bm25": bm25,
                "relevance": relevance,
                "recency": recency,
                "usage_raw": usage_raw,
                "usage": usage,
                "importance_weight": w_imp,
                "trust_weight": w_trust,
            },
            terms=terms,
        )

    def parts(self, items: Items, current_turn: int) -> _Parts:
        """Recency, raw usage, importance and trust weight of each item: the parts
        of the score that do not depend on the prompt."""
        age = np.maximum(0, current_turn - items.turns).astype(np.float64)
        return (
            self.recency_of(age),
            self.usage_raw(items, current_turn),
            self.importance_weights()[items.importance],
            self.trust_weights()[items.trust],
        )

    def usage_raw(self, items: Items, current_turn: int) -> np.ndarray:
        """Clarity's usage of each item, negatives as 0."""
        usage: np.ndarray = np.maximum(0.0, self.usage(items, current_turn)["usage"])
        return usage

    def recency_of(self, age: np.ndarray) -> np.ndarray:
        """``0.5 ** (age / half_life_turns)`` (only age 0 when the half-life is 0)."""
        if self.half_life_turns > 0:
            recency: np.ndarray = np.power(0.5, age / self.half_life_turns)
            return recency
        only_now: np.ndarray = (age == 0).astype(np.float64)
        return only_now

    def importance_weights(self) -> np.ndarray:
        return np.array([getattr(self, f"importance_{i}") for i in IMPORTANCE])

    def trust_weights(self) -> np.ndarray:
        return np.array([getattr(self, f"trust_{t}") for t in TRUST])


_Parts = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]

# Tables by age hold at most max(_MIN_AGES, _AGES_PER_ITEM * items) entries; a window
# with an older age (turns too sparse for a table to pay) is computed as a table's own.
_AGES_PER_ITEM: Final = 4
_MIN_AGES: Final = 1024


class _Shared:
    """What a table fixes of :meth:`Hybrid.parts` for every window of it (a
    replay's steps rank windows of one table): each item's importance and trust
    weight, and tables of recency by age and of Clarity usage by turns since the
    last mention, for items with no mentions and no references (their usage
    depends on nothing else). An item's part is computed alone, by elementwise
    numpy operations on its own values, so a table's entry for its age is the
    value :meth:`Hybrid.parts` gives it: bit for bit. Usage of the other items
    is computed per window, for them alone."""

    def __init__(self, strategy: Hybrid, base: Items) -> None:
        self.strategy = strategy
        self.importance = _frozen(strategy.importance_weights()[base.importance])
        self.trust = _frozen(strategy.trust_weights()[base.trust])
        # how many items before each position weigh other than 1
        self.weighted = [_count_before(self.importance != 1.0), _count_before(self.trust != 1.0)]
        self.mentioned = np.flatnonzero((base.mentions != 0) | (base.references != 0))
        turns = base.turns
        # turns of an integer type (as parsed): an age is a table's index
        self.integral = turns.dtype.kind == base.last_mention_turns.dtype.kind == "i"
        self.ascending = bool(np.all(turns[1:] >= turns[:-1]))
        # since the last mention is the age (a conversation's plain messages)
        self.same_turns = bool(np.array_equal(turns, base.last_mention_turns))
        self.limit = max(_MIN_AGES, _AGES_PER_ITEM * len(base))
        self.recency = np.zeros(0, dtype=np.float64)
        self.usage = np.zeros(0, dtype=np.float64)

    def parts(self, items: Items, start: int, current_turn: int) -> _Parts:
        """:meth:`Hybrid.parts` of the window ``items`` (not empty), at ``start``
        of the table."""
        if not (self.integral and isinstance(current_turn, (int, np.integer))):
            return self.strategy.parts(items, current_turn)
        stop = start + len(items)
        turns = items.turns
        if self.ascending and turns[-1] <= current_turn:  # no age below 0
            age = current_turn - turns
            oldest = current_turn - int(turns[0])
        else:
            age = np.maximum(0, current_turn - turns)
            oldest = int(age.max())
        if self.same_turns:
            since, stalest = age, oldest
        else:
            since = np.maximum(0, current_turn - items.last_mention_turns)
            stalest = int(since.max())
        if max(oldest, stalest) >= self.limit:
            return self.strategy.parts(items, current_turn)
        if len(self.recency) <= oldest:
            self.recency = _frozen(self.strategy.recency_of(_ages(oldest, self.limit)))
        if len(self.usage) <= stalest:
            self.usage = _frozen(self._plain_usage(_ages(stalest, self.limit)))
        # every index is in range: "clip" spares the bounds check
        recency = self.recency.take(age, mode="clip")
        usage = self.usage.take(since, mode="clip")
        lo, hi = np.searchsorted(self.mentioned, (start, stop))
        if hi > lo:
            at = self.mentioned[lo:hi] - start
            usage[at] = self.strategy.usage_raw(_usage_table(items, at), current_turn)
        return recency, usage, self.importance[start:stop], self.trust[start:stop]

    def unit(self, start: int, items: Items) -> tuple[bool, bool]:
        """Whether every importance weight, and every trust weight, of the window
        ``items`` at ``start`` is 1."""
        stop = start + len(items)
        return (
            self.weighted[0][stop] == self.weighted[0][start],
            self.weighted[1][stop] == self.weighted[1][start],
        )

    def _plain_usage(self, since: np.ndarray) -> np.ndarray:
        """Usage of an item with no mentions and no references, ``since`` turns
        after its last mention."""
        turns = since.astype(np.int64)
        zeros = np.zeros(len(turns), dtype=np.int64)
        now = int(turns[-1])
        return self.strategy.usage_raw(_usage_items(now - turns, zeros, zeros), now)


def _ages(top: int, limit: int) -> np.ndarray:
    """Ages ``0..n-1`` (float64), ``n`` past ``top`` with room to grow."""
    return np.arange(min(limit, max(64, 2 * (top + 1))), dtype=np.float64)


def _count_before(flags: np.ndarray) -> list[int]:
    """How many of ``flags`` are set before each position (and in all)."""
    counts: list[int] = np.concatenate(([0], np.cumsum(flags))).tolist()
    return counts


def _frozen(values: np.ndarray) -> np.ndarray:
    values.flags.writeable = False  # shared by every window's ranking
    return values


def _usage_table(items: Items, at: np.ndarray) -> Items:
    """The items at ``at``, as a table of the columns Clarity's usage reads."""
    return _usage_items(items.last_mention_turns[at], items.mentions[at], items.references[at])


def _usage_items(last_mention: np.ndarray, mentions: np.ndarray, references: np.ndarray) -> Items:
    """A table of items with these columns (turns: the last mention) and no text."""
    n = len(last_mention)
    codes = np.zeros(n, dtype=np.int8)
    return Items(
        ids=[],
        texts=[],
        ordinals=np.arange(n),
        roles=codes,
        kinds=codes,
        tokens=np.zeros(n, dtype=np.int64),
        trust=codes,
        importance=codes,
        anchored=np.zeros(n, dtype=bool),
        categories=[],
        turns=last_mention,
        mentions=mentions,
        references=references,
        last_mention_turns=last_mention,
        urls=[],
    )


_SHARED: WeakKeyDictionary[Items, dict[Hybrid, _Shared]] = WeakKeyDictionary()


def _shared(strategy: Hybrid, base: Items) -> _Shared:
    """The table's shared parts under ``strategy``'s parameters, made once."""
    by_strategy = _SHARED.setdefault(base, {})
    shared = by_strategy.get(strategy)
    if shared is None:
        shared = by_strategy[strategy] = _Shared(strategy, base)
    return shared
