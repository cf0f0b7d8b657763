"""A label-free evidence signal for agent work (docs/evidence-signal.md).

An earlier item is *evidence* for a step when the assistant's response at that
step reuses a rare salient token first seen in that item. Salient tokens are the
strings an agent copies rather than paraphrases: paths, file and module names,
identifiers, command-line flags, hashes and ids, and numbers. Definitions
(docs/evidence-signal.md has the worked examples and the measured figures):

- **Tokens** (:func:`salient_tokens`), case kept, a set per text:
  a *path* holds a ``/`` and either starts with ``/``, ``~`` or ``.``, or has two
  slashes or more, or ends in a ``name.ext`` (``and/or`` is none); a *dotted name*
  (``app.js``, ``Spotter.Transcripts``); an *identifier* with an inner ``_``, a
  lower-to-upper case change (``handleEvent``) or letters and digits together
  (``sha256``, ``8cc42b0``); a *kebab* name with a digit or three parts or more
  (a uuid, ``agent-acompact-946d2b``); a *flag* (``--no-verify``); a *number*
  (``2.1.39``, ``17800``). All but numbers need ``min_length`` characters or more.
- **Trivial numbers** are not tokens: fewer than ``min_digits`` digits (``1``,
  ``42``), a year 1900-2099 (``2024``), a round number (two significant digits
  or fewer, then two zeros or more: ``300``, ``120000``), a power
  of two from 128 to 65536. The line numbers of a file listing (``   12→``, the
  gutter of a Read tool result) are not read as numbers at all.
- **Rare**: a token is rare at a step when at most ``max_df`` earlier items hold
  it (its document frequency over the conversation so far); a token no earlier
  item holds is new, and no evidence of anything.
- **First seen**: a rare token of the response points at the first earlier item
  that holds it, the item that brought it into the conversation. The evidence is
  the set of items pointed at, in conversation order.

With ``words``, lower-cased plain words of ``word_length`` letters or more that
are not stopwords count too (for chit-chat such as LoCoMo, where answers hold no
identifiers); it is off for agent work.

:class:`EvidenceIndex` is incremental: each item is tokenised once when added,
and a step costs the tokenising of its response plus one lookup per token, so a
conversation of thousands of messages takes seconds. :func:`evidence` is the
one-shot form. Both are deterministic (no randomness, sets resolved by ordinal).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

__all__ = [
    "DEFAULT_RULE",
    "EvidenceIndex",
    "Match",
    "SignalRule",
    "evidence",
    "salient_tokens",
]


@dataclass(frozen=True)
class SignalRule:
    """The signal's parameters (module docstring).

    ``max_df``: a token is rare when at most this many earlier items hold it.
    ``min_length``: the fewest characters of a path, name, identifier or flag.
    ``min_digits``: the fewest digits of a number.
    ``words``: count rare plain words too, of ``word_length`` letters or more.
    """

    max_df: int = 3
    min_length: int = 4
    min_digits: int = 3
    words: bool = False
    word_length: int = 6

    def __post_init__(self) -> None:
        for name in ("max_df", "min_length", "min_digits", "word_length"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"SignalRule.{name}: expected an integer >= 1, found {value!r}")


DEFAULT_RULE: Final = SignalRule()

# The gutter of a numbered file listing (Claude Code's Read: "    12→text" or "12\t").
_GUTTER: Final = re.compile(r"^[ \t]*\d+(?:→|\t)", re.M)
_PATH: Final = re.compile(r"(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*\w")
_DOTTED: Final = re.compile(r"(?<![\w.])[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+(?![\w])")
_WORDLIKE: Final = re.compile(r"(?<![\w-])\w+(?:-\w+)*(?![\w])")
_FLAG: Final = re.compile(r"(?<![\w-])--[A-Za-z][\w-]+")
_NUMBER: Final = re.compile(r"(?<![\w.-])\d+(?:[.,:]\d+)*(?![\w-])")  # a uuid's parts: kebab
_CAMEL: Final = re.compile(r"[a-z][A-Z]")
_LETTER: Final = re.compile(r"[A-Za-z]")
_DIGIT: Final = re.compile(r"\d")
_EXT: Final = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
_PLAIN: Final = re.compile(r"[a-z]+")
# Numbers too common to point at one item: powers of two of buffers and budgets.
_POWERS: Final = frozenset(str(2**k) for k in range(7, 17))


def _path_ok(token: str, min_length: int) -> bool:
    if len(token) < min_length or not _LETTER.search(token):
        return False
    last = token.rsplit("/", 1)[-1]
    return token[0] in "/~." or token.count("/") >= 2 or bool(_EXT.search(last))


def _identifier_ok(token: str, min_length: int) -> bool:
    """An identifier (``_``, camelCase, letters with digits) or a kebab name
    (with a digit, or three parts or more); plain words and numbers are not."""
    if len(token) < min_length:
        return False
    if "-" in token:
        return bool(_DIGIT.search(token)) or token.count("-") >= 2
    if "_" in token.strip("_"):
        return True
    if _CAMEL.search(token):
        return True
    return bool(_DIGIT.search(token)) and bool(_LETTER.search(token))


def _number_ok(token: str, min_digits: int) -> bool:
    digits = sum(c.isdigit() for c in token)
    if digits < min_digits:
        return False
    if not token.isdigit():
        return True  # a version, a decimal, a time: 2.1.39, 3.14, 23:58
    value = token.lstrip("0") or "0"
    if len(value) == 4 and "1900" <= value <= "2099":
        return False  # a year
    if len(value) - len(value.rstrip("0")) >= 2 and len(value.rstrip("0")) <= 2:
        return False  # round: two significant digits or fewer, then zeros (300, 120000)
    return value not in _POWERS


def _words(text: str, length: int) -> Iterable[str]:
    from packproof.evals.metrics.answers import stopwords  # only with words=True

    stop = stopwords()
    return (w for w in _PLAIN.findall(text.lower()) if len(w) >= length and w not in stop)


def salient_tokens(text: str, rule: SignalRule = DEFAULT_RULE) -> frozenset[str]:
    """The salient tokens of ``text`` under ``rule`` (module docstring)."""
    text = _GUTTER.sub(" ", text)
    n = rule.min_length
    found = {m for m in _PATH.findall(text) if _path_ok(m, n)}
    found.update(m for m in _DOTTED.findall(text) if len(m) >= n)
    found.update(m for m in _WORDLIKE.findall(text) if _identifier_ok(m, n))
    found.update(m for m in _FLAG.findall(text) if len(m) >= n)
    found.update(m for m in _NUMBER.findall(text) if _number_ok(m, rule.min_digits))
    if rule.words:
        found.update(_words(text, rule.word_length))
    return frozenset(found)


class Match(NamedTuple):
    """One evidence item of a step: its id, its position among the earlier
    items, and the response's rare tokens first seen in it (sorted)."""

    item_id: str
    ordinal: int
    tokens: tuple[str, ...]


class EvidenceIndex:
    """The items of one conversation so far, for steps in order: :meth:`add`
    each item as it comes, ask :meth:`evidence` (or :meth:`matches`) at a step
    with the response given there. Each item is tokenised once."""

    def __init__(self, rule: SignalRule = DEFAULT_RULE) -> None:
        self.rule = rule
        self._ids: list[str] = []
        self._known: set[str] = set()
        self._df: Counter[str] = Counter()
        self._first: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, item_id: str, text: str) -> None:
        """Append an item after the ones already added; its id must be new."""
        if item_id in self._known:
            raise ValueError(f"item id {item_id!r} was already added: each item has its own id")
        ordinal = len(self._ids)
        self._ids.append(item_id)
        self._known.add(item_id)
        tokens = salient_tokens(text, self.rule)
        self._df.update(tokens)
        first = self._first
        for token in tokens:
            first.setdefault(token, ordinal)

    def extend(self, items: Iterable[tuple[str, str]]) -> None:
        for item_id, text in items:
            self.add(item_id, text)

    def df(self, token: str) -> int:
        """How many items added so far hold ``token``."""
        return self._df.get(token, 0)

    def matches(self, response: str) -> list[Match]:
        """The evidence items for ``response``, in item order, each with the
        rare tokens that point at it."""
        limit = self.rule.max_df
        pointed: dict[int, list[str]] = {}
        for token in salient_tokens(response, self.rule):
            if 0 < self._df.get(token, 0) <= limit:
                pointed.setdefault(self._first[token], []).append(token)
        return [
            Match(self._ids[o], o, tuple(sorted(tokens))) for o, tokens in sorted(pointed.items())
        ]

    def evidence(self, response: str) -> list[str]:
        """The ids of the evidence items for ``response``, in item order."""
        return [m.item_id for m in self.matches(response)]


def evidence(
    earlier: Sequence[tuple[str, str]], response: str, rule: SignalRule = DEFAULT_RULE
) -> list[str]:
    """The ids of the ``earlier`` items (id, text; in conversation order) that
    are evidence for ``response`` (module docstring). For the steps of one long
    conversation, use :class:`EvidenceIndex` instead: this re-reads every item."""
    index = EvidenceIndex(rule)
    index.extend(earlier)
    return index.evidence(response)
