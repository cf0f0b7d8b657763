"""Pack example requests (``scenarios/examples/*.json`` in the repository, or any
folder of request files) with every registered strategy, write each pack to
``reports/examples/<example>/<strategy>.json`` and print which items each strategy
kept::

    python -m packproof.evals.scenarios.examples [--examples DIR] [--out DIR]

Both folders are relative to the working folder, as every packproof command's
defaults are: from the repository's root it packs the bundled examples; elsewhere,
``--examples`` names a folder of requests (``packproof schema request``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from packproof.packer import InputError, parse_request
from packproof.packer.files import write_atomic
from packproof.packer.jsonio import loads
from packproof.packer.pipeline import assemble
from packproof.packer.strategies import REGISTRY, build_strategy

__all__ = ["main"]

EXAMPLES = Path("scenarios") / "examples"
OUT = Path("reports") / "examples"


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, exit 2, as the packproof command's."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"packproof: error: usage: {message}\n")


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(
        prog="python -m packproof.evals.scenarios.examples",
        description="Pack each request file in a folder with every registered strategy.",
    )
    parser.add_argument(
        "--examples",
        type=Path,
        default=EXAMPLES,
        metavar="DIR",
        help=f"a folder of request JSON files (default {EXAMPLES})",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=OUT,
        metavar="DIR",
        help=f"where the packs go, one folder per example (default {OUT})",
    )
    args = parser.parse_args(argv)
    paths = sorted(args.examples.glob("*.json"))
    if not paths:
        print(
            f"packproof: error: {args.examples}: no example requests (*.json) here; "
            "run from the repository's root, or give --examples DIR",
            file=sys.stderr,
        )
        return 2
    try:
        for path in paths:
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise InputError(
                    "", f"cannot read file: {exc.strerror}", source=str(path)
                ) from None
            raw = loads(data, source=str(path))
            base = parse_request(raw, source=str(path))
            print(
                f"\n{path.name}: {len(base.items)} items, budget {base.budget_tokens} tokens, "
                f"prompt {base.prompt!r}"
            )
            for name in sorted(REGISTRY):
                request = parse_request({**raw, "strategy": build_strategy(name, {}).spec()})
                result = assemble(request)
                out = args.out / path.stem / f"{name}.json"
                write_atomic(out, result.to_json(indent=2) + "\n", inputs=[path])
                print(
                    f"  {name:<14} {result.mode:<13} {result.used_tokens:>4} tokens  "
                    + " ".join(result.selected_ids)
                )
    except InputError as exc:
        print(f"packproof: error: {exc}", file=sys.stderr)
        return 2
    print(f"\npacks with their traces: {args.out}/")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        sys.exit(0)
