"""Cache-aware packing: the stable part (append, compact, cold, first), the
recall block and its placement, the trace, the spec strings, and bad input as one
line. Hand-computed cases; the golden scenarios (scenarios/cache-aware.yaml) pin
the reasons and pack orders of every strategy."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from packproof.packer import InputError
from packproof.packer.packspec import parse_pack_spec
from packproof.packer.pipeline import pack
from packproof.packer.schema import validate

WORDS = ["zebra", "lunch", "deploy", "css", "database", "paddock"]


def _items(n: int, tokens: int = 10) -> list[dict[str, Any]]:
    items = [
        {"id": f"a{i}", "role": "assistant", "tokens": tokens, "text": f"note {WORDS[i % 6]} {i}"}
        for i in range(n - 1)
    ]
    return [*items, {"id": f"a{n - 1}", "role": "user", "tokens": tokens, "text": "zebra?"}]


def _request(n: int = 6, **extra: Any) -> dict[str, Any]:
    return {
        "items": _items(n),
        "budget_tokens": 60,
        "prompt": "zebra",
        "fresh_tail": {"count": 1},
        "strategy": "bm25",
        "cache_aware": {"low_water": 0.5},
        **extra,
    }


def _order(result: Any) -> list[str]:
    return [result.items.ids[i] for i in result.order]


def test_without_options_the_pack_is_unchanged() -> None:
    plain = _request()
    del plain["cache_aware"]
    result = pack(plain)
    assert result.cache is None and result.pack_order is None
    trace = result.to_dict()["trace"]
    assert "cache_aware" not in trace
    assert all("placement" not in c and "position" not in c for c in trace["candidates"])


def test_append_keeps_the_previous_pack_as_prefix_and_traces_it() -> None:
    result = pack(_request(previous_pack={"record_refs": ["a1", "a3"], "elapsed_s": 30}))
    assert _order(result) == ["a1", "a3", "a4", "a5"]
    out = result.to_dict()
    assert validate("pack", out) == [] and validate("trace", out["trace"]) == []
    section = out["trace"]["cache_aware"]
    assert section["action"] == "append"
    assert section["kept_prefix_items"] == 2
    assert (section["high_water_tokens"], section["low_water_tokens"]) == (60, 30)
    assert section["stable_tokens"] == 40 and section["recall_tokens"] == 0
    assert section["previous_pack"] == {"items": 2, "elapsed_s": 30.0}
    by_id = {c["id"]: c for c in out["trace"]["candidates"]}
    assert by_id["a4"]["placement"] == "stable" and by_id["a4"]["position"] == 2
    assert by_id["a0"]["placement"] is None and by_id["a0"]["position"] is None
    assert [it["recordRef"] for it in out["items"]] == ["a1", "a3", "a4", "a5"]
    assert out["bundle_text"].splitlines()[0].startswith("- [a1]")


def test_overflow_compacts_down_to_the_low_water_mark() -> None:
    # [a0..a3] + a4, a5 = 60 tokens > high-water 50 -> re-select to 0.5 x 50 = 25:
    # the tail (10) and one 10-token item (the best match, a0)
    request = _request(
        budget_tokens=50, previous_pack={"record_refs": ["a0", "a1", "a2", "a3"], "elapsed_s": 5}
    )
    result = pack(request)
    assert result.cache is not None and result.cache.action == "compact"
    assert "60 tokens > high-water 50" in result.cache.why
    assert _order(result) == ["a0", "a5"]
    assert result.cache.kept_prefix_items == 1


def test_the_ttl_boundary_is_cold_at_exactly_ttl() -> None:
    # the cache model: an entry written at t serves t + ttl - 1, not t + ttl
    warm = pack(_request(previous_pack={"record_refs": ["a1"], "elapsed_s": 299.5}))
    cold = pack(_request(previous_pack={"record_refs": ["a1"], "elapsed_s": 300}))
    never = pack(
        _request(
            cache_aware={"low_water": 0.5, "ttl_s": 0},
            previous_pack={"record_refs": ["a1"], "elapsed_s": 1e9},
        )
    )
    unknown = pack(_request(previous_pack={"record_refs": ["a1"]}))
    assert warm.cache is not None and warm.cache.action == "append"
    assert cold.cache is not None and cold.cache.action == "cold"
    assert never.cache is not None and never.cache.action == "append"
    assert unknown.cache is not None and unknown.cache.action == "append"


def test_recall_block_after_or_first() -> None:
    previous = {"record_refs": ["a1", "a3"], "elapsed_s": 30}
    after = pack(
        _request(cache_aware={"low_water": 0.5, "recall_share": 0.2}, previous_pack=previous)
    )
    first = pack(
        _request(
            cache_aware={"low_water": 0.5, "recall_share": 0.2, "placement": "first"},
            previous_pack=previous,
        )
    )
    assert _order(after) == ["a1", "a3", "a4", "a5", "a0"]
    assert _order(first) == ["a0", "a1", "a3", "a4", "a5"]
    assert after.cache is not None and after.cache.recall_tokens == 10
    assert after.cache.kept_prefix_items == 2 and first.cache is not None
    assert first.cache.kept_prefix_items == 0


def test_recall_depth_limits_the_block_to_the_first_ranked() -> None:
    # depth 1: only bm25's top candidate (a0) may enter, however much room is left
    result = pack(
        _request(
            cache_aware={"low_water": 0.4, "recall_share": 0.5, "recall_depth": 1},
            previous_pack={"record_refs": ["a3"], "elapsed_s": 1},
        )
    )
    assert result.cache is not None
    assert [result.items.ids[i] for i in result.order if result.placement[i] == 2] == ["a0"]


@pytest.mark.parametrize(
    ("extra", "where", "text"),
    [
        ({"previous_pack": {"record_refs": ["zz"]}}, "/previous_pack/record_refs/0", "unknown id"),
        (
            {"previous_pack": {"record_refs": ["a1", "a2", "a1"]}},
            "/previous_pack/record_refs/2",
            "repeated id 'a1'",
        ),
        (
            {"previous_pack": {"record_refs": [], "elapsed_s": -1}},
            "/previous_pack/elapsed_s",
            ">= 0",
        ),
        (
            {"previous_pack": {"record_refs": [], "elapsed_s": math.nan}},
            "/previous_pack/elapsed_s",
            "finite",
        ),
        ({"previous_pack": {"elapsed_s": 1}}, "/previous_pack", "record_refs"),
        ({"previous_pack": {"record_refs": "a1"}}, "/previous_pack/record_refs", "array"),
        ({"cache_aware": {"low_water": 0}}, "/cache_aware/low_water", "> 0"),
        ({"cache_aware": {"recall_share": 1}}, "/cache_aware/recall_share", "< 1"),
        ({"cache_aware": {"low_water": 0.8, "recall_share": 0.3}}, "/cache_aware", "exceeds 1"),
        ({"cache_aware": {"placement": "middle"}}, "/cache_aware/placement", "after|first"),
        ({"cache_aware": {"recall_depth": 0.5}}, "/cache_aware/recall_depth", "integer >= 1"),
        ({"cache_aware": {"ttl": 5}}, "/cache_aware/ttl", "unknown"),
    ],
)
def test_bad_cache_aware_input_names_its_pointer(
    extra: dict[str, Any], where: str, text: str
) -> None:
    with pytest.raises(InputError) as err:
        pack(_request(**extra))
    assert err.value.where == where
    assert text in str(err.value)


def test_a_previous_pack_without_options_is_refused() -> None:
    request = _request(previous_pack={"record_refs": ["a1"]})
    del request["cache_aware"]
    with pytest.raises(InputError, match="give cache_aware too"):
        pack(request)


def test_cli_bad_previous_pack_is_one_line_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_request(previous_pack={"record_refs": ["a1", "a1"]})))
    out = subprocess.run(
        [sys.executable, "-m", "packproof", "pack", str(path)], capture_output=True, text=True
    )
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "/previous_pack/record_refs/1" in lines[0], lines


def test_cli_strategy_flag_takes_a_cache_spec(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    request = _request(previous_pack={"record_refs": ["a1", "a3"], "elapsed_s": 30})
    del request["cache_aware"], request["strategy"]
    request["previous_pack"] = {"record_refs": ["a1", "a3"], "elapsed_s": 30}
    path.write_text(json.dumps(request))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "packproof",
            "pack",
            str(path),
            "--strategy",
            "bm25+cache(low_water=0.5)",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    packed = json.loads(out.stdout)
    assert [it["recordRef"] for it in packed["items"]] == ["a1", "a3", "a4", "a5"]


def test_spec_strings_are_canonical_and_round_trip() -> None:
    spec = parse_pack_spec("bm25(k1=1.5)+cache(recall_share=0.3,low_water=0.5)")
    text = spec.spec_string()
    assert text == (
        "bm25(b=0.75,k1=1.5,stem=none,stopwords=none)"
        "+cache(carry_recall=true,low_water=0.5,placement=after,recall_depth=20,recall_every=20,"
        "recall_gate=1,recall_refresh=each,recall_share=0.3,ttl_s=300)"
    )
    assert parse_pack_spec(text) == spec
    assert spec.label() == "bm25(k1=1.5)+cache(low_water=0.5,recall_share=0.3)"
    assert parse_pack_spec("chronological+cache").label() == "chronological+cache"
    assert parse_pack_spec("bm25").spec_string() == "bm25(b=0.75,k1=1.2,stem=none,stopwords=none)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bm25+tail(x=1)", "unknown spec part"),
        ("bm25+cache+cache", "more than one"),
        ("bm25+cache(low=1)", "unknown cache-aware option"),
        ("bm25+cache(placement=up)", "unknown value"),
    ],
)
def test_bad_spec_strings(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_pack_spec(text)


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 40), min_size=2, max_size=30),
    budget=st.integers(20, 200),
    low=st.sampled_from([0.3, 0.5, 0.8]),
    share=st.sampled_from([0.0, 0.1, 0.2]),
    placement=st.sampled_from(["after", "first"]),
    gaps=st.lists(st.sampled_from([1, 30, 400]), min_size=30, max_size=30),
    strategy=st.sampled_from(["chronological", "bm25", "hybrid"]),
)
# a 17-token tail above the 16-token high-water mark: the recall block gets only
# what is left of the budget (found by this test)
@example([1, 1, 1, 1, 17], 20, 0.3, 0.2, "after", [1] * 30, "chronological")
def test_a_growing_conversation_breaks_its_prefix_only_when_it_must(
    sizes: list[int],
    budget: int,
    low: float,
    share: float,
    placement: str,
    gaps: list[int],
    strategy: str,
) -> None:
    """Played forward item by item: every pack stays within the budget (unless
    the tail alone exceeds it), keeps the tail, and starts with the previous pack
    whenever it appended with the recall block after the stable part."""
    items = [
        {"id": f"m{i}", "role": "user", "tokens": n, "text": f"{WORDS[i % 6]} {WORDS[(i * 7) % 6]}"}
        for i, n in enumerate(sizes)
    ]
    options = {"low_water": low, "recall_share": share, "placement": placement, "ttl_s": 300}
    previous: list[str] | None = None
    for k in range(1, len(items) + 1):
        request: dict[str, Any] = {
            "items": items[:k],
            "budget_tokens": budget,
            "prompt": items[k - 1]["text"],
            "fresh_tail": {"count": 1},
            "strategy": strategy,
            "cache_aware": options,
        }
        if previous is not None:
            request["previous_pack"] = {"record_refs": previous, "elapsed_s": gaps[k - 1]}
        result = pack(request)
        order = _order(result)
        assert sorted(order) == sorted(result.selected_ids)
        assert f"m{k - 1}" in order  # the tail
        if not result.over_budget:
            assert result.used_tokens <= budget
        assert result.cache is not None
        if previous is not None and result.cache.action == "append" and placement == "after":
            assert order[: len(previous)] == previous
        if result.cache.action == "append":
            assert gaps[k - 1] < 300
        previous = order
