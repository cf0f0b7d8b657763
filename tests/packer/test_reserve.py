"""Fresh tail: lossless-claw's walk with the last-user anchor and token cap."""

from __future__ import annotations

from .helpers import msg, reasons, run


def chat(roles: str, tokens: int = 2) -> list[dict[str, object]]:
    """Messages m0.. with roles from a string of u/a/t letters."""
    names = {"u": "user", "a": "assistant", "t": "tool"}
    return [msg(f"m{i}", role=names[r], tokens=tokens, ordinal=i) for i, r in enumerate(roles)]


def tail_ids(result: object) -> list[str]:
    return [i for i, r in reasons(result).items() if "protected_tail" in r]  # type: ignore[arg-type]


def test_count_newest_messages_are_protected() -> None:
    assert tail_ids(run(chat("uauau"), 100, fresh_tail={"count": 2})) == ["m3", "m4"]


def test_walk_continues_to_the_newest_user_message() -> None:
    # count 1 would protect only m4 (assistant); the walk goes on to m2 (user)
    assert tail_ids(run(chat("uauat"), 100, fresh_tail={"count": 1})) == ["m2", "m3", "m4"]


def test_no_user_message_means_count_alone_decides() -> None:
    assert tail_ids(run(chat("aaaa"), 100, fresh_tail={"count": 2})) == ["m2", "m3"]


def test_count_zero_or_no_messages_protects_nothing() -> None:
    assert tail_ids(run(chat("uau"), 100, fresh_tail={"count": 0})) == []
    summaries = [msg("s0", kind="summary", tokens=2, ordinal=0)]
    assert tail_ids(run(summaries, 100, fresh_tail={"count": 3})) == []


def test_summaries_are_skipped_by_the_walk_but_inside_the_tail() -> None:
    items = [
        *chat("ua"),
        msg("s", kind="summary", tokens=5, ordinal=5),
        msg("m9", role="user", tokens=2, ordinal=9),
    ]
    # walk: m9 (user), m1 -> count 2 reached; tail is every item with ordinal >= 1
    assert tail_ids(run(items, 100, fresh_tail={"count": 2})) == ["m1", "s", "m9"]


def test_token_cap_stops_before_an_overflowing_message() -> None:
    items = chat("uaua", tokens=4)
    # cap 9: m3 (4), m2 (user, 8); m1 would make 12 > 9 -> stop
    assert tail_ids(run(items, 100, fresh_tail={"count": 4, "max_tokens": 9})) == ["m2", "m3"]


def test_token_cap_never_drops_the_newest_user_message_or_the_first_item() -> None:
    items = chat("uaa", tokens=10)
    # cap 5 is smaller than any message: the walk still reaches m0, the newest user
    assert tail_ids(run(items, 100, fresh_tail={"count": 1, "max_tokens": 5})) == ["m0", "m1", "m2"]
    assert tail_ids(run(chat("u", tokens=10), 100, fresh_tail={"count": 3, "max_tokens": 1})) == [
        "m0"
    ]


def test_tail_is_kept_even_over_budget_and_flagged() -> None:
    result = run(chat("uaua", tokens=10), 15, fresh_tail={"count": 3})
    assert result.selected_ids == ["m1", "m2", "m3"]
    trace = result.to_dict()["trace"]
    assert trace["budget"]["over_budget"] is True
    assert trace["budget"]["remaining_tokens"] == 0
    assert reasons(result)["m0"] == ["budget_tokens_exceeded"]
