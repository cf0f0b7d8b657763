"""Reading a line that extends its chain's last prompt without reading that
prompt again (``packproof cache simulate``, files.py).

A conversation resends its whole prompt each step, and most steps only add to
the last one: the line's JSON then holds the text of the last prompt's segments.
When it does, byte for byte (one memcmp), the line is read without them:
``"segments":[`` and what follows them, the new segments and the other fields,
a short line that orjson reads and the quick checks check (lines.py) as any
other; the prompt's ids, codes, cumulative tokens and token counts are the last
prompt's, extended by the new segments'. JSON reads an array's elements the
same whatever elements precede them, so the short line is good JSON exactly
when the whole line is (a comma after the last prompt's segments and no new one
is the exception: that line is read whole); each id of the last prompt has its
count checked already. A prompt the same as the last is read with
``"segments":[]``, the empty array standing for the last prompt's segments.

Only text the reader can place without reading the line is compared: a line
with no backslash (every quote then opens or closes a string, so the first
``"chain":"`` and ``"segments":`` are the keys), and a last prompt whose
segments were written as ``dumps`` writes them (no space, the shortest
escapes), the text the output needs: the new segments' is appended to it. Any
other line, and any line the short reading does not accept, is read whole,
which names what is wrong, if anything is.
"""

from __future__ import annotations

from typing import Final

__all__ = ["Last", "remember", "split"]

_CHAIN: Final = b'"chain":"'
_SEGMENTS: Final = b'"segments":'


class Last:
    """A chain's last conversation prompt as the next line may extend it: the
    text of its segments, open for one more (``[[...],[...],``), its ids' codes,
    its cumulative tokens (int64 bytes, 0 first), its total and segment count."""

    __slots__ = ("codes", "cum", "n", "prefix", "text", "total")

    def __init__(self, text: bytes, codes: str, cum: bytes, total: int) -> None:
        self.text, self.prefix = text, text[:-1] + b","
        self.codes, self.cum, self.total, self.n = codes, cum, total, len(codes) >> 1


def remember(raw: bytes, text: bytes, codes: str, cum: bytes, total: int) -> Last | None:
    """The line ``raw`` as its chain's last prompt, when the text of its
    segments is ``text``, their canonical JSON, and the line has no backslash."""
    if b"\\" in raw:
        return None
    at = raw.find(_SEGMENTS)
    if at < 0 or not raw.startswith(text, at + len(_SEGMENTS)):
        return None
    return Last(text, codes, cum, total)


def split(raw: bytes, lasts: dict[str, Last]) -> tuple[str, Last, bytes] | None:
    """The line's chain, that chain's last prompt, and the line without the last
    prompt's segments, when the line has no backslash and its segments start
    with all of the last prompt's; else None."""
    if b"\\" in raw:
        return None
    at = raw.find(_CHAIN)
    if at < 0:
        return None
    at += len(_CHAIN)
    try:
        chain = raw[at : raw.find(b'"', at)].decode("utf-8")
    except UnicodeDecodeError:
        return None
    last = lasts.get(chain)
    if last is None:
        return None
    at = raw.find(_SEGMENTS)
    if at < 0:
        return None
    at += len(_SEGMENTS)
    if raw.startswith(last.prefix, at):  # more segments, or a comma and none (bad)
        rest = raw[at + len(last.prefix) :]
        if rest.lstrip(b" \t\r\n").startswith(b"]"):
            return None
        return chain, last, raw[:at] + b"[" + rest
    if raw.startswith(last.text, at):  # the same segments
        return chain, last, raw[:at] + b"[]" + raw[at + len(last.text) :]
    return None
