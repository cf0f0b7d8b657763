"""V8's Math.pow (fdlibm e_pow.c): the values SCORER.md quotes, the special cases
JavaScript defines, and agreement with the host pow to one ulp elsewhere."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from packproof.packer.v8pow import pow as v8pow


def test_the_value_scorer_md_quotes_where_v8_and_libm_differ() -> None:
    assert v8pow(0.5, 0.25) == 0.8408964152537146  # a correctly rounded pow: ...145


@pytest.mark.parametrize(
    ("x", "y", "expected"),
    [
        (2.0, 10.0, 1024.0),
        (0.5, math.inf, 0.0),  # 0.5 ** (1 / 0): a half-life of 0 decays at once
        (2.0, 0.0, 1.0),
        (0.0, -1.0, math.inf),
        (-2.0, 3.0, -8.0),
        (2.0, 1024.0, math.inf),
        (2.0, -1080.0, 0.0),
        (2.0, -1074.0, 5e-324),
    ],
)
def test_special_and_exact_cases(x: float, y: float, expected: float) -> None:
    assert v8pow(x, y) == expected


def test_nan_cases() -> None:
    assert math.isnan(v8pow(-2.0, 0.5)) and math.isnan(v8pow(1.0, math.inf))


@given(st.floats(1e-3, 1e3), st.floats(-100, 100))
def test_within_one_ulp_of_the_host_pow(x: float, y: float) -> None:
    expected = x**y
    found = v8pow(x, y)
    if expected == 0 or math.isinf(expected):
        assert found == expected
    else:
        assert abs(found - expected) <= math.ulp(expected)
