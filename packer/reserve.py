"""Reserve what is always kept: lossless-claw's fresh tail, and anchored items."""

from __future__ import annotations

from collections.abc import Iterator

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

    The walk reads the table from its newest end, in growing chunks: it
    usually stops a few messages into a long conversation."""
    if tail.count <= 0:
        return None
    users = _newest_first(items, eligible, user=True)
    newest_user = next(users, None)
    user_done = newest_user is None
    protected_tokens = 0
    stop: int | None = None
    tokens = items.tokens
    for protected, i in enumerate(_newest_first(items, eligible)):  # protected so far
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
    return stop  # None: no raw message


def _newest_first(items: Items, eligible: np.ndarray, *, user: bool = False) -> Iterator[int]:
    """Positions of the eligible raw messages (only the user's, with ``user``),
    newest first, found a chunk at a time (each chunk twice the last)."""
    stop, size = len(items), 64
    while stop > 0:
        start = max(0, stop - size)
        mask = eligible[start:stop] & (items.kinds[start:stop] == MESSAGE)
        if user:
            mask &= items.roles[start:stop] == USER
        yield from reversed((start + np.flatnonzero(mask)).tolist())
        stop, size = start, size * 2
