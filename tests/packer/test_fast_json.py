"""The fast encoder (orjson) writes exactly the bytes of the reference (``json``).

The reference is ``json.dumps`` with the settings packproof has always used; the
fast path must match it on every golden scenario's pack and on random requests
and values: non-ASCII text, escapes, floats of every size (those orjson writes
otherwise are marked), indents, big integers and lone surrogates (which go to
the reference)."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from packproof.evals.scenarios.compile import load_sources
from packproof.evals.scenarios.format import pack_turn
from packproof.packer import InputError, jsonio, pack
from packproof.packer.jsonio import (
    ReprFloat,
    canonical,
    dumpb,
    dumps,
    json_floats,
    mark_float_list,
    mark_floats,
    round_float,
)
from packproof.packer.strategies import REGISTRY
from tests.paths import ROOT

SCENARIOS = ROOT / "scenarios"


def reference(value: Any, indent: int | None = None) -> str:
    """What packproof wrote before orjson, as it wrote it."""
    return json.dumps(
        value,
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ": ") if indent is not None else (",", ":"),
        indent=indent,
        allow_nan=False,
    )


def test_the_installed_orjson_is_used() -> None:
    # Otherwise everything below passes on the reference encoder alone.
    assert jsonio._FAST


def all_turns() -> list[tuple[str, Any]]:
    loaded = load_sources(SCENARIOS.glob("*.yaml"))
    return [
        (f"{sc.id}/{k}", turn)
        for scenarios in loaded.values()
        for sc in scenarios
        for k, turn in enumerate(sc.turns)
    ]


@pytest.mark.parametrize("strategy", sorted(REGISTRY))
def test_every_golden_scenario_pack_is_the_reference_bytes(strategy: str) -> None:
    for name, turn in all_turns():
        result = pack_turn(turn, strategy)
        plain = result.to_dict()
        for indent in (None, 2):
            expected = reference(plain, indent)
            assert result.to_json(indent=indent) == expected, name
            assert result.to_json_bytes(indent=indent) == expected.encode("utf-8"), name


def test_floats_orjson_writes_otherwise_are_marked() -> None:
    values = np.array([0.0, -0.0, 5e-05, -1e-09, 1e-4, 0.5, np.nan, 1e16, 1e-10 + 1e-12])
    floats = json_floats(values)
    assert floats[6] is None
    marked = [i for i, x in enumerate(floats) if isinstance(x, ReprFloat)]
    assert marked == [2, 3]  # 1e-10 + 1e-12 rounds to 0.0
    assert isinstance(json_floats(np.array([5e-05, 0.5, 1.0]))[0], ReprFloat)  # no None beside
    zeros = json_floats(np.array([0.0, -0.0, 1.0, 1.0]))
    assert zeros[0] is zeros[1] and zeros[2] is zeros[3]  # one object each
    assert dumps({"x": floats}, prepared=True) == reference({"x": floats})
    assert (
        dumps({"x": floats}, prepared=True)
        == '{"x":[0.0,0.0,5e-05,-1e-09,0.0001,0.5,null,1e+16,0.0]}'
    )


def test_mark_floats_keeps_values_and_non_finite_floats_still_raise() -> None:
    value = {"a": [1e-07, 0.123456789123], "b": (2.5e-05,)}
    marked = mark_floats(value)
    assert marked == {"a": [1e-07, 0.123456789123], "b": [2.5e-05]}
    assert dumps(marked, prepared=True) == reference(marked)
    for bad in (math.inf, math.nan):
        with pytest.raises(ValueError):
            dumps(mark_floats({"x": bad}), prepared=True)
        with pytest.raises(ValueError):
            dumps({"x": bad})


def test_what_orjson_cannot_write_goes_to_the_reference() -> None:
    huge = {"n": 2**70, "m": -(2**64)}
    assert dumps(huge) == reference(huge)
    lone = {"s": "a\ud800b"}
    assert dumps(lone) == reference(lone)  # a str with the surrogate, as always
    with pytest.raises(UnicodeEncodeError):
        dumpb(lone)
    for indent in (0, 1, 3, 16):
        assert dumps({"a": [1, {"b": []}]}, indent=indent) == reference(
            {"a": [1, {"b": []}]}, indent
        )
    with pytest.raises(TypeError):
        dumps({1: "non-string keys, mixed", "a": 2})


text_st = st.text(
    st.characters(codec="utf-8") | st.sampled_from(list('"\\/\b\f\n\r\t\x00\x1f\x7f\u2028😀数')),
    max_size=12,
)
float_st = (
    st.floats(allow_nan=False, allow_infinity=False)
    | st.floats(min_value=-1e-3, max_value=1e-3)
    | st.integers(-(10**12), 10**12).map(lambda n: n / 1e9)
)
json_st = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**80), 2**80) | float_st | text_st,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text_st, inner, max_size=4),
    max_leaves=20,
)


@given(json_st, st.sampled_from([None, 2, 0, 4]))
def test_any_value_is_the_reference_bytes(value: Any, indent: int | None) -> None:
    expected = reference(canonical(value), indent)
    assert dumps(value, indent=indent) == expected
    assert dumpb(value, indent=indent) == expected.encode("utf-8")


WORDS = st.sampled_from(["deploy", "plan", "数据库", "😀", "naïve", "a\tb", 'q"x', "\\n", ""])


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    """Requests whose packs hold floats of every size: hybrid weights down to
    1e-9 make tiny scores and components; cache-aware options and the previous
    pack's age are written as given."""
    n = draw(st.integers(0, 12))
    items = [
        {
            "id": draw(text_st.filter(bool)) + f"#{k}",
            "text": " ".join(draw(st.lists(WORDS | text_st, max_size=5))),
            "role": draw(st.sampled_from(["user", "assistant", "tool"])),
            "mentions": draw(st.integers(0, 4)),
            "turn": draw(st.integers(0, 30)),
            "url": draw(st.none() | text_st),
        }
        for k in range(n)
    ]
    small = st.floats(min_value=0, max_value=2) | st.floats(min_value=1e-9, max_value=1e-4)
    strategy = draw(st.sampled_from(sorted(REGISTRY)))
    params = {}
    if strategy == "hybrid":
        params = {w: draw(small) for w in ("w_relevance", "w_recency", "w_usage")}
    request: dict[str, Any] = {
        "items": items,
        "budget_tokens": draw(st.integers(1, 60)),
        "prompt": " ".join(draw(st.lists(WORDS, max_size=3))),
        "strategy": {"name": strategy, "params": params},
        "fresh_tail": {"count": draw(st.integers(0, 2))},
    }
    if items and draw(st.booleans()):
        request["cache_aware"] = {"ttl_s": draw(small), "low_water": draw(st.floats(0.1, 1))}
        held = draw(st.lists(st.sampled_from([it["id"] for it in items]), unique=True))
        request["previous_pack"] = {"record_refs": held, "elapsed_s": draw(small)}
    return request


@given(requests())
def test_random_packs_are_the_reference_bytes(request: dict[str, Any]) -> None:
    result = pack(request)
    plain = result.to_dict()
    for indent in (None, 2):
        expected = reference(plain, indent)
        assert result.to_json(indent=indent) == expected
        assert result.to_json_bytes(indent=indent) == expected.encode("utf-8")
    # and the shared objects of the JSON path are not in what to_dict gives
    candidates = plain["trace"]["candidates"]
    assert len({id(c["decision"]) for c in candidates}) == len(candidates)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('["\\ud83d\\ude00", "\\u00e9"]', None),  # a pair and a plain escape
        ('{"a": "x\\ud800"}', "line 1 column 9"),
        ('["ok", "\\udc00"]', "line 1 column 9"),
        ('"\\\\ud800"', None),  # an escaped backslash, then text
    ],
)
def test_lone_surrogate_escapes_are_refused_from_bytes_and_text(
    text: str, error: str | None
) -> None:
    for source in (text, text.encode("utf-8")):
        if error is None:
            assert jsonio.loads(source) == json.loads(text)
        else:
            with pytest.raises(InputError, match=error):
                jsonio.loads(source)


@given(
    st.lists(
        st.one_of(
            st.floats(allow_nan=False, allow_infinity=False),
            st.sampled_from([0.0, -0.0, 1e-05, 5e-05, -3e-07, 1e-4, 2527.5]),
        )
    )
)
def test_a_float_list_marked_at_once_writes_as_the_reference(raw: list[float]) -> None:
    values = [round_float(v) for v in raw]  # canonical, as a cost column holds them
    marked = mark_float_list(values)
    assert (
        dumps(marked, prepared=True) == dumps(values) == json.dumps(values, separators=(",", ":"))
    )
    assert marked is values or any(type(v) is ReprFloat for v in marked)


def test_a_float_list_with_a_non_finite_float_raises_as_dumps_does() -> None:
    with pytest.raises(ValueError, match="non-finite float inf"):
        mark_float_list([1.0, math.inf])
