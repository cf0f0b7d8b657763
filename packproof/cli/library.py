"""Subcommands over the library (``packproof.packer``): pack, serve, strategies, and schema
(which lists the harness's schemas beside the library's)."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from packproof.cli.common import EXIT_OK, bounded, read_json
from packproof.packer.checks import check_object, check_str
from packproof.packer.errors import InputError
from packproof.packer.explain import explain_table
from packproof.packer.files import check_target, write_atomic
from packproof.packer.jsonio import dumps, loads
from packproof.packer.packspec import parse_pack_spec
from packproof.packer.pipeline import pack
from packproof.packer.render import TRACE_LEVELS
from packproof.packer.request import parse_request
from packproof.packer.result import cyclic_gc_paused
from packproof.packer.schema import ABOUT, SCHEMAS, schema_text
from packproof.packer.strategies import REGISTRY, build_strategy, parse_spec
from packproof.packer.strategies.base import parse_value

__all__ = ["add_parsers"]


def _own_strategy(request: dict[str, Any], source: str) -> tuple[str, dict[str, Any]] | None:
    """The request's own strategy as (name, params), checked as parse_request
    checks it (errors name the request's file); None when it is of no strategy
    type, which parse_request then names."""
    current = request.get("strategy", "chronological")
    try:
        if isinstance(current, str):
            return parse_spec(current, "/strategy")
        if not isinstance(current, dict):
            return None
        check_object(current, "/strategy", frozenset({"name", "params"}))
        if "name" not in current:
            raise InputError("/strategy", "missing required field 'name'")
        name = check_str(current["name"], "/strategy/name", nonempty=True)
        return name, dict(check_object(current.get("params", {}), "/strategy/params"))
    except InputError as exc:
        raise exc.with_source(source) from None


def _apply_overrides(request: Any, args: argparse.Namespace, source: str) -> Any:
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
            spec = parse_pack_spec(args.strategy, "--strategy")
            name, params = spec.name, spec.strategy.params()
            if spec.cache is not None:
                request["cache_aware"] = spec.cache.to_json()
        else:
            own = _own_strategy(request, source)
            if own is None:
                return request
            name, params = own
        for item in args.param:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise InputError("--param", "malformed parameter", expected="key=value", found=item)
            params[key] = parse_value(value)
        build_strategy(name, params, "--strategy")  # name the flag, not the file, on error
        request["strategy"] = {"name": name, "params": params}
    return request


def cmd_pack(args: argparse.Namespace) -> int:
    inputs = [] if args.request in (None, "-") else [Path(args.request)]
    if args.output:  # before any work: never over the request, a FIFO or a device
        check_target(Path(args.output), inputs)
    if args.limit is not None and not args.explain:
        raise InputError("--limit", "only applies with --explain (it limits the table)")
    # One command, then exit: nothing it allocates forms a reference cycle, and
    # the collector's passes over a 100k-item request's objects find nothing.
    with cyclic_gc_paused():
        raw, source = read_json(args.request)
        request = parse_request(_apply_overrides(raw, args, source), source=source)
        result = pack(request)
        if args.explain:
            data, end = explain_table(result, limit=args.limit).encode("utf-8"), b""
        else:  # the newline apart: appending it would copy a 40 MB pack
            data, end = result.to_json_bytes(indent=args.indent, trace=args.trace), b"\n"
    if args.output:
        write_atomic(Path(args.output), data + end, inputs=inputs)
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.write(end)
        sys.stdout.buffer.flush()
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    """The JSON-lines protocol of external packers (docs/external-packers.md):
    one request per stdin line, one pack per stdout line, in order, each echoing
    the request's ``request_id``. A bad line (not UTF-8, not JSON, nested too
    deep, an invalid request) is answered with ``{"error": "..."}`` and the loop
    goes on."""
    # The harness's protocol module (it pulls in jsonschema): imported here, not
    # at start-up, which every `packproof pack` pays.
    from packproof.evals.run.external import REQUEST_ID

    out_stream = sys.stdout.buffer
    for n, line in enumerate(sys.stdin.buffer, 1):
        if not line.strip():
            continue
        request_id: Any = None
        try:
            request = loads(line, source=f"<stdin>:{n}")
            if isinstance(request, dict):
                request = dict(request)
                request_id = request.pop(REQUEST_ID, None)
            answer = pack(parse_request(request)).to_json()
            if request_id is not None:  # the pack's own keys stay sorted; the id goes first
                answer = '{"request_id":' + json.dumps(request_id) + "," + answer[1:]
        except InputError as exc:
            error: dict[str, Any] = {"error": str(exc)}
            if request_id is not None:
                error[REQUEST_ID] = request_id
            answer = json.dumps(error)
        out_stream.write(answer.encode("utf-8") + b"\n")
        out_stream.flush()
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


def shipped_schemas() -> dict[str, tuple[str, Callable[[], str]]]:
    """Every schema a user writes or reads, the library's and the harness's, by the
    name ``packproof schema NAME`` takes: (what it describes, its text). The library
    must not import the harness, so the command line, above both, puts them together."""
    from packproof.evals import schemafiles  # names and files only; no jsonschema

    out: dict[str, tuple[str, Callable[[], str]]] = {
        name: (ABOUT[name], functools.partial(schema_text, name)) for name in SCHEMAS
    }
    for name, filename in schemafiles.SCHEMAS.items():
        out[name] = (schemafiles.ABOUT[name], functools.partial(schemafiles.schema_text, filename))
    return dict(sorted(out.items()))


def cmd_schema(args: argparse.Namespace) -> int:
    schemas = shipped_schemas()
    if args.name is None:
        width = max(map(len, schemas))
        for name, (about, _) in schemas.items():
            print(f"{name:<{width}}  {about}")
        print("\npackproof schema NAME prints one (JSON Schema, draft 2020-12)")
        return EXIT_OK
    sys.stdout.write(schemas[args.name][1]())
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("pack", help="pack one request; the ContextPack v1 (+ trace) to stdout")
    p.add_argument("request", nargs="?", help="request JSON file, or - for stdin (the default)")
    p.add_argument(
        "--strategy",
        help="strategy name or spec, e.g. 'bm25(k1=1.5)'; '+cache(...)' packs cache-aware, "
        "e.g. 'bm25+cache(recall_share=0.3)' (`packproof docs cache-aware`)",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="strategy parameter (repeatable)",
    )
    p.add_argument("--budget", type=bounded(int, -(2**62), 2**62), help="override budget_tokens")
    p.add_argument("--prompt", help="override the prompt")
    p.add_argument(
        "--indent", type=bounded(int, 0, 16), help="pretty-print with this indent (0-16)"
    )
    p.add_argument(
        "--trace",
        choices=TRACE_LEVELS,
        default="full",
        help="how much trace the pack carries: full (default): every candidate with id, "
        "ordinal, role, kind, layer, type, importance, trust, tokens, score, components, "
        "rank, decision and citations; decisions: per candidate only id, tokens, score, rank "
        "and decision (included, reasons), plus placement and position when cache-aware, "
        'and "level": "decisions"; none: no trace field. The trace\'s other fields '
        "(strategy, budget, tail, output, ...) are the same at full and decisions",
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="print a table instead of JSON: every candidate by rank with its score, "
        "score components, tokens, decision and reasons (--trace and --indent do not apply)",
    )
    p.add_argument(
        "--limit",
        type=bounded(int, 1, 2**62),
        help="with --explain: only the top N candidates, plus every kept item",
    )
    p.add_argument("-o", "--output", help="write to this file (atomically) instead of stdout")
    p.set_defaults(func=cmd_pack)

    p = sub.add_parser(
        "serve",
        help="pack JSON-lines requests from stdin (the external-packer protocol)",
        description="Pack JSON-lines requests from stdin, one pack a line on stdout, in "
        "order: the built-in packer speaking the external-packer protocol (`packproof docs "
        "external-packers`).",
    )
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("strategies", help="list strategies, parameters, defaults and formulas")
    p.add_argument("--json", action="store_true", help="machine-readable listing")
    p.set_defaults(func=cmd_strategies)

    p = sub.add_parser(
        "schema",
        help="list the JSON Schemas of every file packproof reads or writes, or print one",
    )
    names = list(shipped_schemas())
    p.add_argument(
        "name",
        nargs="?",
        choices=names,
        metavar="NAME",
        help=f"the schema to print: {', '.join(names)} (default: list them)",
    )
    p.set_defaults(func=cmd_schema)
