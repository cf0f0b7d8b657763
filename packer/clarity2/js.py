"""What JavaScript's strings do differently from Python's, where the plugin's code
depends on it: ``\\s`` and ``trim()`` (JavaScript's white space and line
terminators, ``\\ufeff`` included, none of ``\\x1c``-``\\x1f`` or ``\\x85``) and
``length`` and ``slice`` (UTF-16 code units, not code points)."""

from __future__ import annotations

__all__ = ["SPACE", "length", "lower_ascii_units", "slice_units", "trim"]

# The characters JavaScript's \\s matches, as a regular-expression class body.
SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_SPACES = frozenset(
    "\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
)


def length(text: str) -> int:
    """``text.length``."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _units(text: str) -> list[str]:
    raw = text.encode("utf-16-le", "surrogatepass")
    return [raw[i : i + 2].decode("utf-16-le", "surrogatepass") for i in range(0, len(raw), 2)]


def slice_units(text: str, end: int) -> str:
    """``text.slice(0, end)`` (a surrogate pair cut in half leaves a lone surrogate)."""
    raw = text.encode("utf-16-le", "surrogatepass")[: 2 * end]
    return raw.decode("utf-16-le", "surrogatepass")


def trim(text: str) -> str:
    """``text.trim()``."""
    start, end = 0, len(text)
    while start < end and text[start] in _SPACES:
        start += 1
    while end > start and text[end - 1] in _SPACES:
        end -= 1
    return text[start:end]


def lower_ascii_units(text: str, keep: frozenset[str]) -> str:
    """``text.toLowerCase().replace(/[^<keep>]/g, "_")`` where ``keep`` is a set of
    ASCII characters: each UTF-16 unit outside it (a surrogate pair is two) becomes ``_``."""
    return "".join(u if u in keep else "_" for u in _units(text.lower()))
