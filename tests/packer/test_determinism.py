"""Same request, same bytes; input order does not matter."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from packproof.packer import pack
from packproof.packer.jsonio import round_float, round_floats
from packproof.packer.strategies import REGISTRY

from .helpers import msg


def request(strategy: str, items: list[dict[str, object]]) -> dict[str, object]:
    return {
        "items": items,
        "budget_tokens": 30,
        "prompt": "deploy rollback plan",
        "fresh_tail": {"count": 2},
        "strategy": strategy,
        "trust_policy": "exclude_quarantined",
        "ts": "2026-01-01T00:00:00Z",
    }


def corpus() -> list[dict[str, object]]:
    words = ["deploy", "rollback", "plan", "lunch", "数据库", "😀", "naïve", "plan plan"]
    rng = random.Random(7)
    return [
        msg(
            f"m{i}",
            " ".join(rng.choices(words, k=rng.randint(0, 8))),
            "user" if i % 2 else "assistant",
            ordinal=i,
            mentions=rng.randint(0, 3),
            trust=rng.choice(["trusted", "unknown", "quarantined"]),
        )
        for i in range(40)
    ]


@pytest.mark.parametrize("strategy", sorted(REGISTRY))
def test_same_request_same_bytes_and_shuffle_changes_nothing(strategy: str) -> None:
    items = corpus()
    first = pack(request(strategy, items)).to_json()
    assert pack(request(strategy, items)).to_json() == first
    shuffled = items[:]
    random.Random(1).shuffle(shuffled)
    assert pack(request(strategy, shuffled)).to_json() == first


def test_ts_comes_from_the_request_or_a_fixed_default() -> None:
    out = pack({"items": [], "budget_tokens": 1}).to_dict()
    assert out["meta"]["ts"] == "1970-01-01T00:00:00Z"


def test_floats_are_canonical() -> None:
    from packproof.packer.jsonio import canonical, dumps, round_floats

    assert canonical(-0.0) == 0.0 and str(canonical(-0.0)) == "0.0"
    assert canonical(0.1 + 0.2) == 0.3
    assert canonical({"a": [1.0000000004, -1e-12]}) == {"a": [1.0, 0.0]}
    assert round_floats(np.array([0.1 + 0.2, -1e-12, np.nan]))[:2].tolist() == [0.3, 0.0]
    with pytest.raises(ValueError, match="non-finite"):
        dumps({"x": float("inf")})


@given(
    st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(-(10**12), 10**12).map(lambda n: n / 1e9 + 5e-10)
    | st.floats(min_value=-1e-6, max_value=1e-6)
)
def test_round_float_is_numpy_round_bit_for_bit(value: float) -> None:
    with np.errstate(over="ignore"):
        expected = float(round_floats(np.array([value]))[0])
    if np.isinf(expected):  # numpy's scaling overflows beyond ~1.8e299; the float is whole
        assert round_float(value) == value
    else:
        assert (
            np.array([round_float(value)]).view(np.int64)[0]
            == (np.array([expected]).view(np.int64)[0])
        )
