"""Cache-aware packing, issue 28: a recall block that is not carried into the
next stable part (``carry_recall=false``), its refresh policies, the suggested
breakpoints, and bad input as one line. Hand-computed cases over six 10-token
items, a0..a4 ("note zebra 0", "note lunch 1", ...) and the user's "zebra?" (a5,
the fresh tail); under the prompt "lunch" bm25 scores only a1."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from packproof.packer import InputError
from packproof.packer.cacheaware import CacheAware, build_cache_aware, check_option
from packproof.packer.packspec import parse_pack_spec
from packproof.packer.pipeline import pack
from packproof.packer.request import parse_request, request_to_json
from packproof.packer.schema import validate

TEXTS = ["note zebra 0", "note lunch 1", "note deploy 2", "note css 3", "note database 4"]
# The previous step: stable part [a2, a3] with the block [a0] after it, 30 s ago.
PREVIOUS = {"record_refs": ["a2", "a3"], "recall_refs": ["a0"], "recall_age": 0, "elapsed_s": 30}


def _items() -> list[dict[str, Any]]:
    items = [
        {"id": f"a{i}", "role": "assistant", "tokens": 10, "text": t} for i, t in enumerate(TEXTS)
    ]
    return [*items, {"id": "a5", "role": "user", "tokens": 10, "text": "zebra?"}]


def _request(
    options: dict[str, Any] | None = None, previous: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    """Budget 60: recall room R = 12, high-water H = 48, low-water L = 30."""
    out = {
        "items": _items(),
        "budget_tokens": 60,
        "prompt": "lunch",
        "fresh_tail": {"count": 1},
        "strategy": "bm25",
        "cache_aware": {
            "low_water": 0.5,
            "recall_share": 0.2,
            "carry_recall": False,
            **(options or {}),
        },
        **extra,
    }
    if previous is not None:
        out["previous_pack"] = previous
    return out


def _packed(request: dict[str, Any]) -> tuple[list[str], Any]:
    result = pack(request)
    assert result.cache is not None
    return [result.items.ids[i] for i in result.order], result.cache


# -- carry_recall -------------------------------------------------------------------


def test_an_uncarried_block_stays_out_of_the_next_stable_part() -> None:
    # Carried, the previous pack [a2, a3, a0] and what arrived (a4, a5) need 50 > 48
    # tokens: compacted. Given apart, the stable part [a2, a3, a4, a5] (40) appends,
    # and the block after it is re-decided: bm25's best for "lunch", a1.
    carried = {"record_refs": ["a2", "a3", "a0"], "elapsed_s": 30}
    order, cache = _packed(_request({"carry_recall": True}, carried))
    assert cache.action == "compact"
    order, cache = _packed(_request({}, PREVIOUS))
    assert cache.action == "append"
    assert order == ["a2", "a3", "a4", "a5", "a1"]
    assert (cache.recall_refreshed, cache.recall_age) == (True, 0)
    assert cache.kept_prefix_items == 2  # [a2, a3] of the previous [a2, a3, a0]
    assert cache.breakpoints == (4, 5)


def test_the_stable_prefix_stays_byte_identical_across_steps() -> None:
    """Played forward as the eval runner does (the stable part as record_refs,
    the block apart): whenever a step appends, the previous stable part's text is
    a byte prefix of this pack's, and the block never joins the stable part, so
    the chain compacts less often than when it is carried."""
    words = ["zebra", "lunch", "deploy", "css", "database", "paddock", "noon", "branch"]
    items = [
        {"id": f"m{i}", "role": "user", "tokens": 10, "text": f"{words[i % 8]} {words[i * 3 % 8]}"}
        for i in range(24)
    ]

    def play(carry: bool) -> list[str]:
        options = {"low_water": 0.4, "recall_share": 0.3, "carry_recall": carry}
        previous: dict[str, Any] | None = None
        stable_text, actions = "", []
        for k in range(1, len(items) + 1):
            request = {
                "items": items[:k],
                "budget_tokens": 120,
                "prompt": items[k - 1]["text"],
                "fresh_tail": {"count": 1},
                "strategy": "bm25",
                "cache_aware": options,
            }
            if previous is not None:
                request["previous_pack"] = previous
            result = pack(request)
            assert result.cache is not None and result.placement is not None
            text = result.to_dict()["bundle_text"]
            if result.cache.action == "append" and not carry:
                assert text.startswith(stable_text)
            actions.append(result.cache.action)
            order = [result.items.ids[i] for i in result.order]
            stable = [result.items.ids[i] for i in result.order if result.placement[i] == 1]
            recall = [result.items.ids[i] for i in result.order if result.placement[i] == 2]
            assert order == stable + recall
            if carry:
                previous = {"record_refs": order, "elapsed_s": 10}
            else:
                previous = {"record_refs": stable, "recall_refs": recall, "elapsed_s": 10}
                lines = text.split("\n")[: len(stable)]
                stable_text = "\n".join(lines)
        return actions

    uncarried, carried = play(False), play(True)
    assert uncarried.count("compact") < carried.count("compact")


def test_defaults_written_out_pack_the_same_bytes() -> None:
    plain = {"items": _items(), "budget_tokens": 60, "prompt": "lunch", "strategy": "bm25"}
    previous = {"record_refs": ["a2", "a3"], "elapsed_s": 30}
    short = {**plain, "cache_aware": {"low_water": 0.5}, "previous_pack": previous}
    spelled = {
        **short,
        "cache_aware": {
            "low_water": 0.5,
            "carry_recall": True,
            "recall_refresh": "each",
            "recall_every": 20,
            "recall_gate": 1,
        },
    }
    assert pack(spelled).to_dict() == pack(short).to_dict()
    trace = pack(short).to_dict()["trace"]["cache_aware"]
    assert trace["breakpoints"] == [4] and "carry_recall" not in trace["options"]
    assert "recall_refs" not in request_to_json(parse_request(short))["previous_pack"]


# -- refresh policies ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "previous", "block", "refreshed", "age"),
    [
        # each: recomputed at every step, whatever the previous block
        ({"recall_refresh": "each"}, PREVIOUS, ["a1"], True, 0),
        # every 3: a block recomputed 1 step before the previous pack has served 2
        (
            {"recall_refresh": "every", "recall_every": 3},
            {**PREVIOUS, "recall_age": 1},
            ["a0"],
            False,
            2,
        ),
        # ... and at age 2 it has served 3: recomputed
        (
            {"recall_refresh": "every", "recall_every": 3},
            {**PREVIOUS, "recall_age": 2},
            ["a1"],
            True,
            0,
        ),
        # every 1 is each
        ({"recall_refresh": "every", "recall_every": 1}, PREVIOUS, ["a1"], True, 0),
        # compaction: the stable part appended, so the block is kept
        ({"recall_refresh": "compaction"}, PREVIOUS, ["a0"], False, 1),
        # gate: a1's score 0.63 reaches 0.5, not 1
        ({"recall_refresh": "gate", "recall_gate": 0.5}, PREVIOUS, ["a1"], True, 0),
        ({"recall_refresh": "gate", "recall_gate": 1}, PREVIOUS, ["a0"], False, 1),
        # any policy: no previous block, or a cold cache, recomputes
        ({"recall_refresh": "compaction"}, None, ["a3"], True, 0),
        ({"recall_refresh": "compaction"}, {**PREVIOUS, "elapsed_s": 300}, ["a3"], True, 0),
        (
            {"recall_refresh": "every", "recall_every": 5},
            {"record_refs": ["a2", "a3"], "elapsed_s": 30},
            ["a1"],
            True,
            0,
        ),
    ],
    ids=[
        "each",
        "every-3-kept",
        "every-3-recomputed",
        "every-1-is-each",
        "compaction-kept-on-append",
        "gate-cleared",
        "gate-not-cleared",
        "first-pack",
        "cold-cache",
        "no-previous-block",
    ],
)
def test_refresh_policy(
    options: dict[str, Any],
    previous: dict[str, Any] | None,
    block: list[str],
    refreshed: bool,
    age: int,
) -> None:
    result = pack(_request(options, previous))
    cache = result.cache
    assert cache is not None and result.placement is not None
    assert [result.items.ids[i] for i in result.order if result.placement[i] == 2] == block
    assert (cache.recall_refreshed, cache.recall_age) == (refreshed, age)
    section = result.to_dict()["trace"]["cache_aware"]
    assert (section["recall_refreshed"], section["recall_age"]) == (refreshed, age)
    assert section["recall_why"].startswith("recomputed" if refreshed else "kept")


def test_compaction_recomputes_the_block() -> None:
    # budget 70, share 0.3: H = 49; [a2, a3, a4, a5] + a0 anchored needs 50: compacted
    items = _items()
    items[0]["anchored"] = True
    _, cache = _packed(
        _request(
            {"recall_refresh": "compaction", "recall_share": 0.3},
            PREVIOUS,
            items=items,
            budget_tokens=70,
        )
    )
    assert cache.action == "compact" and cache.recall_refreshed
    assert cache.recall_why == "recomputed with the compacted stable part"


def test_a_gate_is_never_cleared_without_a_match() -> None:
    order, cache = _packed(
        _request({"recall_refresh": "gate", "recall_gate": 0.1}, PREVIOUS, prompt="walrus")
    )
    assert order[-1] == "a0" and not cache.recall_refreshed
    assert "best score 0 below recall_gate 0.1" in cache.recall_why


@pytest.mark.parametrize(
    ("share", "refs", "block"),
    [
        (0.3, ["a0", "a1"], ["a0", "a1"]),  # room 21: both
        (0.2, ["a0", "a1"], ["a0"]),  # room 14: its head, a0
        (0.2, ["a1", "a0"], ["a1"]),  # the head in the block's own order
    ],
)
def test_a_kept_block_is_trimmed_to_its_head_that_fits(
    share: float, refs: list[str], block: list[str]
) -> None:
    previous = {**PREVIOUS, "recall_refs": refs}
    order, cache = _packed(
        _request(
            {"recall_refresh": "compaction", "recall_share": share}, previous, budget_tokens=70
        )
    )
    assert order == ["a2", "a3", "a4", "a5", *block]
    assert not cache.recall_refreshed


def test_a_kept_block_loses_what_the_stable_part_took_or_trust_excluded() -> None:
    previous = {**PREVIOUS, "recall_refs": ["a0", "a1"]}
    options = {"recall_refresh": "compaction", "recall_share": 0.3}
    # a0 now anchored: appended to the stable part (ordinal order), so not in the block
    items = _items()
    items[0]["anchored"] = True
    order, _ = _packed(_request(options, previous, items=items, budget_tokens=80))
    assert order == ["a2", "a3", "a0", "a4", "a5", "a1"]
    # a0 now quarantined: out of the pack
    items = _items()
    items[0]["trust"] = "quarantined"
    order, _ = _packed(
        _request(
            options, previous, items=items, budget_tokens=70, trust_policy="exclude_quarantined"
        )
    )
    assert order == ["a2", "a3", "a4", "a5", "a1"]


def test_a_kept_block_placed_first_stays_the_prefix() -> None:
    order, cache = _packed(
        _request({"recall_refresh": "compaction", "placement": "first"}, PREVIOUS)
    )
    assert order == ["a0", "a2", "a3", "a4", "a5"]
    assert cache.kept_prefix_items == 3  # the previous [a0, a2, a3] whole
    assert cache.breakpoints == (1, 5)


# -- breakpoints ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "breakpoints"),
    [
        ({}, [4, 5]),  # after the stable part [a2, a3, a4, a5], and at the end
        ({"placement": "first"}, [1, 5]),  # after the recall block [a1], and at the end
        ({"recall_share": 0}, [4]),  # no block: the end alone
    ],
)
def test_the_trace_suggests_breakpoints(options: dict[str, Any], breakpoints: list[int]) -> None:
    out = pack(_request(options, PREVIOUS)).to_dict()
    assert validate("pack", out) == [] and validate("trace", out["trace"]) == []
    section = out["trace"]["cache_aware"]
    assert section["breakpoints"] == breakpoints
    assert section["previous_pack"] == {
        "items": 2,
        "elapsed_s": 30.0,
        "recall_items": 1,
        "recall_age": 0,
    }
    assert section["options"]["carry_recall"] is False


def test_explain_names_the_block_and_the_breakpoints() -> None:
    from packproof.packer.explain import explain_table

    text = explain_table(pack(_request({"recall_refresh": "compaction"}, PREVIOUS)))
    assert "recall block: kept: the stable part was not re-selected (append)" in text
    assert "breakpoints after items 4, 5" in text


# -- the request, the spec string, tune's values ---------------------------------------


def test_the_request_round_trips_and_the_schema_agrees() -> None:
    request = _request({"recall_refresh": "every", "recall_every": 3}, PREVIOUS)
    assert validate("request", request) == []
    normal = request_to_json(parse_request(request))
    assert normal["previous_pack"] == {**PREVIOUS, "elapsed_s": 30.0}
    assert normal["cache_aware"]["recall_every"] == 3
    assert pack(normal).to_dict() == pack(request).to_dict()


def test_spec_strings_carry_every_option() -> None:
    spec = parse_pack_spec("bm25+cache(carry_recall=false,recall_refresh=every,recall_every=20)")
    assert spec.cache == CacheAware(carry_recall=False, recall_refresh="every")
    assert spec.spec_string().endswith(
        "+cache(carry_recall=false,low_water=0.6,placement=after,recall_depth=20,recall_every=20,"
        "recall_gate=1,recall_refresh=every,recall_share=0,ttl_s=300)"
    )
    assert parse_pack_spec(spec.spec_string()) == spec
    assert spec.label() == "bm25+cache(carry_recall=false,recall_refresh=every)"
    gate = parse_pack_spec("bm25+cache(carry_recall=false,recall_refresh=gate,recall_gate=2.5)")
    assert gate.label() == "bm25+cache(carry_recall=false,recall_gate=2.5,recall_refresh=gate)"


def test_tune_values_are_checked_as_the_request_checks_them() -> None:
    assert check_option("carry_recall", False, "") is False
    assert check_option("recall_refresh", "gate", "") == "gate"
    assert check_option("recall_every", 10.0, "") == 10
    assert build_cache_aware({"carry_recall": False, "recall_refresh": "compaction"}).extended


BAD = [
    ({"carry_recall": "no"}, None, "/cache_aware/carry_recall", "a boolean"),
    ({"carry_recall": 0}, None, "/cache_aware/carry_recall", "a boolean"),
    (
        {"recall_refresh": "sometimes"},
        None,
        "/cache_aware/recall_refresh",
        "each|every|compaction|gate",
    ),
    (
        {"carry_recall": True, "recall_refresh": "every"},
        None,
        "/cache_aware/recall_refresh",
        "carry_recall=false",
    ),
    (
        {"recall_refresh": "every", "recall_every": 0},
        None,
        "/cache_aware/recall_every",
        "integer >= 1",
    ),
    (
        {"recall_refresh": "every", "recall_every": 2.5},
        None,
        "/cache_aware/recall_every",
        "integer >= 1",
    ),
    ({"recall_every": 5}, None, "/cache_aware/recall_every", "only read by recall_refresh=every"),
    (
        {"recall_refresh": "gate", "recall_gate": "high"},
        None,
        "/cache_aware/recall_gate",
        "finite number",
    ),
    (
        {"recall_refresh": "gate", "recall_gate": math.inf},
        None,
        "/cache_aware/recall_gate",
        "finite number",
    ),
    ({"recall_gate": 2}, None, "/cache_aware/recall_gate", "only read by recall_refresh=gate"),
    ({"carry_recall": True}, PREVIOUS, "/previous_pack/recall_refs", "carry_recall false"),
    ({}, {**PREVIOUS, "recall_refs": "a0"}, "/previous_pack/recall_refs", "array"),
    ({}, {**PREVIOUS, "recall_refs": ["zz"]}, "/previous_pack/recall_refs/0", "unknown id"),
    ({}, {**PREVIOUS, "recall_refs": ["a0", "a0"]}, "/previous_pack/recall_refs/1", "repeated id"),
    (
        {},
        {**PREVIOUS, "recall_refs": ["a3"]},
        "/previous_pack/recall_refs/0",
        "/previous_pack/record_refs/1",
    ),
    ({}, {**PREVIOUS, "recall_age": -1}, "/previous_pack/recall_age", ">= 0"),
    ({}, {**PREVIOUS, "recall_age": 1.5}, "/previous_pack/recall_age", "an integer"),
    (
        {},
        {"record_refs": ["a2"], "recall_age": 1},
        "/previous_pack/recall_age",
        "give recall_refs too",
    ),
    (
        {"recall_refresh": "every"},
        {"record_refs": ["a2"], "recall_refs": ["a0"]},
        "/previous_pack",
        "missing field 'recall_age'",
    ),
]


@pytest.mark.parametrize(("options", "previous", "where", "text"), BAD, ids=[b[3] for b in BAD])
def test_bad_input_names_its_pointer(
    options: dict[str, Any], previous: dict[str, Any] | None, where: str, text: str
) -> None:
    with pytest.raises(InputError) as err:
        pack(_request(options, previous))
    assert err.value.where == where
    assert text in str(err.value)
    assert len(str(err.value).splitlines()) == 1


def test_the_schema_refuses_what_it_can_see() -> None:
    # (uniqueness across the two lists and the pairing of options are checked in code)
    assert validate("request", _request({"carry_recall": "no"}))
    assert validate("request", _request({"recall_refresh": "sometimes"}))
    assert validate("request", _request({}, {"record_refs": ["a2"], "recall_age": 1}))
    assert validate("request", _request({}, {**PREVIOUS, "recall_age": -1}))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bm25+cache(carry_recall=maybe)", "a boolean"),
        ("bm25+cache(recall_refresh=every)", "carry_recall=false"),
        ("bm25+cache(carry_recall=false,recall_every=5)", "only read by recall_refresh=every"),
    ],
)
def test_bad_spec_strings(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_pack_spec(text)


def test_cli_bad_recall_refs_is_one_line_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_request({}, {**PREVIOUS, "recall_refs": ["a2"]})))
    out = subprocess.run(
        [sys.executable, "-m", "packproof", "pack", str(path)], capture_output=True, text=True
    )
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "/previous_pack/recall_refs/0" in lines[0], lines
