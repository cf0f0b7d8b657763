"""Text a user gave, made safe for every Markdown packproof writes: summary.md
(markdown.py), the gate's pull-request comment (``evals/gate/markdown.py``) and
compare.md (``evals/compare/markdown.py``).

Scenario and item ids, tags, strategy labels, packer names and commands, file
names, reasons and notes come from scenario files, configs and summaries that a
contributor can write, and a pull-request comment renders them on GitHub. Each
goes through one of two functions, so that it shows as written and never
becomes markup: no raw HTML (``<img onerror=...>``, ``<details>``), no link,
image or autolink, no emphasis, no new block (heading, list, quote), no extra
table cell or row.

- :func:`code` for an id, a label or a file name: a code span that stays one
  whatever it holds (CommonMark 6.1, "Code spans");
- :func:`text` for free text in a paragraph, a list item, a heading or a table
  cell: backslash escapes (CommonMark 2.4) and HTML entities for what would be
  markup.

Control characters are shown as escapes by the function the terminal output
uses (:func:`~packproof.packer.explain.visible`). Where the rules below leave a
character alone, it is because it cannot start markup once the others are
escaped: ``(``, ``)`` and ``!`` only act after a ``[``; ``-``, ``+``, ``=`` and a
number's ``.`` only at the start of a line. So ordinary prose and numbers
(``-0.05``, ``(in the baseline)``) read in the file as they render.
"""

from __future__ import annotations

import re
from typing import Final

from packproof.packer.explain import visible

__all__ = ["cell", "code", "or_dash", "text"]

# Backslash-escaped wherever they are: the escape character itself, code spans
# and fences, emphasis and strikethrough, link and image brackets, headings (a
# closing "#" run too), and a table cell's end.
_ALWAYS: Final = frozenset("\\`*[]#|~")
# HTML: a tag, a comment, an entity, or ">" opening a block quote.
_ENTITIES: Final = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# GitHub's autolinks (GFM 6.9): "www.", "scheme://" and e-mail addresses are
# links even without brackets; escaping one character of each keeps them text.
_AUTOLINK: Final = re.compile(r"(?i)(?<=www)\.|:(?=//)|@(?=[\w.+-]+\.\w)")
# What starts a block at the start of a line (a list item, a thematic break or a
# setext underline, an ordered list item): the character to escape.
_LIST: Final = re.compile(r"[-+](?=\s|$)|[-=][-=\s]*$")
_ORDERED: Final = re.compile(r"\d{1,9}(?=[.)](?:\s|$))")


def _underscore(flat: str, i: int) -> bool:
    """Whether the ``_`` at ``flat[i]`` could open or close emphasis: it cannot
    between two letters or digits (CommonMark 6.2: ``snake_case`` stays text)."""
    before = flat[i - 1] if i else " "
    after = flat[i + 1] if i + 1 < len(flat) else " "
    return not (before.isalnum() and after.isalnum())


def text(value: str) -> str:
    """``value`` as plain text on one line: whitespace runs (newlines included)
    as one space, control characters as escapes, Markdown and HTML made
    literal (see the module docstring)."""
    flat = visible(" ".join(value.split()))
    marks = {m.start() for m in _AUTOLINK.finditer(flat)}
    head = _LIST.match(flat)
    if head:
        marks.add(0)
    number = _ORDERED.match(flat)
    if number:
        marks.add(number.end())
    out = []
    for i, c in enumerate(flat):
        if c in _ENTITIES:
            out.append(_ENTITIES[c])
        elif c in _ALWAYS or i in marks or (c == "_" and _underscore(flat, i)):
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


def code(value: str, *, cell: bool = False) -> str:
    """``value`` as an inline code span, on one line, whatever it holds: the
    fence is a backtick run longer than any inside it, padded with a space
    when the content has a backtick or would lose a space at each end
    (CommonMark 6.1). Control characters are shown as escapes (a line ending
    would end the table row or start a block). ``cell``: the span is in a
    table cell, where an unescaped ``|`` ends the cell even inside code, and
    ``\\|`` is a ``|`` (GFM 4.10); elsewhere a backslash in code is literal, so
    a pipe stays as it is."""
    content = visible(value) or " "  # no code span is empty: an empty value shows a space
    longest = max((len(run) for run in re.findall("`+", content)), default=0)
    fence = "`" * (longest + 1)
    lost = content[:1] == content[-1:] == " " and content.strip(" ")
    pad = " " if longest or lost else ""
    span = f"{fence}{pad}{content}{pad}{fence}"
    return span.replace("|", "\\|") if cell else span


def or_dash(value: object) -> str:
    """Free text from the data, or a dash for none (None or empty)."""
    return text(str(value)) if value not in (None, "") else "–"


def cell(value: object) -> str:
    """A value from the data as code, in a table cell."""
    return code(str(value), cell=True)
