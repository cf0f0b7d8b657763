"""How lossless-claw renders an item: hand cases from REFERENCE.md section 1, and the
content blocks checked against JavaScript's own ``JSON.stringify`` where node runs."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from packproof.packer import pack
from packproof.packer.lcm import (
    content_block_tokens,
    content_blocks,
    priced_texts,
    scored_texts,
    summary_envelope,
)
from packproof.packer.model import ROLES, content_block_mask
from packproof.packer.tokens import lcm_tokens

from .helpers import msg


@pytest.mark.parametrize(
    ("text", "blocks"),
    [
        ("", '[{"type":"text","text":""}]'),
        ("plain", '[{"type":"text","text":"plain"}]'),
        ('say "hi"', '[{"type":"text","text":"say \\"hi\\""}]'),
        ("C:\\tmp", '[{"type":"text","text":"C:\\\\tmp"}]'),
        ("a\nb\tc\rd\be\ff", '[{"type":"text","text":"a\\nb\\tc\\rd\\be\\ff"}]'),
        ("nul\x00byte\x1f", '[{"type":"text","text":"nul\\u0000byte\\u001f"}]'),
        ("数据库 😀 naïve", '[{"type":"text","text":"数据库 😀 naïve"}]'),  # non-ASCII kept
        ("lone \ud800", '[{"type":"text","text":"lone \\ud800"}]'),  # ES2019 well-formed
        ("\x7f\u2028", '[{"type":"text","text":"\x7f\u2028"}]'),  # not escaped by JS
    ],
)
def test_content_blocks_are_json_stringify_of_a_text_block(text: str, blocks: str) -> None:
    assert content_blocks(text) == blocks


@given(
    st.lists(
        st.text(alphabet=st.sampled_from(list('ab "\\\n\x00\x7f数😀é\u2028')), max_size=8)
        | st.text(max_size=8),
        max_size=12,
    )
)
def test_content_block_tokens_count_the_rendered_blocks(texts: list[str]) -> None:
    """The length shortcut for plain ASCII equals counting the rendered string."""
    expected = [lcm_tokens(content_blocks(t)) for t in texts]
    assert content_block_tokens(texts).tolist() == expected


def test_an_empty_assistant_message_costs_7_tokens() -> None:
    """ceil(27 / 4): the empty text's content blocks, as REFERENCE.md says."""
    result = pack(
        {
            "items": [msg("a", "", "assistant"), msg("t", "", "tool"), msg("u", "", "user")],
            "budget_tokens": 100,
        }
    )
    assert result.items.tokens.tolist() == [7, 7, 0]


def test_chars4_and_cl100k_count_the_text_not_the_blocks() -> None:
    items = [msg("a", "", "assistant"), msg("s", "x", kind="summary")]
    result = pack({"items": items, "budget_tokens": 100, "token_counter": "chars4"})
    envelope = len(summary_envelope("s", "x"))
    assert result.items.tokens.tolist() == [1, (envelope + 3) // 4]


def test_priced_and_scored_texts_by_role_and_kind() -> None:
    ids = ["u", "a", "t", "sy", "s", "m"]
    texts = ["hi", "hi", "hi", "hi", "a&b", "hi"]
    roles = np.array([ROLES.index(r) for r in ["user", "assistant", "tool", "system"] * 2][:6])
    kinds = np.array([0, 0, 0, 0, 1, 2])  # message x4, summary, memory (role assistant)
    roles[4] = ROLES.index("assistant")  # a summary is an envelope whatever its role
    mask = content_block_mask(roles, kinds)
    assert mask.tolist() == [False, True, True, False, False, True]
    blocks = content_blocks("hi")
    assert priced_texts(ids, texts, kinds == 1, mask) == [
        "hi",
        blocks,
        blocks,
        "hi",
        summary_envelope("s", "a&b"),
        blocks,
    ]
    assert priced_texts(ids, texts, kinds == 1, None)[1] == "hi"  # chars4, cl100k
    assert scored_texts(texts, mask) == ["hi", blocks, blocks, "hi", "a&b", blocks]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_content_blocks_equal_javascripts_json_stringify() -> None:
    """An independent reference: node's JSON.stringify on 2,000 random strings drawn
    from quotes, backslashes, every C0 control, DEL, line separators, CJK, emoji,
    combining marks and lone surrogates."""
    rng = random.Random(20261123)
    alphabet = (
        [chr(c) for c in range(0x20)]
        + list('"\\/\x7f\u2028\u2029 aZ9<>&')
        + [
            "数",
            "é",
            "e\u0301",
            "😀",
            "\ud800",
            "\udfff",
        ]
    )
    drawn = ["".join(rng.choices(alphabet, k=rng.randint(0, 12))) for _ in range(2000)]
    # As a request's JSON text decodes them: an adjacent high and low surrogate form
    # one code point (in Python's json as in JavaScript), lone ones stay lone.
    texts = [json.loads(json.dumps(t)) for t in drawn]
    script = (
        "const lines = require('fs').readFileSync(0, 'utf8').split('\\n').filter(Boolean);"
        "for (const l of lines) console.log(JSON.stringify("
        "JSON.stringify([{type: 'text', text: JSON.parse(l)}])));"
    )
    out = subprocess.run(
        ["node", "-e", script],
        input="\n".join(json.dumps(t) for t in texts) + "\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")[:-1]  # not splitlines(): U+2028 stays raw in JSON.stringify
    assert len(out) == len(texts)
    for text, line in zip(texts, out, strict=True):
        assert content_blocks(text) == json.loads(line), repr(text)
