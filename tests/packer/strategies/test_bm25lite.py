"""bm25lite: lossless-claw PR #180, its own unit and integration cases ported."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from packproof.packer.strategies.bm25lite import lcm_score
from packproof.packer.text import lcm_terms

from ..helpers import msg, run
from ..lcm_reference import lcm_score_ref


def score(item: str, prompt: str) -> float:
    return lcm_score(lcm_terms(item), list(dict.fromkeys(lcm_terms(prompt))))


# -- PR #180 unit tests of tokenize/score --------------------------------------


def test_empty_inputs_score_zero() -> None:
    assert score("", "database") == 0.0
    assert score("database migration", "") == 0.0


def test_no_overlap_scores_zero() -> None:
    assert score("weather is nice", "database migration") == 0.0


def test_more_matching_terms_score_higher() -> None:
    assert score("database migration plan", "database migration") > score(
        "database cleanup plan", "database migration"
    )


def test_repeated_prompt_words_give_the_same_score() -> None:
    assert score("database migration", "database database database") == score(
        "database migration", "database"
    )


def test_scoring_is_case_insensitive() -> None:
    assert score("Database MIGRATION", "database migration") == score(
        "database migration", "DATABASE Migration"
    )


def test_single_character_prompt_terms_are_ignored() -> None:
    assert score("a b c", "a b c") == 0.0


def test_score_is_tf_over_length_by_hand() -> None:
    # item terms: [the, db, db, migration] (4); prompt distinct: [db, migration]
    assert score("the db db migration", "db migration") == pytest.approx(2 / 4 + 1 / 4)
    assert score("the db db migration", "db migration") == lcm_score_ref(
        "the db db migration", "db migration"
    )


# -- PR #180 integration tests of the assembler ----------------------------------
# Budget 75-80, fresh tail 4, four 4-token "Fresh message i" messages.


def fresh_tail(tokens: int | None = 4) -> list[dict[str, object]]:
    """lossless-claw's fixture stores each message's token count (4)."""
    return [
        msg(
            f"f{i}",
            f"Fresh message {i}",
            "user" if i % 2 == 0 else "assistant",
            ordinal=10 + i,
            tokens=tokens,
        )
        for i in range(4)
    ]


def summaries() -> list[dict[str, object]]:
    return [
        msg(
            "s_db",
            "Decided the database migration runs before the deploy",
            kind="summary",
            tokens=40,
            ordinal=1,
        ),
        msg("s_lunch", "Chatted about lunch and the weather", kind="summary", tokens=40, ordinal=2),
    ]


def test_estimated_fresh_messages_cost_their_rendering() -> None:
    """Without stored counts, a user message costs its 15 characters (4 tokens) and
    an assistant one its content blocks, [{"type":"text","text":"..."}] (42: 11)."""
    result = run(fresh_tail(tokens=None), 80)
    assert result.items.tokens.tolist() == [4, 11, 4, 11]


@pytest.mark.parametrize("budget", [75, 80])
def test_relevant_older_summary_beats_irrelevant_newer_one(budget: int) -> None:
    items = summaries() + fresh_tail()
    prompt = "what about the database migration?"
    lite = run(items, budget, "bm25lite", prompt=prompt, fresh_tail={"count": 4})
    chrono = run(items, budget, "chronological", prompt=prompt, fresh_tail={"count": 4})
    assert lite.selected_ids == ["s_db", "f0", "f1", "f2", "f3"]
    assert chrono.selected_ids == ["s_lunch", "f0", "f1", "f2", "f3"]
    assert lite.mode == "ranked"


@pytest.mark.parametrize("prompt", [None, "", "   ", "? !"])
def test_no_or_empty_prompt_is_chronological(prompt: str | None) -> None:
    result = run(summaries() + fresh_tail(), 80, "bm25lite", prompt=prompt, fresh_tail={"count": 4})
    assert result.mode == "chronological"
    assert result.ranking.fallback == "prompt_has_no_searchable_terms"
    assert result.selected_ids == ["s_lunch", "f0", "f1", "f2", "f3"]


def test_budget_that_fits_everything_ignores_the_prompt() -> None:
    result = run(
        summaries() + fresh_tail(), 200, "bm25lite", prompt="database", fresh_tail={"count": 4}
    )
    assert result.mode == "full-fit"
    assert result.selected_ids == ["s_db", "s_lunch", "f0", "f1", "f2", "f3"]


@pytest.mark.parametrize(("budget", "kept"), [(56, True), (55, False)])
def test_single_evictable_item_is_kept_iff_it_fits(budget: int, kept: bool) -> None:
    items = [summaries()[0], *fresh_tail()]  # 40 + 16
    result = run(items, budget, "bm25lite", prompt="database", fresh_tail={"count": 4})
    assert ("s_db" in result.selected_ids) is kept


def test_output_is_in_ordinal_order() -> None:
    items = list(reversed(summaries() + fresh_tail()))
    result = run(items, 100, "bm25lite", prompt="lunch weather", fresh_tail={"count": 4})
    ordinals = result.items.ordinals[result.included].tolist()
    assert ordinals == sorted(ordinals)


def test_ties_go_to_the_newer_item_and_misfits_are_skipped_not_stopped() -> None:
    items = [
        msg("old", "alpha beta", tokens=5, ordinal=0),
        msg("mid", "alpha gamma", tokens=5, ordinal=1),  # same score as "old"
        msg("big", "alpha", tokens=50, ordinal=2),  # best score, does not fit
        msg("zero", "unrelated text", tokens=3, ordinal=3),
    ]
    result = run(items, 9, "bm25lite", prompt="alpha")
    # big (1.0) skipped; mid and old tie at 0.5 -> mid first; then zero fills (3 <= 4)
    assert result.selected_ids == ["mid", "zero"]
    order = [result.items.ids[i] for i in result.evictable[result.rank[result.evictable].argsort()]]
    assert order == ["big", "mid", "old", "zero"]


WORDS = ["database", "db", "Migration", "the", "a", "数据库", "café", "x1", "login-flow", ""]


@given(
    texts=st.lists(
        st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join), min_size=1, max_size=12
    ),
    prompt=st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join),
)
def test_vectorised_scores_are_lcm_score_exactly(texts: list[str], prompt: str) -> None:
    items = [msg(f"i{k}", t, tokens=1, ordinal=k) for k, t in enumerate(texts)]
    result = run(items, 1, "bm25lite", prompt=prompt)
    prompt_terms = list(dict.fromkeys(lcm_terms(prompt)))
    if result.ranking.scores is None:
        assert not prompt_terms
        return
    expected = [lcm_score(lcm_terms(t), prompt_terms) for t in texts]
    assert result.scores().tolist() == expected  # the same floats, not approximately
