"""The registry: unique names, specs that round-trip, parameters documented."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest

from packproof.packer.strategies import REGISTRY, build_strategy, parse_spec, register
from packproof.packer.strategies.base import StrategyBase


def test_registry_has_the_eight_strategies() -> None:
    assert sorted(REGISTRY) == [
        "bm25",
        "bm25lite",
        "chronological",
        "clarity",
        "clarity-prune",
        "clarity2",
        "hybrid",
        "openclaw-mem",
    ]


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ValueError, match="already registered"):

        @register
        @dataclass(frozen=True)
        class Again(StrategyBase):
            name: ClassVar[str] = "bm25"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_spec_round_trips(name: str) -> None:
    strategy = build_strategy(name, {})
    parsed_name, params = parse_spec(strategy.spec_string())
    again = build_strategy(parsed_name, params)
    assert again == strategy
    assert again.spec() == strategy.spec()
    assert build_strategy(**strategy.spec()) == strategy


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_parameter_is_documented(name: str) -> None:
    cls = REGISTRY[name]
    assert cls.formula and cls.__doc__
    for info in cls.param_info():
        assert info.doc


def test_spec_string_is_canonical() -> None:
    assert build_strategy("bm25", {"k1": 1.5}).spec_string() == (
        "bm25(b=0.75,k1=1.5,stem=none,stopwords=none)"
    )
    assert build_strategy("chronological", {}).spec_string() == "chronological"
