"""``make eval-sessions``: import the Claude Code sessions beside the project,
run ``evals/sessions.yaml``, and write the as-billed report
(:mod:`packproof.evals.report.sessions`) into the run and the proof folder;
without the sessions, skip with one line and exit 0. Repository only, as every
bench: the sessions are never copied into it."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import orjson

from packproof.evals.report.sessions import SessionsReport, build, markdown
from packproof.evals.run.evaluate import evaluate
from packproof.evals.scenarios.importers.claude_code import import_claude_code
from packproof.packer.errors import InputError
from packproof.packer.files import write_atomic
from packproof.packer.jsonio import dumps

__all__ = ["SESSIONS", "main", "write"]

# beside the project, as the other benches read the shared data
SESSIONS = Path(__file__).resolve().parents[3] / "shared" / "data" / "claude-code" / "sessions"
CONFIG = Path("evals/sessions.yaml")
IMPORTED = Path("reports/imports/claude_code_sessions.jsonl")  # evals/sessions.yaml's suite
COMMAND = "make eval-sessions"


def write(report: SessionsReport, folder: Path, command: str = COMMAND) -> list[Path]:
    """``sessions.md``, ``sessions.json`` and ``sessions.png`` in ``folder``."""
    from packproof.evals.report.plots.sessions import sessions_plot

    folder.mkdir(parents=True, exist_ok=True)
    out = {
        "sessions.md": markdown(report, command).encode("utf-8"),
        "sessions.json": orjson.dumps(
            report.to_json(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
        )
        + b"\n",
        "sessions.png": sessions_plot(report),
    }
    for name, data in out.items():
        (folder / name).write_bytes(data)
    return [folder / name for name in out]


def _import(sessions: Path) -> None:
    """``packproof import claude-code SESSIONS -o IMPORTED``, as the CLI writes it."""
    scenarios, counts = import_claude_code([sessions])
    text = "".join(dumps(sc.to_json()) + "\n" for sc in scenarios)
    write_atomic(IMPORTED, text, inputs=[sessions])
    print(f"imported {counts['steps']} steps in {counts['scenarios']} scenarios to {IMPORTED}")


def main(argv: Sequence[str] | None = None) -> int:
    """``make eval-sessions``: import the sessions, run evals/sessions.yaml, write
    the report into the run's folder (and ``--proof DIR``); skip, exit 0, with a
    one-line reason when the sessions are absent. ``--run DIR`` only reports on
    an existing run."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m packproof.evals.bench.sessions_eval")
    parser.add_argument("--sessions", type=Path, default=SESSIONS, help=f"default: {SESSIONS}")
    parser.add_argument("--config", type=Path, default=CONFIG, help=f"default: {CONFIG}")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="reports root")
    parser.add_argument("--jobs", type=int, default=2, help="eval worker processes")
    parser.add_argument("--proof", type=Path, help="also write the report here")
    parser.add_argument("--run", type=Path, help="only report on this run folder")
    args = parser.parse_args(argv)
    run = args.run
    if run is None and not args.sessions.is_dir():
        print(f"eval-sessions: skipped: no Claude Code sessions at {args.sessions}")
        return 0
    try:
        if run is None:
            _import(args.sessions)
            run = evaluate(args.config, out_root=args.out, jobs=args.jobs, progress=False)
        report = build(run.resolve(), IMPORTED)
    except (InputError, ValueError, OSError) as exc:  # one line, as every command's (STYLE 7)
        print(f"eval-sessions: {exc}", file=sys.stderr)
        return 2
    written = write(report, run)
    if args.proof is not None:
        written += write(report, args.proof)
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
