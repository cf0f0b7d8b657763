"""The protected tail lines of ``pack``, collected and normalised as openclaw-mem does.

POLICY.md, section 9 (``_pack_collect_tail_texts``, ``_pack_tail_text``): every
``--tail-text``, then the ``--tail-file`` content (``-``: standard input), read as a
JSON list when the whole content is one (elements that are not strings become
Python's ``str()`` of them, null becomes "") and as ``str.splitlines()`` otherwise.
Each line: CRLF and CR to LF, stripped, dropped when empty; else split again with
``str.splitlines()``, parts that strip to empty dropped, the rest joined with one
space and stripped. ``--tail-max-items`` N > 0 keeps the last N lines.
"""

from __future__ import annotations

import json

__all__ = ["normalise_line", "tail_lines", "tail_sources"]


def tail_sources(texts: tuple[str, ...], content: str | None) -> list[str]:
    """The raw tail lines: ``texts``, then the lines of the tail file's ``content``."""
    lines = list(texts)
    if content is None:
        return lines
    try:
        parsed = json.loads(content)
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, list):
        lines += ["" if v is None else v if isinstance(v, str) else str(v) for v in parsed]
    else:
        lines += content.splitlines()
    return lines


def normalise_line(line: str) -> str:
    """One tail line as openclaw-mem packs it ("" when it is dropped)."""
    text = line.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        return ""
    parts = [p for p in text.splitlines() if p.strip()]
    return " ".join(parts).strip()


def tail_lines(texts: tuple[str, ...], content: str | None, max_items: int) -> list[str]:
    """The tail lines ``tail:1..n`` (after the ``--tail-max-items`` cut)."""
    lines = [t for t in map(normalise_line, tail_sources(texts, content)) if t]
    return lines[-max_items:] if max_items > 0 else lines
