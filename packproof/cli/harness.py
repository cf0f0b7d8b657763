"""Subcommands over the harness (``packproof.evals``): scenarios, import, init,
gate, tune, cache (eval is in :mod:`packproof.cli.run`). Each imports the harness
only when it runs, so ``packproof pack`` starts without loading the harness's
dependencies."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from packproof.cli.common import EXIT_FAIL, EXIT_OK, bounded, config_path
from packproof.packer.errors import InputError
from packproof.packer.files import check_target, write_atomic
from packproof.packer.jsonio import dumps
from packproof.packer.result import cyclic_gc_paused

__all__ = ["add_parsers"]


def _scenario_sources(args: argparse.Namespace) -> list[Path]:
    paths = [Path(p) for p in args.paths] or sorted(Path("scenarios").glob("*.yaml"))
    if not paths:
        raise InputError("", "no scenario files given and none in scenarios/*.yaml", source="usage")
    return paths


def cmd_import(args: argparse.Namespace) -> int:
    from packproof.evals.scenarios.importers import IMPORTERS  # the harness, imported only here

    source = Path(args.path)
    name = f"{source.stem}_replay" if args.replay else source.stem
    out = Path(args.output or Path("reports") / "imports" / f"{name}.jsonl")
    check_target(out, [source])  # before any work
    scenarios, report = IMPORTERS[args.format](
        source,
        budget=args.budget,
        fresh_tail=args.fresh_tail,
        with_summaries=args.with_summaries,
        token_counter=args.token_counter,
        replay=args.replay,
        gap_s=args.gap,
    )
    write_atomic(out, "".join(dumps(sc.to_json()) + "\n" for sc in scenarios), inputs=[source])
    print(
        f"wrote {len(scenarios)} scenarios ({sum(len(s.turns) for s in scenarios)} turns) to {out}"
    )
    print(" ".join(f"{k}={v}" for k, v in report.items()))
    return EXIT_OK


def cmd_tune(args: argparse.Namespace) -> int:
    from packproof.evals.project import shipped_space
    from packproof.evals.tune import tune  # the harness, imported only here

    out, _ = tune(
        config_path(args),
        args.strategy,
        Path(args.space) if args.space else shipped_space(args.strategy),
        out_root=Path(args.out),
        jobs=args.jobs,
        executor=args.executor,
    )
    print((out / "tune.md").read_text("utf-8"))
    print(f"written: {out}/tune.json, tune.md")
    return EXIT_OK


def cmd_scenarios(args: argparse.Namespace) -> int:
    # The harness is imported here: the library must not depend on it.
    from packproof.evals.scenarios.compile import (
        check_compiled,
        compile_sources,
        load_sources,
        write_compiled,
    )

    loaded = load_sources(_scenario_sources(args))
    count = sum(len(v) for v in loaded.values())
    if args.action == "validate":
        print(f"{count} scenarios in {len(loaded)} files: valid")
        return EXIT_OK
    texts = compile_sources(loaded)
    out = Path(args.out) if args.out else None
    if args.action == "compile":
        for path in write_compiled(texts, out):
            print(f"wrote {path}")
        return EXIT_OK
    problems = check_compiled(texts, out)
    for line in problems:
        print(line, file=sys.stderr)
    if not problems:
        print(f"{count} scenarios in {len(loaded)} files: compiled mirrors are up to date")
    return EXIT_FAIL if problems else EXIT_OK


def cmd_init(args: argparse.Namespace) -> int:
    from packproof.evals.project import init_project  # the harness, imported only here

    folder = Path(args.dir)
    for path in init_project(folder):
        print(f"wrote {path}")
    where = "" if folder == Path(".") else f"cd {folder} && "
    print(f"next: {where}packproof scenarios compile && packproof eval")
    return EXIT_OK


def cmd_gate(args: argparse.Namespace) -> int:
    import os

    # the harness, imported only here
    from packproof.evals.gate import append_step_summary, render_markdown, render_text, run_gate
    from packproof.evals.project import default_gates

    gates = Path(args.gates) if args.gates else default_gates()
    baseline, current = Path(args.baseline), Path(args.current) if args.current else None
    markdown = Path(args.markdown) if args.markdown else None
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")  # set by GitHub Actions
    step_summary = Path(summary_file) if summary_file else None
    inputs = [p for p in (baseline, current, gates) if p is not None]
    if markdown is not None:  # refused before any work
        check_target(markdown, inputs)
    result = run_gate(baseline, current, gates, significance=args.significance)
    if markdown is not None or step_summary is not None:
        text = render_markdown(result)
        if markdown is not None:
            write_atomic(markdown, text, inputs=inputs)
        if step_summary is not None:
            append_step_summary(step_summary, text)
    sys.stdout.write(render_text(result, verbose=args.verbose))
    return EXIT_OK if result.passed else EXIT_FAIL


def cmd_cache(args: argparse.Namespace) -> int:
    # the harness, imported only here
    from packproof.evals.metrics.cache_files import profile, read_trace, simulate

    chosen = profile(args.profile, Path(args.profiles) if args.profiles else None)
    with cyclic_gc_paused():  # steps and their JSON hold no reference cycles
        trace = read_trace(args.trace)  # every line checked before anything is written
        write = sys.stdout.write
        for line in simulate(trace, args.profile, chosen):
            write(line + "\n")
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("scenarios", help="validate, compile or check golden scenario files")
    p.add_argument("action", choices=["validate", "compile", "check"])
    p.add_argument("paths", nargs="*", help="scenario YAML files (default: scenarios/*.yaml)")
    p.add_argument("--out", help="compiled mirror directory (default: compiled/ beside each file)")
    p.set_defaults(func=cmd_scenarios)

    p = sub.add_parser("import", help="turn a dataset (LoCoMo) into compiled scenarios")
    p.add_argument("format", choices=["locomo"])
    p.add_argument("path", help="the dataset file (LoCoMo: its original JSON format)")
    p.add_argument("-o", "--output", help="JSONL to write (default reports/imports/<name>.jsonl)")
    p.add_argument(
        "--budget", type=bounded(int, 1, 2**40), default=1024, help="each scenario's own budget"
    )
    p.add_argument(
        "--fresh-tail", type=bounded(int, 0, 10**6), default=4, help="fresh tail count (default 4)"
    )
    p.add_argument("--with-summaries", action="store_true", help="session summaries as items")
    p.add_argument("--token-counter", default="lcm", choices=["lcm", "chars4", "cl100k"])
    p.add_argument(
        "--replay",
        action="store_true",
        help="each conversation as a replay: every dialogue turn a timed step, then the "
        "questions as probes (default output reports/imports/<name>_replay.jsonl)",
    )
    p.add_argument(
        "--gap",
        type=bounded(float, 0, 86_400),
        default=30.0,
        metavar="SECONDS",
        help="replay: seconds between two turns of one session (default 30)",
    )
    p.set_defaults(func=cmd_import)

    p = sub.add_parser(
        "init", help="write a starter eval config, gates file and example scenario file"
    )
    p.add_argument("dir", nargs="?", default=".", help="folder to write into (default .)")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser(
        "gate", help="compare an eval summary with the baseline; exit 1 on a regression"
    )
    p.add_argument(
        "--baseline",
        default="reports/baseline/summary.json",
        help="the committed baseline summary (default reports/baseline/summary.json)",
    )
    p.add_argument(
        "--current",
        default=None,
        help="the summary to check (default: the latest run of the baseline's config, "
        "reports/<its manifest name>/latest/summary.json, else reports/latest/summary.json)",
    )
    p.add_argument(
        "--gates",
        default=None,
        help="thresholds (default ./gates.yaml if present, else the shipped gates)",
    )
    p.add_argument(
        "--verbose", action="store_true", help="print every check, not only the problems"
    )
    p.add_argument(
        "--markdown",
        metavar="FILE",
        help="also write the result as Markdown (a pull-request comment); with "
        "GITHUB_STEP_SUMMARY set, it is appended there too",
    )
    p.add_argument(
        "--significance",
        type=bounded(float, 1e-9, 0.5),
        metavar="ALPHA",
        help="a regression fails only if a paired test over scenarios gives p < ALPHA "
        "(default: the gates file's significance.alpha, else no test); needs each run's "
        "metrics.csv(.gz) beside its summary.json",
    )
    p.set_defaults(func=cmd_gate)

    p = sub.add_parser("tune", help="search a strategy's parameters with held-out conversations")
    p.add_argument("--config", help="eval config: suites, budgets (default ./packproof.yaml)")
    p.add_argument("--strategy", default="hybrid")
    p.add_argument("--space", help="search space YAML (default: the shipped space of the strategy)")
    p.add_argument("--jobs", type=bounded(int, 1, 256), default=2)
    p.add_argument("--executor", choices=["process", "serial", "dask"], default="process")
    p.add_argument("--out", default="reports/tune", help="output root (default reports/tune)")
    p.set_defaults(func=cmd_tune)

    p = sub.add_parser(
        "cache", help="price a trace of prompts under a provider's prompt cache (docs/metrics.md)"
    )
    p.add_argument("action", choices=["simulate"])
    p.add_argument("trace", help="JSON lines, one step a line (- for stdin)")
    p.add_argument("--profile", required=True, help="a cache profile name, e.g. anthropic, openai")
    p.add_argument(
        "--profiles", help="a profiles YAML adding to (or replacing) the shipped profiles"
    )
    p.set_defaults(func=cmd_cache)
