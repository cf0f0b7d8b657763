"""Reading one Claude Code transcript (``~/.claude/projects/<project>/<session>.jsonl``):
its records, its API calls and the messages each call sent (docs/claude-code.md).

A call is the assistant records sharing one ``requestId`` (one response streamed as
several content records); its usage, model and time are its first record's. The
prompt a call sent is the user and assistant records on its ``parentUuid`` chain
before it, plus the tool results of the same assistant turn that the chain does not
pass through (parallel tool calls answer as sibling records; the API merges them
into one user message). Every record is one message item; its text is its blocks'
texts joined (``text``, ``thinking``, a ``tool_use``'s name and input as JSON, a
``tool_result``'s content), so a thinking block and a tool call are items of their
own, as the transcript streams them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any, Final

from packproof.evals.scenarios.importers.claude_code.signal import (
    answered_calls,
    item_text,
    response_text,
)
from packproof.packer.errors import InputError

__all__ = ["Call", "Message", "Session", "Usage", "read_session"]

# Usage keys a call must carry, each a non-negative integer.
USAGE_KEYS: Final = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
TASK_NOTIFICATION: Final = "<task-notification>"


@dataclass(frozen=True)
class Usage:
    """The provider's usage of one call: uncached (``input_tokens``), written
    (``cache_creation_input_tokens``, of which ``written_1h`` as 1-hour entries),
    cached (``cache_read_input_tokens``) and output tokens."""

    input: int
    written: int
    cached: int
    written_1h: int = 0
    output: int = 0

    @property
    def prompt(self) -> int:
        """The prompt's length in the provider's tokens: uncached + written + cached."""
        return self.input + self.written + self.cached

    def to_json(self) -> dict[str, int]:
        return {
            "cached": self.cached,
            "input": self.input,
            "output": self.output,
            "written": self.written,
            "written_1h": self.written_1h,
        }


@dataclass(frozen=True)
class Message:
    """One user or assistant record: an item of the prompts that follow it."""

    uuid: str
    role: str
    text: str
    line: int
    tool_result: bool = False
    request: str = ""  # an assistant record's requestId
    signal: str = ""  # its text as the evidence signal reads it (signal.py)


@dataclass(frozen=True)
class Call:
    """One API call: its request id, time (seconds since the epoch), model, usage,
    the line of its first record, and the messages of its prompt, in order."""

    request_id: str
    t: float
    model: str
    usage: Usage
    line: int
    prompt: tuple[Message, ...]
    task_notification: bool  # its newest user turn is a background task's notification
    marked: int  # messages up to the breakpoint (the chain's last record): inferred
    response: str = ""  # its output as the evidence signal reads it: text and tool_use inputs


@dataclass
class Session:
    """One transcript: its id (the file's stem), path, calls in order, whether it
    is a compaction sub-agent, and its sub-agents (a main session's)."""

    id: str
    path: Path
    calls: list[Call]
    compaction: bool = False
    subagents: list[Session] = field(default_factory=list)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "thinking":
            parts.append(str(block.get("thinking", "")))
        elif kind == "tool_use":
            parts.append(
                f"{block.get('name', '')} {json.dumps(block.get('input'), sort_keys=True)}"
            )
        elif kind == "tool_result":
            parts.append(_text(block.get("content")))
    return "\n".join(parts)


def _is_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError("", f"cannot read: {exc.strerror}", source=str(path)) from None
    for n, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(
                f"line {n}",
                "not a transcript record",
                expected="one JSON object a line",
                found=f"invalid JSON ({exc})"
                if isinstance(exc, json.JSONDecodeError)
                else "non-UTF-8 bytes",
                source=str(path),
            ) from None
        if not isinstance(obj, dict):
            raise InputError(
                f"line {n}",
                "not a transcript record",
                expected="a JSON object",
                found=obj,
                source=str(path),
            )
        yield n, obj


def _seconds(value: Any, path: Path, n: int) -> float:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise InputError(
            f"line {n}",
            "bad timestamp",
            expected="an ISO 8601 date-time",
            found=value,
            source=str(path),
        ) from None


def _usage(message: dict[str, Any], path: Path, n: int) -> Usage:
    usage = message.get("usage")
    if not isinstance(usage, dict):
        raise InputError(
            f"line {n}",
            "an assistant record without its call's usage",
            expected="message.usage, an object",
            found=usage,
            source=str(path),
        )
    values = {}
    for key in USAGE_KEYS:
        value = usage.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InputError(
                f"line {n}",
                f"bad usage {key}",
                expected="an integer >= 0",
                found=value,
                source=str(path),
            )
        values[key] = value
    split = usage.get("cache_creation")
    one_hour = split.get("ephemeral_1h_input_tokens", 0) if isinstance(split, dict) else 0
    output = usage.get("output_tokens", 0)
    return Usage(
        values["input_tokens"],
        values["cache_creation_input_tokens"],
        values["cache_read_input_tokens"],
        one_hour if isinstance(one_hour, int) else 0,
        output if isinstance(output, int) else 0,
    )


def read_session(path: Path, *, compaction: bool = False) -> Session:
    """One transcript's calls, each with the prompt it sent. A bad record is one
    :class:`InputError` naming the file and line, what was expected and found."""
    by_uuid: dict[str, tuple[int, dict[str, Any]]] = {}
    results_of: dict[str, list[str]] = {}  # assistant uuid -> its tool-result records
    messages: dict[str, Message] = {}
    firsts: list[tuple[int, dict[str, Any]]] = []
    seen_requests: set[str] = set()
    responses: dict[str, list[str]] = {}  # request id -> its assistant records
    contents: dict[str, Any] = {}  # uuid -> its message content (the signal's texts)
    for n, rec in _records(path):
        kind = rec.get("type")
        uuid = rec.get("uuid")
        if kind not in ("user", "assistant"):
            if isinstance(uuid, str):
                by_uuid[uuid] = (n, rec)
            continue
        message = rec.get("message")
        if not isinstance(uuid, str) or not isinstance(message, dict):
            raise InputError(
                f"line {n}",
                f"a {kind} record without its uuid and message",
                expected="uuid (a string) and message (an object)",
                found=f"uuid {uuid!r}, message {type(message).__name__}",
                source=str(path),
            )
        by_uuid[uuid] = (n, rec)
        content = message.get("content")
        contents[uuid] = content
        tool_result = kind == "user" and _is_tool_result(content)
        request = rec.get("requestId") or message.get("id")
        messages[uuid] = Message(
            uuid, kind, _text(content), n, tool_result, request if isinstance(request, str) else ""
        )
        parent = rec.get("parentUuid")
        if tool_result and isinstance(parent, str):
            results_of.setdefault(parent, []).append(uuid)
        if kind == "assistant":
            if not isinstance(request, str):
                raise InputError(
                    f"line {n}",
                    "an assistant record without its requestId",
                    expected="requestId, a string",
                    found=request,
                    source=str(path),
                )
            responses.setdefault(request, []).append(uuid)
            if request not in seen_requests:
                seen_requests.add(request)
                _usage(message, path, n)
                firsts.append((n, rec))
    calls = []
    answered = answered_calls(contents.values())
    for uuid, m in messages.items():
        messages[uuid] = replace(m, signal=item_text(contents[uuid], answered))
    for n, rec in firsts:
        message = rec["message"]
        request_id = str(rec.get("requestId") or message.get("id"))
        chain = _chain(rec.get("parentUuid"), by_uuid)
        prompt, marked = _with_siblings(chain, messages, results_of, responses, n)
        calls.append(
            Call(
                request_id=request_id,
                t=_seconds(rec.get("timestamp"), path, n),
                model=str(message.get("model", "")),
                usage=_usage(message, path, n),
                line=n,
                prompt=tuple(prompt),
                task_notification=_notified(prompt),
                marked=marked,
                response=response_text(contents[u] for u in responses[request_id]),
            )
        )
    for a, b in pairwise(calls):
        if b.t < a.t:
            raise InputError(
                f"line {b.line}",
                "calls out of time order",
                expected=f"a timestamp at or after line {a.line}'s",
                found=b.t,
                source=str(path),
            )
    return Session(path.stem, path, calls, compaction)


def _notified(prompt: Sequence[Message]) -> bool:
    """Whether a user record after the prompt's last assistant record is a
    background task's notification."""
    for m in reversed(prompt):
        if m.role == "assistant":
            return False
        if m.text.lstrip().startswith(TASK_NOTIFICATION):
            return True
    return False


def _chain(parent: Any, by_uuid: dict[str, tuple[int, dict[str, Any]]]) -> list[str]:
    """The uuids from the root to ``parent`` along ``parentUuid`` (any record type)."""
    out: list[str] = []
    seen: set[str] = set()
    while isinstance(parent, str) and parent in by_uuid and parent not in seen:
        seen.add(parent)
        out.append(parent)
        parent = by_uuid[parent][1].get("parentUuid")
    out.reverse()
    return out


def _with_siblings(
    chain: list[str],
    messages: dict[str, Message],
    results_of: dict[str, list[str]],
    responses: dict[str, list[str]],
    before: int,
) -> tuple[list[Message], int]:
    """The chain's messages as the API received them, and how many lead up to the
    chain's last one (where Claude Code puts its breakpoint). An assistant record
    brings the whole response it streamed (its ``requestId``'s records); a tool
    result brings the results of that response's other tool calls, in the order of
    the calls (parallel results are sibling records the chain passes one of).
    Only records written before line ``before`` count."""
    out: list[Message] = []
    done: set[str] = set()
    pending: list[str] = []  # the assistant records since the last user record
    last = ""
    for uuid in chain:
        m = messages.get(uuid)
        if m is None:
            continue
        last = uuid
        if uuid in done:
            continue
        if m.role == "assistant":
            group = [u for u in responses.get(m.request, [uuid]) if messages[u].line < before]
            group = group if uuid in group else [*group, uuid]
        elif m.tool_result:
            group = [r for a in pending for r in results_of.get(a, ()) if messages[r].line < before]
            group = group if uuid in group else [*group, uuid]
        else:
            group = [uuid]
        fresh = [u for u in group if u not in done]
        done.update(fresh)
        out.extend(messages[u] for u in fresh)
        pending = [*pending, *fresh] if m.role == "assistant" else []
    marked = next((k + 1 for k in range(len(out) - 1, -1, -1) if out[k].uuid == last), len(out))
    return out, marked
