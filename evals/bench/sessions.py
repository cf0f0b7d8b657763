"""Issue 29's speed targets on the shared Claude Code sessions, measured on one
core: ``python -m packproof.evals.bench.sessions [--sessions DIR] [--budget N]
[--strategy SPEC]`` (docs/sessions.md, "Speed").

1. **Import and check**: ``import_claude_code`` then ``check_sessions`` on every
   session under DIR, in this process (target: under 30 s).
2. **One replay**: the largest imported scenario (the most prompt tokens over
   its steps) packed by one strategy at one budget and priced under every
   shipped cache profile, as ``packproof eval --executor serial`` runs it (a
   config of that one cell row, the sessions' static prefix), then priced as
   billed (target: under 60 s).

Prints both figures, one line each; skips, exit 0, with its reason when the
sessions are absent. Nothing is written outside a temporary folder.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from packproof.evals.bench.sessions_eval import SESSIONS
from packproof.evals.metrics.cache.check import check_sessions
from packproof.evals.metrics.cache.files import load_profiles
from packproof.evals.report.sessions import build
from packproof.evals.run.evaluate import evaluate
from packproof.evals.scenarios.importers.claude_code import import_claude_code
from packproof.evals.scenarios.importers.claude_code.replay import SESSION_PREFIX_TOKENS
from packproof.packer.jsonio import dumps

__all__ = ["main"]

BUDGET: Final = 32768
STRATEGY: Final = "bm25"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m packproof.evals.bench.sessions")
    parser.add_argument("--sessions", type=Path, default=SESSIONS, help=f"default: {SESSIONS}")
    parser.add_argument("--budget", type=int, default=BUDGET)
    parser.add_argument("--strategy", default=STRATEGY)
    args = parser.parse_args(argv)
    if not args.sessions.is_dir():
        print(f"bench sessions: skipped: no Claude Code sessions at {args.sessions}")
        return 0

    start = time.perf_counter()
    scenarios, counts = import_claude_code([args.sessions])
    rows = check_sessions([args.sessions])
    first = time.perf_counter() - start
    print(
        f"import + check: {first:.2f} s for {counts['steps']} steps in {counts['scenarios']} "
        f"scenarios, {len(rows)} calls checked (target 30 s)"
    )

    largest = max(scenarios, key=lambda s: sum(it["tokens"] for t in s.turns
                                                for it in t.request["items"]))  # fmt: skip
    profiles = sorted(load_profiles())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suite = folder / "reports" / "imports" / "claude_code_sessions.jsonl"
        suite.parent.mkdir(parents=True)
        suite.write_text(dumps(largest.to_json()) + "\n", encoding="utf-8")
        config = folder / "evals" / "sessions.yaml"
        config.parent.mkdir()
        config.write_text(
            "schema: packproof.eval.v1\nname: sessions\n"
            "suites: [../reports/imports/claude_code_sessions.jsonl]\n"
            f"strategies: [{args.strategy!r}]\nbudgets: [{args.budget}]\n"
            f"cache: {{static_prefix_tokens: [{SESSION_PREFIX_TOKENS}]}}\n",
            encoding="utf-8",
        )
        start = time.perf_counter()
        run = evaluate(config, out_root=folder / "reports", executor="serial", progress=False)
        report = build(run, suite)
        second = time.perf_counter() - start
    (row,) = report.rows
    print(
        f"one replay: {second:.2f} s for {largest.id} ({len(largest.turns)} steps), "
        f"{args.strategy} at {args.budget}, priced under {len(profiles)} shipped profiles "
        f"and as billed (${row.usd:.2f} vs ${report.actual.usd:.2f}) (target 60 s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
