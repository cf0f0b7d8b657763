"""``packproof docs [TOPIC]``: the guides, shipped in the package (the repository's
``docs/*.md``, package data of ``packproof.docs``), so a message that names one
(``packproof docs gate``) leads somewhere wherever packproof is installed."""

from __future__ import annotations

import argparse
import difflib
import sys
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from packproof.cli.common import EXIT_OK
from packproof.packer.errors import InputError

__all__ = ["add_parsers", "guides", "title"]


def guides() -> dict[str, Traversable]:
    """Every guide by topic (its file name without ``.md``), sorted."""
    pages = resources.files("packproof.docs").iterdir()
    return {
        p.name.removesuffix(".md"): p
        for p in sorted(pages, key=lambda p: p.name)
        if p.name.endswith(".md")
    }


def title(page: Traversable) -> str:
    """A guide's one-line summary: its first Markdown heading."""
    for line in page.read_text("utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


def _topic(given: str, pages: dict[str, Traversable]) -> str:
    """``given`` as a topic: ``gate``, and the paths messages and pages use for it
    (``gate.md``, ``docs/gate.md``), are the same topic."""
    topic = given.removeprefix("docs/").removesuffix(".md")
    if topic in pages:
        return topic
    close = difflib.get_close_matches(topic, list(pages), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise InputError(
        "",
        f"no guide on {given!r}{hint}",
        expected="one of " + ", ".join(pages),
        found=given,
        source="usage",
    )


def cmd_docs(args: argparse.Namespace) -> int:
    pages = guides()
    if args.topic is None:
        width = max(map(len, pages))
        for topic, page in pages.items():
            print(f"{topic:<{width}}  {title(page)}")
        print("\npackproof docs TOPIC prints one (Markdown)")
        return EXIT_OK
    sys.stdout.write(pages[_topic(args.topic, pages)].read_text("utf-8"))
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "docs",
        help="list the guides shipped with packproof, or print one (Markdown)",
        description="The guides: the gate, metrics, scenarios, external packers, CI, the "
        "pytest plugin, ... `packproof docs` lists them; `packproof docs TOPIC` prints one.",
    )
    p.add_argument(
        "topic",
        nargs="?",
        metavar="TOPIC",
        help="the guide to print, e.g. gate or ci (default: list them with a line each)",
    )
    p.set_defaults(func=cmd_docs)
