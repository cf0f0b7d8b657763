"""Every command, and every argument of every command, says what it is for in
``--help``; and no help text points at a file the installed package does not have."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from packproof.cli import build_parser
from packproof.cli.docs import guides


def parsers(
    parser: argparse.ArgumentParser, name: str | None = None
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``parser`` and every subparser under it, by command line (``packproof gate``)."""
    name = name or parser.prog
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                yield from parsers(sub, f"{name} {command}")


def commands_without_help(parser: argparse.ArgumentParser) -> list[str]:
    """Subcommands listed without a line of help in ``packproof --help``."""
    out = []
    for name, p in parsers(parser):
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                listed = {a.dest: a.help for a in action._choices_actions}
                out += [f"{name} {c}" for c in action.choices if not listed.get(c)]
    return out


def arguments_without_help(parser: argparse.ArgumentParser) -> list[str]:
    """Every argument (positional or optional, but -h) with no help text."""
    return [
        f"{name} {'/'.join(a.option_strings) or a.dest}"
        for name, p in parsers(parser)
        for a in p._actions
        if not isinstance(a, argparse._HelpAction) and not (a.help and a.help.strip())
    ]


def all_help(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    texts = []
    for name, p in parsers(parser):
        texts += [(name, p.description or ""), (name, p.epilog or "")]
        texts += [(name, str(a.help or "")) for a in p._actions]
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                texts += [(name, str(c.help or "")) for c in a._choices_actions]
    return texts


def test_every_argument_of_every_command_has_help() -> None:
    assert arguments_without_help(build_parser()) == []


def test_every_command_has_a_line_of_help() -> None:
    assert commands_without_help(build_parser()) == []


def test_the_help_check_finds_an_argument_without_help() -> None:
    parser = argparse.ArgumentParser(prog="x")
    sub = parser.add_subparsers(dest="command", help="the command")
    p = sub.add_parser("go", help="go somewhere")
    p.add_argument("where")
    p.add_argument("--fast", action="store_true", help="quickly")
    sub.add_parser("stay")
    assert arguments_without_help(parser) == ["x go where"]
    assert commands_without_help(parser) == ["x stay"]


def test_no_help_points_at_a_docs_file_or_a_make_target() -> None:
    """The wheel has no docs/ folder and no Makefile: help names `packproof docs TOPIC`."""
    bad = [
        (name, text)
        for name, text in all_help(build_parser())
        if re.search(r"docs/\S+\.md|\bmake [a-z]", text)
    ]
    assert bad == []


def test_every_guide_a_help_text_names_exists() -> None:
    named = {
        topic
        for _, text in all_help(build_parser())
        for topic in re.findall(r"packproof docs ([a-z][a-z-]*)", text)
    }
    assert named, "no help text names a guide"
    assert named - set(guides()) == set()


@pytest.mark.parametrize("command", [name for name, _ in parsers(build_parser())])
def test_every_command_prints_its_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    from packproof.cli import main

    with pytest.raises(SystemExit) as exit_:
        main([*command.split()[1:], "--help"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: {command}")
