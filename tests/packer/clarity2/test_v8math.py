"""V8's ``Math.log`` and ``Math.exp`` (fdlibm), where they differ from a correctly
rounded libm and where they agree."""

from __future__ import annotations

import math
import random

from packproof.packer.clarity2 import v8math


def test_log_of_three_is_v8s_not_the_correctly_rounded_one() -> None:
    assert v8math.log(3) == 1.0986122886681096
    assert math.log(3) == 1.0986122886681098


def test_special_values() -> None:
    assert v8math.log(1) == 0.0
    assert v8math.log(0) == -math.inf
    assert math.isnan(v8math.log(-1))
    assert v8math.exp(0) == 1.0
    assert v8math.exp(1000) == math.inf
    assert v8math.exp(-1000) == 0.0


def test_both_stay_within_one_ulp_of_the_libm() -> None:
    rng = random.Random(7)
    for _ in range(20000):
        x = rng.uniform(-40, 40)
        assert abs(v8math.exp(x) - math.exp(x)) <= math.ulp(math.exp(x))
        y = rng.uniform(1e-6, 1e6)
        assert abs(v8math.log(y) - math.log(y)) <= math.ulp(math.log(y))
