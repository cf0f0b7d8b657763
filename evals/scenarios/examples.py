"""Pack the bundled example requests (``scenarios/examples/*.json``) with every
registered strategy, write each pack to ``reports/examples/<example>/<strategy>.json``
and print which items each strategy kept. ``make eval`` runs this until the eval
runner lands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from packproof.packer import InputError, parse_request
from packproof.packer.files import write_atomic
from packproof.packer.jsonio import loads
from packproof.packer.pipeline import assemble
from packproof.packer.strategies import REGISTRY, build_strategy

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.examples")
    parser.add_argument("--examples", type=Path, default=ROOT / "scenarios" / "examples")
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "examples")
    args = parser.parse_args(argv)
    paths = sorted(args.examples.glob("*.json"))
    if not paths:
        print(f"packproof: error: no example requests in {args.examples}", file=sys.stderr)
        return 2
    for path in paths:
        try:
            raw = loads(path.read_bytes(), source=str(path))
            base = parse_request(raw, source=str(path))
        except InputError as exc:
            print(f"packproof: error: {exc}", file=sys.stderr)
            return 2
        print(
            f"\n{path.name}: {len(base.items)} items, budget {base.budget_tokens} tokens, "
            f"prompt {base.prompt!r}"
        )
        for name in sorted(REGISTRY):
            request = parse_request({**raw, "strategy": build_strategy(name, {}).spec()})
            result = assemble(request)
            write_atomic(args.out / path.stem / f"{name}.json", result.to_json(indent=2) + "\n")
            print(
                f"  {name:<14} {result.mode:<13} {result.used_tokens:>4} tokens  "
                + " ".join(result.selected_ids)
            )
    print(f"\npacks with their traces: {args.out}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
