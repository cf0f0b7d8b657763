"""answer_token_recall and its ceiling: hand-computed content words and shares."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packproof.evals.metrics.answers import STOPWORDS_FILE, Answers, content_words, stopwords
from packproof.evals.metrics.cell import cell_metrics
from packproof.evals.run.runner import Task, run_task
from packproof.evals.scenarios.format import Scenario, Turn
from packproof.packer import pack
from packproof.packer.pipeline import assemble
from packproof.packer.request import parse_items, parse_request, request_to_json
from packproof.packer.strategies import build_strategy


def test_the_shipped_stopwords_are_the_glasgow_list() -> None:
    text = resources.files("packproof.evals").joinpath("data", STOPWORDS_FILE).read_text("utf-8")
    assert "Glasgow" in text and "BSD" in text  # its source and licence, in the header
    words = stopwords()
    assert len(words) == 318
    assert {"the", "is", "no", "may", "two"} <= words and "seven" not in words
    assert all(w == w.strip().lower() and not w.startswith("#") for w in words)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The dog is called Rex.", {"dog", "called", "rex"}),  # stopwords dropped
        ("REX, rex and Rex", {"rex"}),  # lower-cased, a set
        ("7 May 2023", {"7", "2023"}),  # numbers stay (even of one digit); "may" is a stopword
        ("Melanie's daughter, don't", {"melanie", "daughter", "don"}),  # one-letter tokens go
        ("Café in Zürich; naïve_user", {"café", "zürich", "naïve", "user"}),  # Unicode words
        ("No", set()),
        ("", set()),
    ],
    ids=["stopwords", "case", "numbers", "one-letter", "unicode", "only-stopwords", "empty"],
)
def test_content_words(text: str, expected: set[str]) -> None:
    assert content_words(text) == expected


def _items(*texts: str) -> list[dict[str, object]]:
    return [{"id": f"m{n}", "text": t, "tokens": 2, "ordinal": n} for n, t in enumerate(texts)]


def _mask(n: int, *packed: int) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    mask[list(packed)] = True
    return mask


def test_recall_is_the_share_of_answer_words_in_the_packed_texts() -> None:
    items = parse_items(
        _items("We met in Paris.", "It was in June 2023.", "Nothing here.", "paris again"),
        "lcm",
    )
    answers = Answers(["Paris, in June 2023"], items)  # content words: paris, june, 2023
    assert answers.ceiling == 1.0
    assert answers.recall(_mask(4)) == 0.0
    assert answers.recall(_mask(4, 0)) == pytest.approx(1 / 3)
    assert answers.recall(_mask(4, 3)) == pytest.approx(1 / 3)  # any case, any item
    assert answers.recall(_mask(4, 0, 3)) == pytest.approx(1 / 3)  # a word counts once
    assert answers.recall(_mask(4, 1, 2)) == pytest.approx(2 / 3)
    assert answers.recall(_mask(4, 0, 1)) == 1.0


def test_the_ceiling_is_what_the_whole_conversation_holds() -> None:
    items = parse_items(_items("Rex is a good dog.", "He likes the park."), "lcm")
    answers = Answers(["Rex the beagle"], items)  # rex, beagle: beagle is never said
    assert answers.ceiling == 0.5
    assert answers.recall(_mask(2, 0, 1)) == 0.5 and answers.recall(_mask(2, 1)) == 0.0


def test_alternative_answers_score_the_best_one() -> None:
    items = parse_items(_items("She moved to Sweden.", "Stockholm is cold."), "lcm")
    answers = Answers(["Stockholm, Sweden", "Sweden", "the", "Gothenburg"], items)
    assert answers.ceiling == 1.0
    assert answers.recall(_mask(2, 0)) == 1.0  # "Sweden" is fully there
    assert answers.recall(_mask(2, 1)) == 0.5  # half of "Stockholm, Sweden"
    assert answers.recall(_mask(2)) == 0.0


def test_no_answer_or_no_content_word_is_undefined() -> None:
    items = parse_items(_items("No, it was not."), "lcm")
    for asked in ([], ["No"], ["", "it was"]):
        answers = Answers(asked, items)
        assert answers.ceiling is None and answers.recall(_mask(1, 0)) is None


def test_cell_metrics_report_both() -> None:
    items = _items("Rex is the dog.", "Unrelated chatter.", "The dog was born in 2022.")
    result = pack({"items": items, "budget_tokens": 4, "prompt": "q", "strategy": "chronological"})
    assert result.selected_ids == ["m1", "m2"]  # newest first while they fit
    m = cell_metrics(result, [], None, answers=Answers(["Rex, 2022"], result.items))
    assert m["answer_token_recall"] == 0.5 and m["answer_token_ceiling"] == 1.0
    assert m["evidence_recall"] is None  # free of evidence labels
    m = cell_metrics(result, [], None)
    assert m["answer_token_recall"] is None and m["answer_token_ceiling"] is None


def test_the_runner_reuses_per_turn_values_only_where_they_hold() -> None:
    """Every cell's answer metrics, and the ranking metrics the runner computes
    once per spec and reuses at every budget, equal a fresh computation."""
    texts = [
        "Ana adopted a dog in May.",
        "The weather was grey.",
        "The dog is called Rex.",
        "Ben moved to Sweden in 2022.",
        "They talked about lunch.",
        "Rex loves the park near Stockholm.",
    ]
    items = [
        {"id": f"m{n}", "text": t, "ordinal": n, "anchored": n == 1} for n, t in enumerate(texts)
    ]
    base = request_to_json(
        parse_request({"items": items, "budget_tokens": 10, "fresh_tail": {"count": 1}}),
        with_strategy=False,
    )
    asked = [
        ("what is the dog called", ("m2",), ("Rex",)),
        ("where did Ben move", ("m3", "m5"), ("Stockholm, Sweden", "Sweden")),
        ("what is the weather", ("m1",), ()),  # gold anchored: no ranking metrics
    ]
    turns = tuple(
        Turn({**base, "prompt": prompt}, relevant, {}, answers=answers)
        for prompt, relevant, answers in asked
    )
    scenario = Scenario("answers", "Answers through the runner.", (), turns, "x.yaml", 1)
    specs, budgets = ["chronological", "bm25"], [12, 24, 60]
    records = run_task(Task("suite", scenario, (0, 1, 2)), specs, budgets)
    assert len(records) == len(asked) * len(specs) * len(budgets)
    for r in records:
        turn = turns[r["turn"]]
        spec = build_strategy(r["spec"], {}).spec()
        result = assemble(
            parse_request({**turn.request, "strategy": spec, "budget_tokens": r["budget"]})
        )
        fresh = cell_metrics(
            result, turn.relevant, None, answers=Answers(turn.answers, result.items)
        )
        for name in ("ndcg@10", "mrr", "answer_token_recall", "answer_token_ceiling"):
            assert r["metrics"][name] == fresh[name], (r["key"], name)
    by_turn = {r["turn"]: r["metrics"] for r in records if r["budget"] == 60}
    assert by_turn[2]["mrr"] is None and by_turn[2]["answer_token_recall"] is None
    assert by_turn[1]["answer_token_ceiling"] == 1.0


_WORDS = ["paris", "june", "2023", "the", "beagle", "Rex", "a", "7", "café"]


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.lists(st.sampled_from(_WORDS), max_size=5), min_size=1, max_size=12),
    answers=st.lists(st.lists(st.sampled_from(_WORDS), max_size=3), max_size=3),
    window=st.tuples(st.integers(0, 12), st.integers(0, 12)),
    seed=st.integers(0, 2**16),
)
def test_a_window_reads_its_tables_words_as_a_table_of_its_own_would(
    texts: list[list[str]], answers: list[list[str]], window: tuple[int, int], seed: int
) -> None:
    """A turn's answers read their table's word index (a replay step's, its base
    table's): the recall and ceiling of a direct reading of the texts, for a
    window and for the same items as a table of their own."""
    table = parse_items(_items(*(" ".join(words) for words in texts)), "lcm")
    start = min(window[0], len(table))
    stop = min(max(start, window[1]), len(table))
    view = table.window(start, stop)
    own = table.take(np.arange(start, stop), subset=False)
    assert view.base_window() == (table, start) and own.base_window() == (own, 0)
    asked = [" ".join(words) for words in answers]
    mask = np.random.default_rng(seed).random(stop - start) < 0.5

    def direct(packed: np.ndarray) -> float | None:
        held = set().union(*(content_words(own.texts[i]) for i in np.flatnonzero(packed)))
        wanted = [w for w in map(content_words, asked) if w]
        return max((len(w & held) / len(w) for w in wanted), default=None)

    for items in (view, own):
        judged = Answers(asked, items)
        assert judged.ceiling == direct(np.ones(stop - start, dtype=bool))
        assert judged.recall(mask) == direct(mask)
