"""md.py, rule by rule: what ``text`` escapes and why, and the code span that
stays one whatever it holds; each checked on the raw Markdown and read back
with a real parser (tests/evals/report/mdparse.py)."""

from __future__ import annotations

import pytest

from packproof.evals.report.md import code, text
from tests.evals.report.mdparse import HOSTILE, hostile, inline_texts, live_nodes, missing


def reads(markdown: str) -> str:
    """The one paragraph (or cell) ``markdown`` renders to, as a reader sees it."""
    (shown,) = inline_texts(markdown)
    return shown


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
        ("Q&A &lt;", "Q&amp;A &amp;lt;"),
        ("[x](javascript:alert(1))", "\\[x\\](javascript:alert(1))"),
        ("![](http://e.com/p.png)", "!\\[\\](http\\://e.com/p.png)"),
        ("a|b", "a\\|b"),
        ("`x`", "\\`x\\`"),
        ("*a* ~~b~~ # c", "\\*a\\* \\~\\~b\\~\\~ \\# c"),
        ("back\\slash", "back\\\\slash"),
    ],
)
def test_text_escapes_what_would_be_markup_anywhere_in_a_line(raw: str, escaped: str) -> None:
    assert text(raw) == escaped
    assert reads(text(raw)) == raw and live_nodes(text(raw)) == []


def test_an_underscore_between_letters_stays_as_it_is_and_any_other_is_escaped() -> None:
    # CommonMark: an underscore inside a word cannot open or close emphasis
    assert text("anchors_lost") == "anchors_lost"
    assert text("_lost_ __init__ x_") == "\\_lost\\_ \\_\\_init\\_\\_ x\\_"
    assert reads(text("_a_ __b__")) == "_a_ __b__"


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("- item", "\\- item"),
        ("+ item", "\\+ item"),
        ("---", "\\---"),
        ("= =", "\\= ="),
        ("12. twelve", "12\\. twelve"),
        ("3) three", "3\\) three"),
        ("> quote", "&gt; quote"),
        ("# title", "\\# title"),
    ],
)
def test_text_that_starts_a_line_starts_no_block(raw: str, escaped: str) -> None:
    assert text(raw) == escaped
    markdown = f"{text(raw)}\n"
    assert reads(markdown) == raw  # one paragraph: no list, rule, heading or quote


@pytest.mark.parametrize("raw", ["-0.0500", "(in the baseline, not now)", "nDCG@10", "3.11.2"])
def test_numbers_and_prose_read_in_the_file_as_they_render(raw: str) -> None:
    assert text(raw) == raw


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("www.evil.com", "www\\.evil.com"),
        ("https://evil.com/x", "https\\://evil.com/x"),
        ("me@evil.com", "me\\@evil.com"),
    ],
)
def test_text_is_never_an_autolink(raw: str, escaped: str) -> None:
    assert text(raw) == escaped
    assert live_nodes(raw) != []  # GitHub (and the parser) would link it as written
    assert live_nodes(text(raw)) == [] and reads(text(raw)) == raw


def test_text_is_one_line_and_shows_control_characters() -> None:
    assert text("a\n\nb\tc\r\nd") == "a b c d"
    assert text("\x1b[2J") == "\\\\x1b\\[2J"
    assert reads(text("x\x1b]8;;http://e.com\x07y")) == "x\\x1b]8;;http://e.com\\x07y"


@pytest.mark.parametrize(
    ("raw", "span"),
    [
        ("bm25", "`bm25`"),
        ("a`b", "`` a`b ``"),
        ("``x``", "``` ``x`` ```"),
        ("`", "`` ` ``"),
        (" padded ", "`  padded  `"),
        ("", "` `"),
        ("<b>*x*</b>", "`<b>*x*</b>`"),
    ],
)
def test_a_code_span_closes_where_it_should_whatever_backticks_it_holds(
    raw: str, span: str
) -> None:
    assert code(raw) == span
    assert reads(code(raw)) == (raw or " ")


def test_a_code_span_shows_control_characters_and_stays_on_one_line() -> None:
    assert code("a\nb\x1b[0m") == "`a\\nb\\x1b[0m`"
    assert "\n" not in code("a\n# b")
    assert reads(f"- {code('a' + chr(10) + '# b')}\n") == "a\\n# b"


def test_a_pipe_in_code_is_escaped_in_a_table_cell_only() -> None:
    assert code("a|b") == "`a|b`" and code("a|b", cell=True) == "`a\\|b`"
    table = f"| x | y |\n|---|---|\n| {code('a|b', cell=True)} | {code('c', cell=True)} |\n"
    assert inline_texts(table) == ["x", "y", "a|b", "c"]
    assert reads(f"{code('a|b')}\n") == "a|b"


@pytest.mark.parametrize("i", range(len(HOSTILE)))
def test_every_hostile_string_reads_back_whole_as_text_or_code(i: int) -> None:
    value = hostile(i)
    cells = [text(value), code(value, cell=True)]
    table = "| a | b |\n|---|---|\n| " + " | ".join(cells) + " |\n"
    paragraph = f"{text(value)}\n\n- {code(value)}\n- {text(value)}\n"
    for markdown in (table, paragraph):
        assert live_nodes(markdown) == []
        assert missing(markdown, [value]) == []
    assert len(inline_texts(table)) == 4  # two headings, two cells: no extra cell or row
