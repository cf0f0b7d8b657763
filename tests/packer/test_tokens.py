"""Token counters: hand-computed values of lossless-claw's code-point rule."""

from __future__ import annotations

import math

import pytest

from packproof.packer.lcm import summary_envelope
from packproof.packer.tokens import chars4_tokens, count_tokens, lcm_tokens


def lcm_by_hand(text: str) -> int:
    """The REFERENCE.md rule written out per code point, with floats like the JS."""
    cjk = [
        (0x4E00, 0x9FFF),
        (0x3400, 0x4DBF),
        (0x20000, 0x2A6DF),
        (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F),
        (0x2B820, 0x2CEAF),
        (0x2CEB0, 0x2EBEF),
        (0x3000, 0x303F),
        (0x3040, 0x30FF),
        (0xAC00, 0xD7AF),
        (0xFF00, 0xFFEF),
    ]
    total = 0.0
    for ch in text:
        cp = ord(ch)
        if any(lo <= cp <= hi for lo, hi in cjk):
            total += 1.5
        elif cp > 0xFFFF:
            total += 2
        else:
            total += 0.25
    return math.ceil(total)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 1),  # 0.25 rounds up
        ("abcd", 1),
        ("abcde", 2),
        ("Fresh message 0", 4),  # 15 x 0.25 = 3.75
        ("你好", 3),  # 2 x 1.5
        ("你好世界", 6),
        ("😀", 2),  # astral, not CJK
        ("😀😀", 4),
        ("a😀你", 4),  # 0.25 + 2 + 1.5 = 3.75
        ("𠀀", 2),  # U+20000: CJK extension B counts 1.5 (checked before astral)
        ("한국어", 5),  # Hangul syllables 3 x 1.5 = 4.5
        ("カタカナ", 6),
        ("，", 2),  # U+FF0C full-width comma: 1.5
        ("café", 1),  # é is 0.25 like any BMP letter
        ("\U0002a6e0", 2),  # the gap between CJK extensions is plain astral
    ],
)
def test_lcm_tokens_hand_values(text: str, expected: int) -> None:
    assert lcm_tokens(text) == expected
    assert lcm_by_hand(text) == expected


def test_lcm_tokens_equal_the_code_point_rule_on_mixed_script_text() -> None:
    samples = [
        "The deploy failed: 数据库迁移 timed out after 30s 😬 — retry with `--force`?",
        "Привет, мир! こんにちは世界 안녕하세요 🇫🇷 naïve café ∑x² 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
        "ثبت نام کاربر 用户注册 ユーザー登録 hindī हिन्दी",
        "\U0002b740\U0002b81f\U0002b820\U0002ceaf\U0002ceb0\U0002ebef\U0002ebf0",
    ]
    for text in samples:
        assert lcm_tokens(text) == lcm_by_hand(text), text


def test_chars4_is_openclaw_mem_rule() -> None:
    assert chars4_tokens("") == 1
    assert chars4_tokens("abc") == 1
    assert chars4_tokens("abcde") == 2
    assert chars4_tokens("你好你好你") == 2  # code points, not bytes


def test_cl100k_counts_are_exact_and_accept_special_token_text() -> None:
    pytest.importorskip("tiktoken")
    assert count_tokens(["hello world"], "cl100k").tolist() == [2]
    # encode_ordinary: the text of a special token is counted, never refused
    assert count_tokens(["<|endoftext|>"], "cl100k")[0] > 1


def test_count_tokens_matches_single_counter() -> None:
    texts = ["hello", "你好", "", "😀 ok"]
    assert count_tokens(texts, "lcm").tolist() == [lcm_tokens(t) for t in texts]
    assert count_tokens(texts, "chars4").tolist() == [chars4_tokens(t) for t in texts]


def test_summary_envelope_is_lossless_claw_leaf_wrapper() -> None:
    """REFERENCE.md section 1: trust="untrusted", content XML-escaped, id as an attribute."""
    assert summary_envelope('s"1', "a < b & c > d") == (
        '<summary id="s&quot;1" kind="leaf" depth="0" descendant_count="0" trust="untrusted">\n'
        "  <content>\na &lt; b &amp; c &gt; d\n  </content>\n</summary>"
    )
