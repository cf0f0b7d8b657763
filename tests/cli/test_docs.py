"""``packproof docs``: the guides ship in the package; with no topic a list with
one line each, with one the page as written; an unknown topic is one line, exit 2."""

from __future__ import annotations

import pytest

from packproof.cli import main
from packproof.cli.docs import guides
from tests.paths import ROOT


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_every_page_of_docs_is_a_topic() -> None:
    assert sorted(guides()) == sorted(p.stem for p in (ROOT / "docs").glob("*.md"))


def test_without_a_topic_it_lists_each_guide_with_its_title(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["docs"], capsys)
    assert code == 0
    lines = out.splitlines()
    titles = {line.split(maxsplit=1)[0]: line.split(maxsplit=1)[1] for line in lines[:-2]}
    # "gate" is the page docs/gate.md, whose first heading is "# The gate"
    assert titles["gate"] == "The gate"
    assert titles["ci"] == "Gating your packer in CI"
    assert len({line.index(titles[t]) for t, line in zip(titles, lines, strict=False)}) == 1
    assert len([line for line in lines if line.strip()]) == len(guides()) + 1
    assert lines[-1] == "packproof docs TOPIC prints one (Markdown)"


@pytest.mark.parametrize("topic", ["gate", "gate.md", "docs/gate.md"])
def test_a_topic_prints_its_page_as_written(topic: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["docs", topic], capsys)
    assert code == 0
    assert out == (ROOT / "docs/gate.md").read_text("utf-8")


def test_an_unknown_topic_is_one_line_with_the_closest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(["docs", "gates"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert "no guide on 'gates'; did you mean 'gate'?" in err
    assert f"expected one of {', '.join(sorted(guides()))}, found" in err
