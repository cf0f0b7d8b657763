"""hybrid ranks a window of a table (a replay's step) from what the table fixes
(weights, and recency and usage by age, tabulated once), and a table of its own
item by item: both bit for bit as the plain formula below computes it (every
part over every candidate, in the documented order); and the walk order they
imply is the same."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from packproof.packer.model import IMPORTANCE, TRUST, Items
from packproof.packer.pipeline import walk_order
from packproof.packer.strategies import ScoringView
from packproof.packer.strategies.base import Ranking
from packproof.packer.strategies.hybrid import Hybrid, max_normalise

WORDS = ["kafka", "lag", "the", "deploy", "cache", "x1", "naïve", "数据库"]


@st.composite
def tables(draw: st.DrawFn) -> Items:
    n = draw(st.integers(1, 40))
    ints = st.lists(st.integers(0, 60), min_size=n, max_size=n)
    turns = np.array(draw(ints), dtype=np.int64)
    if draw(st.booleans()):  # a conversation: turns ascend, mentioned when said
        turns = np.sort(turns)
    last = turns.copy() if draw(st.booleans()) else np.array(draw(ints), dtype=np.int64)
    sparse = st.lists(st.sampled_from([0, 0, 0, 1, 3]), min_size=n, max_size=n)
    codes = st.lists(st.integers(0, 3), min_size=n, max_size=n)
    texts = [" ".join(draw(st.lists(st.sampled_from(WORDS), max_size=4))) for _ in range(n)]
    return Items(
        ids=[f"m{i}" for i in range(n)],
        texts=texts,
        ordinals=np.arange(n, dtype=np.int64),
        roles=np.zeros(n, dtype=np.int8),
        kinds=np.zeros(n, dtype=np.int8),
        tokens=np.ones(n, dtype=np.int64),
        trust=np.array(draw(codes), dtype=np.int8),
        importance=np.array(draw(codes), dtype=np.int8),
        anchored=np.zeros(n, dtype=bool),
        categories=[None] * n,
        turns=turns,
        mentions=np.array(draw(sparse), dtype=np.int64),
        references=np.array(draw(sparse), dtype=np.int64),
        last_mention_turns=last,
        urls=[None] * n,
    )


WEIGHT = st.sampled_from([0.0, 0.3, 0.8, 1.0, 1.2, 7.0])


@st.composite
def hybrids(draw: st.DrawFn) -> Hybrid:
    params = {
        "w_relevance": draw(WEIGHT),
        "w_recency": draw(WEIGHT),
        "w_usage": draw(WEIGHT),
        "half_life_turns": draw(st.sampled_from([0.0, 0.5, 3.0, 8.0])),
        "half_life": draw(st.sampled_from([0.0, 1.0, 5.0])),
        "recency_window": draw(st.sampled_from([0.0, 3.0])),
        **{f"importance_{i}": draw(WEIGHT) for i in IMPORTANCE},
        **{f"trust_{t}": draw(WEIGHT) for t in TRUST},
    }
    return Hybrid(**params)


def reference(strategy: Hybrid, view: ScoringView) -> Ranking:
    """hybrid's score as first written: each part over every candidate."""
    self, items = strategy, view.items
    bm25, terms = self.relevance(view)
    relevance = max_normalise(bm25)
    age = np.maximum(0, view.current_turn - items.turns).astype(np.float64)
    if self.half_life_turns > 0:
        recency = np.power(0.5, age / self.half_life_turns)
    else:
        recency = (age == 0).astype(np.float64)
    usage_raw = np.maximum(0.0, self.usage(items, view.current_turn)["usage"])
    usage = max_normalise(usage_raw)
    w_imp = np.array([getattr(self, f"importance_{i}") for i in IMPORTANCE])[items.importance]
    w_trust = np.array([getattr(self, f"trust_{t}") for t in TRUST])[items.trust]
    mix = self.w_relevance * relevance + self.w_recency * recency + self.w_usage * usage
    scores = mix * w_imp * w_trust
    components = {
        "bm25": bm25,
        "relevance": relevance,
        "recency": recency,
        "usage_raw": usage_raw,
        "usage": usage,
        "importance_weight": w_imp,
        "trust_weight": w_trust,
    }
    return Ranking(scores=scores, components=components, terms=terms)


def _bits(values: np.ndarray) -> bytes:
    return np.ascontiguousarray(values, dtype=np.float64).tobytes()


@settings(max_examples=150, deadline=None)
@given(table=tables(), strategy=hybrids(), data=st.data())
def test_a_window_ranks_as_its_items_alone(
    table: Items, strategy: Hybrid, data: st.DataObject
) -> None:
    n = len(table)
    # one table, several steps (its age tables grow as the turns do)
    for _ in range(data.draw(st.integers(1, 4))):
        start = data.draw(st.integers(0, n - 1))
        stop = data.draw(st.integers(start + 1, n))
        now = data.draw(st.one_of(st.integers(0, 80), st.integers(0, 6000)))
        prompt = data.draw(st.one_of(st.none(), st.sampled_from(WORDS)))
        window = table.window(start, stop)
        alone = table.take(np.arange(start, stop), subset=False)  # a table of its own
        assert alone.base_window()[0] is alone and window.base_window()[0] is table
        want = reference(strategy, ScoringView(alone, prompt, now))
        assert want.scores is not None
        for items in (window, alone):
            got = strategy.rank(ScoringView(items, prompt, now))
            assert got.scores is not None
            assert _bits(got.scores) == _bits(want.scores)
            assert got.components.keys() == want.components.keys()
            for name, values in want.components.items():
                assert _bits(got.components[name]) == _bits(values), name
            assert got.terms == want.terms
            ordinals = items.ordinals
            assert (
                walk_order(got.scores, ordinals, items.ascending).tolist()
                == np.lexsort((-ordinals, -want.scores)).tolist()
            )
