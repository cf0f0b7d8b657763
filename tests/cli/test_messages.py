"""Every message, help text and schema description that names a command names one
that exists where the user is: a ``packproof`` subcommand (a guide ``packproof docs``
has, a schema ``packproof schema`` prints), never a make target or a docs/ file, which
an installed package does not have. Docstrings and comments are for readers of the
code, in the repository, and are not checked."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path

from packproof.cli import build_parser
from packproof.cli.docs import guides
from packproof.cli.library import shipped_schemas
from tests.paths import ROOT

# what runs where packproof is installed; evals/bench/ runs only in the repository
CODE = ("packproof", "packer", "evals")
REPOSITORY_ONLY = ("evals/bench",)
DEAD_ENDS = re.compile(r"\bdocs/[\w-]+\.md|`make [a-z]|\bmake (?:baseline|eval|gate|golden)\b")
COMMAND = re.compile(r"`packproof ([a-z][a-z-]*)(?: ([a-z][a-z0-9.-]*))?")


def docstrings(tree: ast.AST) -> set[int]:
    """ids of the string nodes that are docstrings (module, class, function)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def messages(path: Path) -> Iterator[str]:
    """The string constants of a module that are not docstrings; the parts of an
    f-string together, as the message reads."""
    tree = ast.parse(path.read_text("utf-8"))
    skip = docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            yield "".join(
                v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}"
                for v in node.values
            )
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
        ):
            yield node.value


def descriptions(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        for key, child in value.items():
            if key == "description" and isinstance(child, str):
                yield child
            yield from descriptions(child)
    elif isinstance(value, list):
        for child in value:
            yield from descriptions(child)


def user_facing() -> Iterator[tuple[str, str]]:
    """(where, text) for every message of the code and every schema description."""
    for folder in CODE:
        for path in sorted((ROOT / folder).rglob("*.py")):
            where = str(path.relative_to(ROOT))
            if not where.startswith(REPOSITORY_ONLY):
                yield from ((where, text) for text in messages(path))
    for path in sorted([*ROOT.glob("packer/schemas/*.json"), *ROOT.glob("evals/schemas/*.json")]):
        where = str(path.relative_to(ROOT))
        yield from ((where, text) for text in descriptions(json.loads(path.read_text("utf-8"))))


def subcommands() -> set[str]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    assert sub.choices is not None
    return set(sub.choices)


def test_no_message_points_at_a_make_target_or_a_docs_file() -> None:
    bad = [(where, text) for where, text in user_facing() if DEAD_ENDS.search(text)]
    assert bad == []


def test_every_command_a_message_names_exists() -> None:
    commands, topics, schemas = subcommands(), set(guides()), set(shipped_schemas())
    named = [
        (where, match.group(1), match.group(2))
        for where, text in user_facing()
        for match in COMMAND.finditer(text)
    ]
    assert {command for _, command, _ in named} >= {"baseline", "docs", "eval", "gate"}
    bad = [
        (where, command, arg)
        for where, command, arg in named
        if command not in commands
        or (command == "docs" and arg is not None and arg not in topics)
        or (command == "schema" and arg is not None and arg not in schemas)
    ]
    assert bad == []


def test_the_checks_find_a_dead_end() -> None:
    assert DEAD_ENDS.search("see docs/gate.md") and DEAD_ENDS.search("run `make baseline`")
    assert not DEAD_ENDS.search("`packproof docs gate`")
    match = COMMAND.search("pass `packproof schema config` or")
    assert match is not None and match.groups() == ("schema", "config")
