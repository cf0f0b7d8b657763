"""The calls of a session family (a main session and its sub-agents) as the prompts
they sent, with token sizes taken from the bill (docs/claude-code.md, "Token sizes").

Each call's prompt is a static prefix, then its messages. A message's tokens come
from the bill: a call's prompt length (uncached + written + cached) less the
static prefix and the messages already sized is what its new messages hold, split
among them in proportion to their ``lcm`` token estimates (packer/tokens.py),
largest remainder. Where the bill cannot size them (the difference is smaller than
the number of new messages: the prompt did not extend), the estimates are used and
the call is noted.

The static prefix (inferred, docs/claude-code.md "Inferred rules"): a chain's first
call on a model that reads a cache it never wrote reads a *seed* of that size,
written by the user's other sessions (system prompt and tools); a main session's
prefix then runs on to ``session_prefix`` tokens (its own context block), with a
breakpoint at its end. A compaction sub-agent sends its main session's latest
prompt followed by its own messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from packproof.evals.scenarios.importers.claude_code.transcript import Call, Message, Session
from packproof.packer.tokens import lcm_tokens

__all__ = ["SESSION_PREFIX_TOKENS", "CallPrompt", "family_prompts"]

# Where Claude Code 2.1.x main sessions' prompts break back to after a compaction or
# a background task's notification (21,448 to 21,478 on the shared sessions).
SESSION_PREFIX_TOKENS = 21460


@dataclass(frozen=True)
class CallPrompt:
    """One call as sent: its session, call, segments ``(id, tokens)``, how many are
    the static prefix, the seed it read before the session (``(id, tokens)`` or
    None: a cold start) and a note on how it was sized ('' when from the bill)."""

    session: str
    call: Call
    segments: tuple[tuple[str, int], ...]
    static_segments: int
    seed: tuple[str, int] | None
    note: str
    breakpoints: tuple[int, ...] | None = None  # None: the end and the static prefix
    epoch: int = 0  # task notifications so far in its session (inferred rule 3)


def _breakpoints(call: Call, offset: int, static: int) -> tuple[int, ...] | None:
    """Claude Code's breakpoints when the last message is not the one it marks
    (parallel tool results after the chain's record): the static prefix and the
    marked message; None (the default placement) otherwise."""
    if call.marked >= len(call.prompt):
        return None
    return (*((static,) if static else ()), offset + call.marked)


def _split(total: int, messages: Sequence[Message]) -> list[int]:
    weights = [max(1, lcm_tokens(m.text)) for m in messages]
    whole = sum(weights)
    shares = [total * w // whole for w in weights]
    rest = total - sum(shares)
    order = sorted(range(len(weights)), key=lambda i: (-(total * weights[i] % whole), i))
    for i in order[:rest]:
        shares[i] += 1
    return shares


class _Sizer:
    """Message tokens of one family, per model: (model, uuid) -> tokens."""

    def __init__(self) -> None:
        self.tokens: dict[tuple[str, str], int] = {}

    def size(self, model: str, messages: Sequence[Message], room: int) -> str:
        new = [m for m in messages if (model, m.uuid) not in self.tokens]
        known = sum(self.tokens.get((model, m.uuid), 0) for m in messages)
        unknown = room - known
        if new and unknown >= len(new):
            for m, k in zip(new, _split(unknown, new), strict=True):
                self.tokens[model, m.uuid] = k
            return ""
        for m in new:
            self.tokens[model, m.uuid] = max(1, lcm_tokens(m.text))
        if new:
            return f"not extended: {len(new)} new messages sized by estimate"
        return "" if unknown == 0 else f"no new message; the prompt differs by {unknown} tokens"


def family_prompts(main: Session, session_prefix: int = SESSION_PREFIX_TOKENS) -> list[CallPrompt]:
    """Every call of ``main`` and its sub-agents as sent, in time order."""
    sizer = _Sizer()
    out: list[CallPrompt] = []
    statics: dict[tuple[str, str], tuple[tuple[tuple[str, int], ...], tuple[str, int] | None]] = {}
    epochs: dict[str, int] = {}
    sessions = [main, *main.subagents]
    order = sorted(
        ((c.t, k, i) for k, s in enumerate(sessions) for i, c in enumerate(s.calls)),
    )
    latest: dict[str, CallPrompt] = {}  # model -> the main session's latest call
    for _, k, i in order:
        session = sessions[k]
        call = sessions[k].calls[i]
        model, n = call.model, call.usage.prompt
        if session.compaction and model in latest:
            base = latest[model]
            own = [m for m in call.prompt]
            room = n - sum(tok for _, tok in base.segments)
            note = sizer.size(model, own, room)
            segments = base.segments + tuple(
                (f"{model}|{session.id}|{m.uuid}", sizer.tokens[model, m.uuid]) for m in own
            )
            marks = _breakpoints(call, len(base.segments), base.static_segments)
            out.append(
                CallPrompt(session.id, call, segments, base.static_segments, None, note, marks)
            )
            continue
        if call.task_notification:  # inferred: the prompt breaks after the session prefix
            epochs[session.id] = epochs.get(session.id, 0) + 1
        key = (session.id, model)
        seed = None
        if key not in statics:
            cached = call.usage.cached
            static: tuple[tuple[str, int], ...] = ()
            if cached:
                seed = (f"seed|{model}|{cached}", cached)
                static = (seed,)
                if session is main and session_prefix > cached and n > session_prefix:
                    static += ((f"context|{session.id}|{model}", session_prefix - cached),)
            statics[key] = (static, seed)
        static = statics[key][0]
        epoch = epochs.get(session.id, 0)
        note = sizer.size(model, call.prompt, n - sum(tok for _, tok in static))
        segments = static + tuple(
            (f"{model}|{epoch}|{m.uuid}", sizer.tokens[model, m.uuid]) for m in call.prompt
        )
        marks = _breakpoints(call, len(static), len(static))
        prompt = CallPrompt(session.id, call, segments, len(static), seed, note, marks, epoch)
        out.append(prompt)
        if session is main:
            latest[model] = prompt
    return out
