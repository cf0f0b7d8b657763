"""Claude Code sessions as replay scenarios (docs/claude-code.md, "The import").

Each main session and each sub-agent becomes a replay: one step per API call at
its time (seconds after the family's first call), whose items are the messages
its prompt sent (ids are the records' uuids), sized from the bill
(replay.py), and whose ``usage`` is the call's recorded usage. A replay appends
items, so a session whose prompt stops extending (a compaction) continues in a new
scenario ``<id>-part-N`` tagged ``continues:<previous id>``; a sub-agent is tagged
``parent:<its main session's scenario id>``. A call that adds no message is not a
step of its own (the report counts it).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

from packproof.evals.scenarios.evidence_signal import EvidenceIndex
from packproof.evals.scenarios.format import Scenario, Turn
from packproof.evals.scenarios.importers.claude_code.replay import (
    SESSION_PREFIX_TOKENS,
    CallPrompt,
    family_prompts,
)
from packproof.evals.scenarios.importers.claude_code.sessions import find_sessions
from packproof.packer.request import parse_request, request_to_json

__all__ = ["import_claude_code"]

_UNSAFE: Final = re.compile(r"[^a-z0-9._-]+")
BUDGET: Final = 200_000  # the context window of the models recorded


def _scenario_id(name: str) -> str:
    return "cc-" + _UNSAFE.sub("-", name.lower()).strip("-")


def _warm(prompt: CallPrompt) -> int:
    """The static prefix tokens live before the call, as its bill shows them: the
    longest run of its static segments whose tokens the call read."""
    live = total = 0
    for _, tokens in prompt.segments[: prompt.static_segments]:
        total += tokens
        if total > prompt.call.usage.cached:
            break
        live = total
    return live


def _step_tags(prompt: CallPrompt, first_on_model: bool) -> tuple[str, ...]:
    """A step's tags: ``step``, its model, its static prefix tokens and, on a
    scenario's first step on a model, the part of that prefix already cached
    (docs/claude-code.md, "Tags for pricing as billed"), and after a background
    task's notification how many its session has had (the prompt breaks after
    the static prefix there: inferred rule 3)."""
    static = sum(tok for _, tok in prompt.segments[: prompt.static_segments])
    tags: tuple[str, ...] = ("step", f"model:{prompt.call.model}", f"static:{static}")
    tags += (f"warm:{_warm(prompt)}",) if first_on_model else ()
    return (*tags, f"epoch:{prompt.epoch}") if prompt.epoch else tags


def _item(prompt_id: str, role: str, tokens: int, text: str) -> dict[str, Any]:
    return {"id": prompt_id, "role": role, "tokens": tokens, "text": text or " "}


def _parts(
    name: str,
    prompts: Sequence[CallPrompt],
    origin: float,
    tags: tuple[str, ...],
    counts: Counter[str],
) -> list[Scenario]:
    out: list[Scenario] = []
    turns: list[Turn] = []
    last: list[str] = []
    statics: list[int] = []  # the tokens before each step's items (static prefix, a parent's)
    index = EvidenceIndex()  # the part's items so far, for the label-free evidence
    models: set[str] = set()

    def close() -> None:
        nonlocal index
        index = EvidenceIndex()
        models.clear()
        if not turns:
            return
        sid = _scenario_id(name) + (f"-part-{len(out) + 1}" if out else "")
        extra = (f"continues:{out[-1].id}",) if out else ()
        out.append(
            Scenario(
                id=sid,
                why=f"Claude Code session {name}: {len(turns)} API calls replayed at their times, "
                f"after a prefix of {statics[-1]} tokens (static, or the parent's prompt).",
                tags=("claude-code", "replay", *tags, *extra),
                turns=tuple(turns),
                file=name,
                line=1,
            )
        )
        turns.clear()

    for p in prompts:
        messages = p.call.prompt
        offset = len(p.segments) - len(messages)  # static (and a parent's) segments first
        ids = [m.uuid for m in messages]
        if ids[: len(last)] != last:
            close()
            last = []
        if len(ids) == len(last) or not ids:
            counts["calls_without_new_messages"] += 1
            continue
        items = [
            _item(m.uuid, m.role, tok, m.text)
            for m, (_, tok) in zip(messages, p.segments[offset:], strict=True)
        ]
        statics.append(sum(tok for _, tok in p.segments[:offset]))
        index.extend((m.uuid, m.signal) for m in messages[len(index) :])
        relevant = tuple(index.evidence(p.call.response))
        first_on_model = p.call.model not in models
        models.add(p.call.model)
        request = request_to_json(
            parse_request(
                {
                    "items": items,
                    "budget_tokens": BUDGET,
                    "fresh_tail": {"count": 1},
                }
            ),
            with_strategy=False,
        )
        request["prompt"] = request["items"][-1]["text"]
        turns.append(
            Turn(
                request,
                relevant,
                {},
                _step_tags(p, first_on_model),
                t=round(p.call.t - origin, 3),
                usage=p.call.usage.to_json(),
            )
        )
        counts["steps"] += 1
        counts["sized_by_estimate"] += bool(p.note)
        last = ids
    close()
    return out


def import_claude_code(
    paths: Iterable[Path], *, session_prefix: int = SESSION_PREFIX_TOKENS
) -> tuple[list[Scenario], dict[str, Any]]:
    """Scenarios for every session under ``paths`` and a report of counts."""
    scenarios: list[Scenario] = []
    counts: Counter[str] = Counter()
    for main in find_sessions(paths):
        prompts = family_prompts(main, session_prefix)
        if not prompts:
            counts["sessions_without_calls"] += 1
            continue
        origin = min(p.call.t for p in prompts)
        counts["sessions"] += 1
        counts["first_calls_static_unknown"] += 1  # the first call's split of its prefix
        main_id = _scenario_id(main.id)
        for session in [main, *main.subagents]:
            own = [p for p in prompts if p.session == session.id]
            tags = () if session is main else (f"parent:{main_id}",)
            name = main.id if session is main else f"{main.id}-{session.id}"
            counts["subagents"] += session is not main
            scenarios += _parts(name, own, origin, tags, counts)
    counts["scenarios"] = len(scenarios)
    return scenarios, dict(sorted(counts.items()))
