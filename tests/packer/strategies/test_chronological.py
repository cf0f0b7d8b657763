"""chronological: lossless-claw's default mode."""

from __future__ import annotations

from ..helpers import msg, reasons, run


def test_keeps_a_contiguous_newest_suffix_and_stops_at_the_first_misfit() -> None:
    items = [msg(f"m{i}", tokens=t, ordinal=i) for i, t in enumerate([1, 1, 9, 2, 2])]
    result = run(items, 6)
    # newest first: m4 (2), m3 (2) -> 4 used; m2 (9) does not fit -> stop; m1, m0 never tried
    assert result.selected_ids == ["m3", "m4"]
    r = reasons(result)
    assert r["m2"] == ["budget_tokens_exceeded"]
    assert r["m1"] == r["m0"] == ["chronological_stop"]
    assert r["m4"] == ["within_budget"]


def test_prompt_has_no_effect() -> None:
    items = [msg(f"m{i}", f"topic {i}", tokens=3, ordinal=i) for i in range(5)]
    assert run(items, 7, prompt="topic 0").selected_ids == run(items, 7).selected_ids


def test_empty_item_list_packs_nothing() -> None:
    result = run([], 10)
    assert result.selected_ids == []
    assert result.mode == "full-fit"
    assert result.to_dict()["bundle_text"] == ""
