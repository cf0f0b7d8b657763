"""``ctxpack``: a thin command line over the packer (and, later, the harness).

Bad input gets one line on stderr naming the file and JSON pointer, what was
expected and what was found, and exit code 2; never a traceback unless ``--debug``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ctxpack.packer import __version__
from ctxpack.packer.errors import InputError
from ctxpack.packer.files import write_atomic
from ctxpack.packer.jsonio import dumps, loads
from ctxpack.packer.pipeline import pack
from ctxpack.packer.request import parse_request
from ctxpack.packer.schema import SCHEMAS, schema
from ctxpack.packer.strategies import REGISTRY, build_strategy, parse_spec
from ctxpack.packer.strategies.base import parse_value

__all__ = ["main"]

EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors in one line, exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise InputError("", message.replace("\n", " "), source="usage")


def _read_json(path: str | None) -> tuple[Any, str]:
    if path in (None, "-"):
        return loads(sys.stdin.buffer.read(), source="<stdin>"), "<stdin>"
    assert path is not None
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError("", f"cannot read file: {exc.strerror}", source=path) from None
    return loads(data, source=path), path


def _apply_overrides(request: Any, args: argparse.Namespace) -> Any:
    """Command-line flags win over the request's own fields."""
    if not isinstance(request, dict):
        return request  # parse_request names the type error
    request = dict(request)
    if args.budget is not None:
        request["budget_tokens"] = args.budget
    if args.prompt is not None:
        request["prompt"] = args.prompt
    if args.strategy is not None or args.param:
        if args.strategy is not None:
            name, params = parse_spec(args.strategy, "--strategy")
        else:
            current = request.get("strategy", "chronological")
            if isinstance(current, str):
                name, params = parse_spec(current, "/strategy")
            elif isinstance(current, dict):
                name, params = current.get("name", ""), dict(current.get("params", {}))
            else:
                return request
        for item in args.param:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise InputError("--param", "malformed parameter", expected="key=value", found=item)
            params[key] = parse_value(value)
        build_strategy(name, params, "--strategy")  # name the flag, not the file, on error
        request["strategy"] = {"name": name, "params": params}
    return request


def cmd_pack(args: argparse.Namespace) -> int:
    raw, source = _read_json(args.request)
    request = parse_request(_apply_overrides(raw, args), source=source)
    text = pack(request).to_json(indent=args.indent) + "\n"
    if args.output:
        write_atomic(Path(args.output), text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    """The JSON-lines protocol of external packers (docs/external-packers.md):
    one request per stdin line, one pack per stdout line, in order. A bad
    request is answered with ``{"error": "..."}`` and the loop goes on."""
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            out = pack(parse_request(loads(line, source="<stdin>"))).to_json()
        except InputError as exc:
            out = json.dumps({"error": str(exc)})
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    return EXIT_OK


def cmd_strategies(args: argparse.Namespace) -> int:
    if args.json:
        listing = {
            name: {
                "formula": cls.formula,
                "doc": " ".join((cls.__doc__ or "").split()),
                "params": {
                    p.name: {
                        "default": p.default,
                        "doc": p.doc,
                        "kind": p.kind,
                        "minimum": p.minimum,
                        "choices": list(p.choices) or None,
                    }
                    for p in cls.param_info()
                },
            }
            for name, cls in sorted(REGISTRY.items())
        }
        sys.stdout.write(dumps(listing, indent=2) + "\n")
        return EXIT_OK
    for name, cls in sorted(REGISTRY.items()):
        print(f"{name}: {cls.formula}")
        for info in cls.param_info():
            print(f"    {info.describe()}")
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    if args.name == "scenarios":  # the harness's file format
        from ctxpack.evals.schemafiles import schema_text

        sys.stdout.write(schema_text("scenarios.v1.json"))
        return EXIT_OK
    sys.stdout.write(json.dumps(schema(args.name), indent=2, ensure_ascii=False) + "\n")
    return EXIT_OK


def _scenario_sources(args: argparse.Namespace) -> list[Path]:
    paths = [Path(p) for p in args.paths] or sorted(Path("scenarios").glob("*.yaml"))
    if not paths:
        raise InputError("", "no scenario files given and none in scenarios/*.yaml", source="usage")
    return paths


def cmd_import(args: argparse.Namespace) -> int:
    from ctxpack.evals.scenarios.importers import IMPORTERS  # the harness, imported only here

    source = Path(args.path)
    scenarios, report = IMPORTERS[args.format](
        source,
        budget=args.budget,
        fresh_tail=args.fresh_tail,
        with_summaries=args.with_summaries,
        token_counter=args.token_counter,
    )
    out = Path(args.output or Path("reports") / "imports" / f"{source.stem}.jsonl")
    write_atomic(out, "".join(dumps(sc.to_json()) + "\n" for sc in scenarios))
    print(
        f"wrote {len(scenarios)} scenarios ({sum(len(s.turns) for s in scenarios)} turns) to {out}"
    )
    print(" ".join(f"{k}={v}" for k, v in report.items()))
    return EXIT_OK


def cmd_tune(args: argparse.Namespace) -> int:
    from ctxpack.evals.tune import tune  # the harness, imported only here

    out, _ = tune(
        Path(args.config),
        args.strategy,
        Path(args.space),
        out_root=Path(args.out),
        jobs=args.jobs,
        executor=args.executor,
    )
    print((out / "tune.md").read_text("utf-8"))
    print(f"written: {out}/tune.json, tune.md")
    return EXIT_OK


def cmd_scenarios(args: argparse.Namespace) -> int:
    # The harness is imported here: the library must not depend on it.
    from ctxpack.evals.scenarios.format import (
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
    from ctxpack.evals.project import init_project  # the harness, imported only here

    folder = Path(args.dir)
    for path in init_project(folder):
        print(f"wrote {path}")
    where = "" if folder == Path(".") else f"cd {folder} && "
    print(f"next: {where}ctxpack scenarios compile && ctxpack eval")
    return EXIT_OK


def cmd_eval(args: argparse.Namespace) -> int:
    from ctxpack.evals.run.evaluate import evaluate  # the harness, imported only here

    run_dir = evaluate(
        Path(args.config),
        out_root=Path(args.out),
        jobs=args.jobs,
        executor=args.executor,
        resume=args.resume,
        scheduler=args.scheduler,
        packer=args.packer,
        packer_timeout=args.packer_timeout,
    )
    print((run_dir / "summary.md").read_text("utf-8"))
    print(f"reports: {run_dir}/ (and {Path(args.out) / 'latest'}/)")
    return EXIT_OK


def cmd_gate(args: argparse.Namespace) -> int:
    from ctxpack.evals.gate import run_gate  # the harness, imported only here
    from ctxpack.evals.project import default_gates

    gates = Path(args.gates) if args.gates else default_gates()
    result = run_gate(Path(args.baseline), Path(args.current), gates)
    sys.stdout.write(result.render())
    return EXIT_OK if result.passed else EXIT_FAIL


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ctxpack", description="Prove and gate LLM context-packing policies.")
    parser.add_argument("--version", action="version", version=f"ctxpack {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("pack", help="pack one request; the ContextPack v1 (+ trace) to stdout")
    p.add_argument("request", nargs="?", help="request JSON file, or - for stdin (the default)")
    p.add_argument("--strategy", help="strategy name or spec, e.g. 'bm25(k1=1.5)'")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="strategy parameter (repeatable)",
    )
    p.add_argument("--budget", type=int, help="override budget_tokens")
    p.add_argument("--prompt", help="override the prompt")
    p.add_argument("--indent", type=int, help="pretty-print with this indent")
    p.add_argument("-o", "--output", help="write to this file (atomically) instead of stdout")
    p.set_defaults(func=cmd_pack)

    p = sub.add_parser(
        "serve", help="pack JSON-lines requests from stdin (the external-packer protocol)"
    )
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("strategies", help="list strategies, parameters, defaults and formulas")
    p.add_argument("--json", action="store_true", help="machine-readable listing")
    p.set_defaults(func=cmd_strategies)

    p = sub.add_parser("scenarios", help="validate, compile or check golden scenario files")
    p.add_argument("action", choices=["validate", "compile", "check"])
    p.add_argument("paths", nargs="*", help="scenario YAML files (default: scenarios/*.yaml)")
    p.add_argument("--out", help="compiled mirror directory (default: compiled/ beside each file)")
    p.set_defaults(func=cmd_scenarios)

    p = sub.add_parser("import", help="turn a dataset (LoCoMo) into compiled scenarios")
    p.add_argument("format", choices=["locomo"])
    p.add_argument("path", help="the dataset file (LoCoMo: its original JSON format)")
    p.add_argument("-o", "--output", help="JSONL to write (default reports/imports/<name>.jsonl)")
    p.add_argument("--budget", type=int, default=1024, help="each scenario's own budget")
    p.add_argument("--fresh-tail", type=int, default=4, help="fresh tail count (default 4)")
    p.add_argument("--with-summaries", action="store_true", help="session summaries as items")
    p.add_argument("--token-counter", default="lcm", choices=["lcm", "chars4", "cl100k"])
    p.set_defaults(func=cmd_import)

    p = sub.add_parser(
        "init", help="write a starter eval config, gates file and example scenario file"
    )
    p.add_argument("dir", nargs="?", default=".", help="folder to write into (default .)")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("eval", help="run an eval config: strategies x scenarios x budgets")
    p.add_argument(
        "--config", default="ctxpack.yaml", help="eval config YAML (default ./ctxpack.yaml)"
    )
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--executor", choices=["process", "serial", "dask"], default="process")
    p.add_argument("--scheduler", help="Dask scheduler address (default: a LocalCluster)")
    p.add_argument("--resume", action="store_true", help="keep finished cells of results.jsonl")
    p.add_argument("--out", default="reports", help="reports root (default reports/)")
    p.add_argument("--packer", help="an external packer, cmd:'COMMAND' (docs/external-packers.md)")
    p.add_argument(
        "--packer-timeout",
        type=float,
        default=10.0,
        help="seconds an external packer has per cell (default 10)",
    )
    p.set_defaults(func=cmd_eval)

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
        default="reports/latest/summary.json",
        help="the summary to check (default reports/latest/summary.json)",
    )
    p.add_argument(
        "--gates",
        default=None,
        help="thresholds (default ./gates.yaml if present, else the shipped gates)",
    )
    p.set_defaults(func=cmd_gate)

    p = sub.add_parser("tune", help="search a strategy's parameters with held-out conversations")
    p.add_argument("--config", default="evals/locomo.yaml", help="eval config (suites, budgets)")
    p.add_argument("--strategy", default="hybrid")
    p.add_argument("--space", default="evals/spaces/hybrid.yaml", help="search space YAML")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--executor", choices=["process", "serial", "dask"], default="process")
    p.add_argument("--out", default="reports/tune", help="output root (default reports/tune)")
    p.set_defaults(func=cmd_tune)

    p = sub.add_parser("schema", help="print a shipped JSON Schema")
    p.add_argument("name", choices=[*sorted(SCHEMAS), "scenarios"])
    p.set_defaults(func=cmd_schema)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        args = build_parser().parse_args(argv)
        func: Callable[[argparse.Namespace], int] = args.func
        return func(args)
    except InputError as exc:
        if debug:
            raise
        print(f"ctxpack: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        print("ctxpack: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug, not bad input: still one line unless --debug
        if debug:
            raise
        print(
            f"ctxpack: internal error: {type(exc).__name__}: {exc} (rerun with --debug)",
            file=sys.stderr,
        )
        return EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
