"""LoCoMo (Maharana et al., ACL 2024) conversations as compiled scenarios.

One scenario per conversation; each of its questions is one turn (one packing
situation per question, evaluated as its own cells; in order, so prefix
stability across questions is measured too). Every turn sees the whole
conversation: the turns become items (id = ``dia_id``, speaker a -> ``user``,
speaker b -> ``assistant``, turn = session number, the text as spoken with the
image caption appended when the turn shared a photo) and, with
``with_summaries``, each session's summary as a ``summary`` item after it. The
prompt is the question, ``relevant`` its evidence ids, ``answers`` its gold
``answer`` (as text: some are numbers; an adversarial question's
``adversarial_answer`` is the wrong answer it baits, not a gold one, so such a
question has no answer), and the turn is tagged with its category by name
(``category:multi-hop``, ``category:temporal``, ``category:open-domain``,
``category:single-hop``, ``category:adversarial``, or ``category:unknown``). The
request's ``ts`` is the last session's date (items carry no time of their own in
``packproof.request.v1``).

Every dialogue turn becomes an item, so a turn that cannot be one is refused
with the file and its JSON pointer, never dropped: a session that is not a list
of turns, a turn that is not an object, a ``dia_id`` that is missing, null,
empty or not a string, a ``dia_id`` an earlier turn has, a null ``text``, no turn
at all, and a question or answer that is not one text (or number). Evidence ids are
checked against the conversation: a malformed entry such as ``"D8:6; D9:17"``
is split into the ids it holds (counted: malformed, recovered); an id naming no
turn is dropped (counted: dangling). Neither stops the import. The data's
licence is CC BY-NC 4.0: write the output outside the repository.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Final, NamedTuple

from packproof.evals.scenarios.format import Scenario, Turn
from packproof.packer.errors import InputError
from packproof.packer.jsonio import loads
from packproof.packer.request import parse_request, request_to_json

__all__ = ["CATEGORIES", "CATEGORY_TAG", "import_locomo"]

CATEGORIES: Final = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
CATEGORY_TAG: Final = "category:"  # a question's tag: the prefix, then its category's name
_DIA_ID: Final = re.compile(r"D\d+:\d+")
_ID_UNSAFE: Final = re.compile(r"[^a-z0-9._-]+")  # a scenario id is [a-z0-9._-]
_SESSION: Final = re.compile(r"session_(\d+)")
DEFAULT_GAP_S: Final = 30.0  # seconds between two turns of one session (replay)
_DATE_TIME: Final = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"


def _sessions(conv: Mapping[str, Any]) -> list[tuple[int, list[dict[str, Any]], str | None]]:
    """(number, turns, date) of every session, in session order. A session is a
    list of turns, each an object with its own ``dia_id`` (a non-empty string
    no other turn has): anything else is refused (pointers from the
    conversation object)."""
    out = []
    seen: dict[str, str] = {}
    for key, turns in conv.items():
        match = _SESSION.fullmatch(key)
        if not match:
            continue
        if not isinstance(turns, list):
            raise InputError(
                f"/conversation/{key}",
                "a session is a list of dialogue turns",
                expected="an array",
                found=turns,
            )
        for i, turn in enumerate(turns):
            _check_turn(turn, f"{key}/{i}", seen)
        number = int(match.group(1))
        date = conv.get(f"session_{number}_date_time")
        out.append((number, turns, str(date) if date else None))
    return sorted(out, key=lambda s: s[0])


def _check_turn(turn: Any, where: str, seen: dict[str, str]) -> None:
    """A dialogue turn (``session_N/i``): an object whose ``dia_id`` names it
    alone (its item's id, and what evidence cites)."""
    at = f"/conversation/{where}"
    if not isinstance(turn, dict):
        raise InputError(at, "not a dialogue turn", expected="an object", found=turn)
    ident = turn.get("dia_id")
    if not isinstance(ident, str) or not ident:
        raise InputError(
            f"{at}/dia_id",
            "a dialogue turn needs its dia_id (its item's id)",
            expected="a non-empty string like 'D1:3'",
            found=ident,
        )
    if ident in seen:
        raise InputError(
            f"{at}/dia_id",
            f"dia_id {ident!r} is already the id of the turn at {seen[ident]}: each turn is "
            "one item, named by its own dia_id",
        )
    seen[ident] = where


def _session_start(conv: Mapping[str, Any], number: int, where: str) -> datetime:
    key = f"session_{number}_date_time"
    text = conv.get(key)
    try:
        return datetime.strptime(" ".join(str(text).split()), _DATE_TIME)
    except ValueError:
        raise InputError(
            f"{where}/conversation/{key}",
            "not a session date-time (a replay times its steps by it)",
            expected="like '1:56 pm on 8 May, 2023'",
            found=text,
        ) from None


class _Room(NamedTuple):
    """The largest ``--gap`` a conversation's replay takes: with a longer one,
    the last turn of ``session`` (of ``turns`` turns) would come after the
    start of session ``following``, ``apart`` seconds after its own."""

    gap: float
    sample: str
    session: int
    turns: int
    following: int
    apart: float
    late: bool  # whether the gap asked for is past it


def _replay_turns(
    sample: Mapping[str, Any], c: int, normal: Mapping[str, Any], gap_s: float, path: Path
) -> tuple[list[Turn], _Room | None]:
    """Every dialogue turn as a replay step: it appends its item and packs with
    its text as the prompt. Its time is its session's start (seconds after the
    first session's) plus ``gap_s`` per earlier turn of the session, so the cache
    goes cold between sessions as it would. Also the conversation's tightest
    :class:`_Room` for ``gap_s`` (none with one session)."""
    conv = sample["conversation"]
    items = normal["items"]
    position = {it["id"]: i for i, it in enumerate(items)}
    first: datetime | None = None
    sessions: list[tuple[int, float, list[int]]] = []  # number, start (s), item positions
    for number, session, _date in _sessions(conv):
        if not session:
            continue
        try:
            start = _session_start(conv, number, f"/{c}")
        except InputError as exc:
            raise exc.with_source(str(path)) from None
        first = first or start
        base = (start - first).total_seconds()
        if sessions and base < sessions[-1][1]:
            raise InputError(
                f"/{c}/conversation/session_{number}_date_time",
                "sessions out of time order (a replay needs steps in time order)",
                expected=f"a start >= {sessions[-1][1]:g} s after the first session",
                found=conv.get(f"session_{number}_date_time"),
                source=str(path),
            )
        sessions.append((number, base, [position[t["dia_id"]] for t in session]))
    turns: list[Turn] = []
    rooms: list[_Room] = []
    latest = 0
    for (number, base, at), after in zip(sessions, [*sessions[1:], None], strict=True):
        for k, i in enumerate(at):
            latest = max(latest, items[i]["turn"])  # as parse_request would default it
            request = {
                **normal,
                "items": items[: i + 1],
                "prompt": items[i]["text"],
                "current_turn": latest,
            }
            turns.append(Turn(request, (), {}, ("step",), t=base + k * gap_s))
        if after is not None and len(at) > 1:
            apart = after[1] - base
            late = turns[-1].t is not None and turns[-1].t > after[1]
            name = str(sample.get("sample_id", f"conv-{c}"))
            room = _Room(apart / (len(at) - 1), name, number, len(at), after[0], apart, late)
            rooms.append(room)
    return turns, min(rooms, default=None)


def _check_gap(rooms: Sequence[_Room], gap_s: float, path: Path) -> None:
    """Refuse a ``--gap`` that puts a session's last turn after the next
    session's start (its steps would go back in time), naming the session that
    binds and the largest gap the whole file takes."""
    if not any(r.late for r in rooms):
        return
    tight = min(rooms)  # late too: its room is the smallest
    raise InputError(
        "--gap",
        f"{gap_s:g} s between two turns of a session puts the last of the {tight.turns} turns "
        f"of {tight.sample}'s session {tight.session} after session {tight.following}, which "
        f"starts {tight.apart:g} s after it: a replay keeps its steps in time order",
        expected=f"--gap <= {math.floor(tight.gap * 1000) / 1000:g} for this file",
        found=gap_s,
        source=str(path),
    )


def _string(value: Any, where: str, *, null: bool = True, source: str | None = None) -> str:
    """A text field: a string, or (when ``null`` allows it) null for an empty text."""
    if value is None and null:
        return ""
    if not isinstance(value, str):
        expected = "a string or null" if null else "a string"
        raise InputError(where, "wrong type", expected=expected, found=value, source=source)
    return value


def _answer(value: Any, where: str, source: str) -> tuple[str, ...]:
    """A question's gold answer as text (a number too), or none; a list is refused."""
    if value is None or value == "":
        return ()
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return (str(value),)  # a JSON number is finite (jsonio refuses NaN)
    what = "a string or a number"
    raise InputError(where, "not a gold answer", expected=what, found=value, source=source)


def _items(sample: Mapping[str, Any], with_summaries: bool) -> list[dict[str, Any]]:
    conv = sample["conversation"]
    roles = {
        _string(conv.get("speaker_a"), "/conversation/speaker_a"): "user",
        _string(conv.get("speaker_b"), "/conversation/speaker_b"): "assistant",
    }
    summaries = sample.get("session_summary") or {}
    items: list[dict[str, Any]] = []
    for number, turns, _date in _sessions(conv):  # every turn an object with its own dia_id
        for i, turn in enumerate(turns):
            ident = turn["dia_id"]
            at = f"/conversation/session_{number}/{i}"
            text = _string(turn.get("text"), f"{at}/text", null=False)  # no empty stand-in
            caption = _string(turn.get("blip_caption"), f"{at}/blip_caption")
            if caption:
                text += f" [shared a photo: {caption}]"
            role = roles.get(_string(turn.get("speaker"), f"{at}/speaker"), "user")
            items.append({"id": ident, "text": text, "turn": number, "role": role})
        summary = (
            summaries.get(f"session_{number}_summary") if isinstance(summaries, dict) else None
        )
        if with_summaries and summary:
            items.append(
                {
                    "id": f"S{number}:summary",
                    "text": str(summary),
                    "turn": number,
                    "kind": "summary",
                    "role": "system",
                }
            )
    if all(item.get("kind") == "summary" for item in items):  # no turn: nothing to find
        raise InputError("/conversation", "a conversation without dialogue turns")
    for ordinal, item in enumerate(items):
        item["ordinal"] = ordinal
    return items


def _evidence(raw: Iterable[Any], known: set[str], counts: Counter[str]) -> list[str]:
    """Valid evidence ids, in order, without repeats; problems are counted."""
    out: list[str] = []
    for entry in raw:
        text = str(entry).strip()
        found = _DIA_ID.findall(text)
        if found != [text]:
            counts["malformed"] += 1
            counts["recovered"] += len(found)
        for ident in found:
            if ident not in known:
                counts["dangling"] += 1
            elif ident not in out:
                out.append(ident)
    return out


def import_locomo(
    path: Path,
    *,
    budget: int = 1024,
    fresh_tail: int = 4,
    with_summaries: bool = False,
    token_counter: str = "lcm",
    replay: bool = False,
    gap_s: float | None = None,
) -> tuple[list[Scenario], dict[str, Any]]:
    """Scenarios from a LoCoMo file (original format), and a report of what
    was found: conversations, questions, items, and evidence problems. With
    ``replay``, each conversation is a replay (:func:`_replay_turns`), its
    turns ``gap_s`` apart within a session (default :data:`DEFAULT_GAP_S`)."""
    if replay and with_summaries:
        raise InputError(
            "--with-summaries",
            "a replay's steps are the dialogue turns; session summaries are not sent in it",
            source="usage",
        )
    if gap_s is not None and not replay:
        raise InputError(
            "--gap",
            "only a replay times its turns: give --replay too, or leave out --gap",
            source="usage",
        )
    gap = DEFAULT_GAP_S if gap_s is None else gap_s
    try:
        data = loads(path.read_bytes(), source=str(path))
    except OSError as exc:
        raise InputError("", f"cannot read file: {exc.strerror}", source=str(path)) from None
    if not isinstance(data, list):
        raise InputError(
            "/",
            "not a LoCoMo file",
            expected="a list of conversations",
            found=data,
            source=str(path),
        )
    counts: Counter[str] = Counter()
    scenarios: list[Scenario] = []
    seen_ids: dict[str, int] = {}
    rooms: list[_Room] = []
    for c, sample in enumerate(data):
        if (
            not isinstance(sample, dict)
            or not isinstance(sample.get("conversation"), dict)
            or not isinstance(sample.get("qa"), list)
        ):
            raise InputError(
                f"/{c}",
                "not a LoCoMo conversation",
                expected="an object with conversation and qa",
                found=sample,
                source=str(path),
            )
        sample_id = str(sample.get("sample_id", f"conv-{c}"))
        scenario_id = "locomo-" + _ID_UNSAFE.sub("-", sample_id.lower())
        if scenario_id in seen_ids:  # the scenario ids, and so the cells, would collide
            raise InputError(
                f"/{c}/sample_id",
                f"sample {sample_id!r} imports as {scenario_id!r}, as /{seen_ids[scenario_id]} "
                "does",
                source=str(path),
            )
        seen_ids[scenario_id] = c
        try:
            items = _items(sample, with_summaries)
        except InputError as exc:
            raise InputError(
                f"/{c}{exc.where}",
                exc.message,
                expected=exc.expected,
                found=exc.found,
                source=str(path),
            ) from None
        known = {it["id"] for it in items}
        base: dict[str, Any] = {
            "items": items,
            "budget_tokens": budget,
            "token_counter": token_counter,
            "fresh_tail": {"count": fresh_tail},
        }
        dates = [d for _, _, d in _sessions(sample["conversation"]) if d]
        if dates:
            base["ts"] = dates[-1]  # the questions come after the last session
        normal = request_to_json(parse_request(base), with_strategy=False)
        turns = []
        steps, room = _replay_turns(sample, c, normal, gap, path) if replay else ([], None)
        rooms += [room] if room else []
        turns.extend(steps)
        asked_at = steps[-1].t + gap if steps and steps[-1].t is not None else None
        for q, qa in enumerate(sample["qa"]):
            if not isinstance(qa, dict):
                counts["malformed_questions"] += 1
                continue
            relevant = _evidence(qa.get("evidence") or [], known, counts)
            counts["questions"] += 1
            counts["without_evidence"] += not relevant
            category = qa.get("category")
            name = CATEGORIES.get(category, "unknown") if isinstance(category, int) else "unknown"
            answers = _answer(qa.get("answer"), f"/{c}/qa/{q}/answer", str(path))
            at, source = f"/{c}/qa/{q}/question", str(path)
            question = _string(qa.get("question"), at, null=False, source=source)
            turns.append(
                Turn(
                    {**normal, "prompt": question},
                    tuple(relevant),
                    {},
                    (CATEGORY_TAG + name,),
                    t=asked_at,
                    probe=replay,
                    answers=answers,
                )
            )
        if turns:
            what = (
                f"a replay of {len(steps)} dialogue turns, then {len(turns) - len(steps)} "
                "questions as probes"
                if replay
                else f"{len(turns)} questions over {len(items)} items"
            )
            scenarios.append(
                Scenario(
                    id=scenario_id,
                    why=f"LoCoMo {sample_id}: {what}.",
                    tags=("locomo", "replay", sample_id) if replay else ("locomo", sample_id),
                    turns=tuple(turns),
                    file=path.name,
                    line=c + 1,
                )
            )
        counts["conversations"] += 1
        counts["items"] += len(items)
    _check_gap(rooms, gap, path)
    return scenarios, {"file": path.name, **dict(sorted(counts.items()))}
