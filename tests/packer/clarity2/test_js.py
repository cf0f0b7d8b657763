"""JavaScript string semantics the plugin's code relies on."""

from __future__ import annotations

from packproof.packer.clarity2 import js
from packproof.packer.clarity2.extract import extract


def test_length_and_slice_count_utf16_units() -> None:
    assert js.length("a😀") == 3
    assert js.slice_units("ab😀c", 3) == "ab\ud83d"


def test_trim_is_javascripts() -> None:
    assert js.trim("\ufeff\u3000x \u00a0") == "x"
    assert js.trim("\x1cx\x85") == "\x1cx\x85"


def test_a_decision_id_turns_each_utf16_unit_outside_a_z_0_9_into_an_underscore() -> None:
    assert [e.id for e in extract("so we will ship 😀 now, ok", 1)] == ["decision:ship____now"]


def test_the_length_test_counts_utf16_units() -> None:
    # 9 code points but 11 units: long enough for the plugin
    assert [e.id for e in extract("😀😀 Alice!", 1)] == ["person:alice"]
    assert extract("😀 Alice!", 1) == []  # 9 units
