"""The texts the label-free evidence signal reads in a Claude Code transcript
(docs/evidence-signal.md, "How the figures are made"; docs/claude-code.md,
"Evidence without labels").

The signal reads a record's blocks differently from the replay's item text
(transcript.py): a ``tool_use``'s input *values* only (its keys, such as
``file_path``, are in every call; its numbers and booleans, such as ``timeout``,
are settings), and a tool call that a result answers is read with that result,
not in its own record, so the path of a Read points at the file's content, which
is what a later Edit needs. A call's *response* is its ``text`` blocks and
``tool_use`` inputs, never its thinking.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = ["answered_calls", "item_text", "response_text"]


def _values(value: Any) -> Iterator[str]:
    """The strings inside a tool_use input, keys, numbers and booleans left out."""
    if isinstance(value, dict):
        for v in value.values():
            yield from _values(v)
    elif isinstance(value, list):
        for v in value:
            yield from _values(v)
    elif isinstance(value, str):
        yield value


def _blocks(content: Any) -> list[Any]:
    return content if isinstance(content, list) else [content]


def _block(block: Any, calls: Mapping[str, str] | None) -> str:
    """A block's text: as an earlier item with ``calls`` (the input of every
    answered tool_use, by id), as a response without."""
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text") or "")
    if kind == "tool_use":
        answered = calls is not None and block.get("id") in calls
        return "" if answered else "\n".join(_values(block.get("input")))
    if calls is None:
        return ""  # a response is its text and tool calls: no thinking
    if kind == "thinking":
        return str(block.get("thinking") or "")
    if kind == "tool_result":
        inner = block.get("content")
        if isinstance(inner, list):
            inner = "\n".join(_block(b, calls) for b in inner)
        return calls.get(str(block.get("tool_use_id")), "") + "\n" + str(inner or "")
    return ""


def answered_calls(contents: Iterable[Any]) -> dict[str, str]:
    """The input values of every tool_use that a tool_result among ``contents``
    (the message contents of one transcript) answers, by tool_use id."""
    inputs: dict[str, str] = {}
    answered: set[str] = set()
    for content in contents:
        for block in _blocks(content):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                inputs[str(block.get("id"))] = "\n".join(_values(block.get("input")))
            elif block.get("type") == "tool_result":
                answered.add(str(block.get("tool_use_id")))
    return {k: v for k, v in inputs.items() if k in answered}


def item_text(content: Any, calls: Mapping[str, str]) -> str:
    """A record's text as an earlier item of the signal."""
    return "\n".join(t for b in _blocks(content) if (t := _block(b, calls)))


def response_text(contents: Iterable[Any]) -> str:
    """A call's response: the text and tool_use inputs of its records."""
    return "\n".join(t for c in contents for b in _blocks(c) if (t := _block(b, None)))
