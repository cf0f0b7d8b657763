"""``packproof init``: a starter project (eval config, gates file, example scenarios)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from packproof.cli.common import EXIT_OK

__all__ = ["add_parsers"]


def cmd_init(args: argparse.Namespace) -> int:
    from packproof.evals.project import init_project  # the harness, imported only here

    folder = Path(args.dir)
    for path in init_project(folder):
        print(f"wrote {path}")
    where = "" if folder == Path(".") else f"cd {folder} && "
    print(f"next: {where}packproof scenarios compile && packproof eval")
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "init", help="write a starter eval config, gates file and example scenario file"
    )
    p.add_argument("dir", nargs="?", default=".", help="folder to write into (default .)")
    p.set_defaults(func=cmd_init)
