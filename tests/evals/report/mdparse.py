"""Markdown read back as GitHub renders it, with a real parser (markdown-it-py:
CommonMark, GFM tables and strikethrough, raw HTML on, and autolinks of bare
URLs, ``www.`` and e-mail addresses, as GitHub makes them), and the hostile
strings the reports are tested with.

A report passes when nothing a user wrote became markup: no raw HTML node, no
link or image, and each hostile string read back whole from one paragraph, list
item, heading or table cell (an extra cell, an extra row or a new block would
split it, emphasis would eat its characters)."""

from __future__ import annotations

from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.token import Token

from packproof.packer.explain import visible

__all__ = ["HOSTILE", "hostile", "inline_texts", "live_nodes", "missing"]

_PARSER = MarkdownIt("commonmark", {"html": True, "linkify": True}).enable(
    ["table", "strikethrough", "linkify"]
)
_LIVE = {"html_block", "html_inline", "link_open", "image"}

# Each a way into a page: raw HTML, a link or an image, a table cell's or row's
# end, a code span that closes early, emphasis, a new block, GitHub's autolinks,
# an entity, and a terminal's escape sequences. {i} keeps each value distinct.
HOSTILE = (
    "<img src=x onerror=alert({i})>",
    "<details><summary>x{i}</summary>",
    "[click{i}](javascript:alert({i}))",
    "![pixel{i}](http://evil.example/{i}.png)",
    "a|b{i}||c",
    "``tick{i}`` `x`",
    "*em{i}* _u{i}_ __b__ ~~s~~",
    "# heading{i} #",
    "- item{i}",
    "1. one{i}",
    "www.evil{i}.com mail{i}@evil.com https://evil.com/{i}",
    "&lt;b{i}&gt; &amp; \\<i>",
    "line{i}\nbreak\n| x | y |",
    "esc{i}\x1b[2J\x1b]8;;http://evil.example\x07link\x1b]8;;\x07\r",
)


def hostile(i: int) -> str:
    """The ``i``-th hostile string (distinct for every ``i``)."""
    return HOSTILE[i % len(HOSTILE)].format(i=i)


def _walk(tokens: list[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        yield from _walk(token.children or [])


def live_nodes(markdown: str) -> list[str]:
    """The raw HTML, link and image nodes of ``markdown``, as ``type: content``."""
    return [
        f"{t.type}: {t.content or t.attrGet('href') or t.attrGet('src')}"
        for t in _walk(_PARSER.parse(markdown))
        if t.type in _LIVE
    ]


def inline_texts(markdown: str) -> list[str]:
    """What a reader sees of each paragraph, list item, heading and table cell:
    its text and code, line breaks as spaces."""
    out = []
    for token in _PARSER.parse(markdown):
        if token.type == "inline":
            out.append(
                "".join(
                    " " if c.type in ("softbreak", "hardbreak") else c.content
                    for c in _walk(token.children or [])
                )
            )
    return out


def _forms(value: str) -> set[str]:
    """How a value may read whole: as written, with its control characters
    shown as escapes (code), or with its whitespace runs as one space (text)."""
    return {value, visible(value), visible(" ".join(value.split()))}


def missing(markdown: str, values: list[str]) -> list[str]:
    """The ``values`` that no single paragraph, item, heading or cell shows whole."""
    texts = inline_texts(markdown)
    return [v for v in values if not any(f in t for f in _forms(v) for t in texts)]
