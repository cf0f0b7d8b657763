"""Reserve what is always kept: lossless-claw's fresh tail, and anchored items."""

from __future__ import annotations

import numpy as np

from .model import MESSAGE, USER, FreshTail, Items

__all__ = ["fresh_tail_start"]


def fresh_tail_start(items: Items, eligible: np.ndarray, tail: FreshTail) -> int | None:
    """Position where lossless-claw's fresh-tail walk stopped, or None (no tail).

    Walk the eligible raw messages (kind ``message``; summaries and memories are
    skipped) newest first, protecting each, until ``count`` are protected AND the
    newest user message is protected (the last-user anchor; vacuous when there is
    no user message). With ``max_tokens``, stop before a message that would push
    the protected tokens over the cap, but only once the newest user message is
    protected and at least one message is. ``count <= 0`` or no raw message:
    nothing is protected. The tail is every eligible item at or after the stop.
    """
    if tail.count <= 0:
        return None
    messages = np.flatnonzero(eligible & (items.kinds == MESSAGE))
    if not len(messages):
        return None
    users = messages[items.roles[messages] == USER]
    newest_user = int(users[-1]) if len(users) else None
    user_done = newest_user is None
    protected_tokens = 0
    stop: int | None = None
    tokens = items.tokens
    for protected, i in enumerate(reversed(messages.tolist())):  # protected so far
        if protected >= tail.count and user_done:
            break
        cost = int(tokens[i])
        if (
            tail.max_tokens is not None
            and user_done
            and protected >= 1
            and protected_tokens + cost > tail.max_tokens
        ):
            break
        protected_tokens += cost
        stop = i
        if i == newest_user:
            user_done = True
    return stop
