"""How lossless-claw renders an item: the text it prices and the text it scores.

Read from lossless-claw main at commit 4214b48 (2026-08-21; REFERENCE.md section 1,
"How the current code renders, prices and scores an item") and checked against
what its real ``ContextAssembler`` selected (``../shared/data/lossless-claw``):

- User and system messages carry plain string content: priced and scored as text.
- Assistant and tool messages carry a content array of blocks, a text message
  being ``[{"type":"text","text":TEXT}]``. The estimate runs over
  ``JSON.stringify`` of that array, so an empty assistant message costs 7 tokens,
  and BM25-lite scores the same string, so ``type`` and ``text`` are terms of every
  assistant and tool message (and JSON escapes such as ``\\n`` join letters).
  A tool result with no call id is rendered as assistant content; packproof items
  carry no call ids.
- A summary is priced in its leaf-summary XML envelope (:func:`summary_envelope`)
  and scored on its raw content.

packproof's ``memory`` items have no counterpart in lossless-claw; they are
rendered as a message of their role.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Final

import numpy as np

from .tokens import lcm_tokens

__all__ = [
    "content_block_tokens",
    "content_blocks",
    "priced_texts",
    "scored_texts",
    "summary_envelope",
    "xml_escape",
]

_BLOCK_OPEN: Final = '[{"type":"text","text":"'
_BLOCK_CLOSE: Final = '"}]'
# Characters JSON.stringify escapes: quote, backslash, C0 controls, lone surrogates.
_NEEDS_ESCAPE: Final = re.compile('[\x00-\x1f"\\\\\ud800-\udfff]')
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_NON_ASCII: Final = re.compile("[^\x00-\x7f]")


def content_blocks(text: str) -> str:
    """``JSON.stringify([{type: "text", text}])``: compact, non-ASCII kept as is,
    only quotes, backslashes and control characters escaped (short forms for
    ``\\b \\t \\n \\f \\r``, else ``\\u00xx``), lone surrogates as ``\\udxxx``."""
    if not _NEEDS_ESCAPE.search(text):
        return _BLOCK_OPEN + text + _BLOCK_CLOSE
    body = json.dumps(text, ensure_ascii=False)[1:-1]  # the same escapes as JS
    if _LONE_SURROGATE.search(body):  # Python keeps them raw; JS (ES2019) escapes them
        body = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", body)
    return _BLOCK_OPEN + body + _BLOCK_CLOSE


_BLOCK_CHARS: Final = len(_BLOCK_OPEN) + len(_BLOCK_CLOSE)  # 26 ASCII characters


def content_block_tokens(texts: Sequence[str]) -> np.ndarray:
    """``lcm_tokens(content_blocks(t))`` for each text. A text that is ASCII and needs
    no escape renders as itself plus 26 ASCII characters, so its count is
    ``ceil((len + 26) / 4)`` and no string is built; one scan of the joined texts
    finds the others, which are rendered and counted one by one."""
    n = len(texts)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    out: np.ndarray = (lengths + _BLOCK_CHARS + 3) // 4
    joined = " ".join(texts)  # a space needs no escape, so matches fall inside texts
    special = {m.start() for m in _NEEDS_ESCAPE.finditer(joined)}
    if not joined.isascii():
        special.update(m.start() for m in _NON_ASCII.finditer(joined))
    if special:
        starts = np.cumsum(lengths + 1) - (lengths + 1)
        hit = np.unique(np.searchsorted(starts, sorted(special), side="right") - 1)
        for i in hit.tolist():
            out[i] = lcm_tokens(content_blocks(texts[i]))
    return out


def xml_escape(text: str, *, attribute: bool = False) -> str:
    """``&`` ``<`` ``>`` as entities; in an attribute also ``"``."""
    out = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return out.replace('"', "&quot;") if attribute else out


def summary_envelope(item_id: str, text: str) -> str:
    """The XML a leaf summary without time bounds occupies in the prompt
    (``formatSummaryContent`` since issues #71/#137 and #801: ``trust="untrusted"``,
    content XML-escaped, the id escaped as an attribute)."""
    return (
        f'<summary id="{xml_escape(item_id, attribute=True)}" kind="leaf" depth="0" '
        f'descendant_count="0" trust="untrusted">\n'
        f"  <content>\n{xml_escape(text)}\n  </content>\n</summary>"
    )


def priced_texts(
    ids: Sequence[str], texts: Sequence[str], summary: np.ndarray, blocks: np.ndarray | None
) -> list[str]:
    """The text each item is priced on: the items where ``summary`` is true in
    their envelope (every counter); where ``blocks`` is true (the ``lcm`` counter:
    assistant and tool messages), the JSON content blocks lossless-claw's
    estimate runs over."""
    out = list(texts)
    for i in np.flatnonzero(summary).tolist():
        out[i] = summary_envelope(ids[i], texts[i])
    if blocks is not None:
        for i in np.flatnonzero(blocks).tolist():
            out[i] = content_blocks(texts[i])
    return out


def scored_texts(texts: Sequence[str], blocks: np.ndarray) -> list[str]:
    """The text BM25-lite scores: the JSON content blocks where ``blocks`` is true
    (assistant and tool messages), else the raw text (a summary's raw content)."""
    out = list(texts)
    for i in np.flatnonzero(blocks).tolist():
        out[i] = content_blocks(texts[i])
    return out
