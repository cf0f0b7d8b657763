"""``packproof explain``: one golden scenario's pack under one strategy, as a table.

The scenario is found by id in scenario files (YAML sources, or compiled
``.jsonl`` suites); one of its turns is packed as the harness packs it, and
printed as :func:`packproof.packer.explain.explain_table` prints any pack, with
the gold ``relevant`` ids starred, the scenario's ``why`` above and the turn's
expectations for that strategy judged below. Every line goes through
:func:`~packproof.packer.explain.visible`: a scenario's text is a contributor's,
and its control characters must not drive the reader's terminal.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from packproof.cli.common import EXIT_OK, bounded
from packproof.packer.errors import InputError
from packproof.packer.explain import explain_table, visible

if TYPE_CHECKING:  # the harness is imported when the command runs, not at start-up
    from packproof.evals.scenarios.format import Scenario

__all__ = ["add_parsers", "cmd_explain"]

DEFAULT_SCENARIOS: Final = "scenarios/*.yaml"


def _scenario_files(given: Sequence[str] | None) -> list[Path]:
    if given:
        return [Path(p) for p in given]
    found = sorted(Path().glob(DEFAULT_SCENARIOS))
    if not found:
        raise InputError(
            "", f"no scenario files: {DEFAULT_SCENARIOS} matches nothing here; give --scenarios"
        )
    return found


def _load(paths: Sequence[Path]) -> dict[str, Scenario]:
    """Every scenario in ``paths`` by id: YAML sources (validated together) and
    compiled ``.jsonl`` suites. An id in two files is an error: which one was meant?"""
    from packproof.evals.scenarios.compile import load_sources
    from packproof.evals.scenarios.format import load_compiled

    compiled = [p for p in paths if p.suffix == ".jsonl"]
    sources = [p for p in paths if p.suffix != ".jsonl"]
    by_file = dict(load_sources(sources)) if sources else {}
    by_file.update((p, load_compiled(p)) for p in compiled)
    out: dict[str, Scenario] = {}
    where: dict[str, Path] = {}
    for path, scenarios in by_file.items():
        for scenario in scenarios:
            if scenario.id in out:
                raise InputError(
                    "",
                    f"scenario {scenario.id!r} is in both {where[scenario.id]} and {path}; "
                    "give one of them with --scenarios",
                )
            out[scenario.id] = scenario
            where[scenario.id] = path
    return out


def _find(scenarios: dict[str, Scenario], wanted: str, paths: Sequence[Path]) -> Scenario:
    if wanted in scenarios:
        return scenarios[wanted]
    ids = sorted(scenarios)
    close = [i for i in ids if wanted in i][:5] or difflib.get_close_matches(wanted, ids, n=5)
    hint = (
        f"closest: {', '.join(close)}"
        if close
        else f"none close among {len(ids)} scenarios in {len(paths)} files"
    )
    raise InputError("", f"unknown scenario {wanted!r} ({hint})")


def _expectations(turn: Any, spec: Any, result: Any, own_budget: bool) -> list[str]:
    """The turn's expectations for this strategy, judged as the eval judges them:
    at the scenario's own budget only, a strategy's named ones only for its
    default parameters, a spec-keyed one for its parameters (the ``"*"`` ones
    always)."""
    from packproof.evals.scenarios.format import expectation_failures, expectation_key

    name = expectation_key(spec.strategy, cache_aware=spec.cache is not None)
    label = f"{name} and *" if name != "*" else "* only (a cache-aware pack)"
    applies = turn.expectations(name)
    if not applies:
        return [f"expectations: none for {label}"]
    if not own_budget:
        return ["expectations: not judged (written for the scenario's own budget)"]
    failures = expectation_failures(turn, name, result)
    if not failures:
        return [f"expectations for {label}: met"]
    return [f"expectations for {label}: NOT MET"] + [f"  - {f}" for f in failures]


def cmd_explain(args: argparse.Namespace) -> int:
    from packproof.packer.packspec import parse_pack_spec
    from packproof.packer.pipeline import assemble
    from packproof.packer.request import parse_request

    spec = parse_pack_spec(args.strategy, "--strategy")  # bad flags first, before any file
    paths = _scenario_files(args.scenarios)
    scenario = _find(_load(paths), args.scenario, paths)
    turns = scenario.turns
    if args.turn >= len(turns):
        raise InputError(
            "--turn",
            f"scenario {scenario.id!r} has {len(turns)} turn{'s' * (len(turns) != 1)}",
            expected=f"0 to {len(turns) - 1}",
            found=args.turn,
        )
    turn = turns[args.turn]
    request = {**turn.request, **spec.request_fields()}
    own_budget = args.budget is None or args.budget == request["budget_tokens"]
    if args.budget is not None:
        request["budget_tokens"] = args.budget
    where = f"{scenario.file}: scenario {scenario.id} turn {args.turn}"
    result = assemble(parse_request(request, source=where))
    relevant = set(turn.relevant)
    selected = set(result.selected_ids)
    of_turns = f", turn {args.turn} (of 0-{len(turns) - 1})" if len(turns) > 1 else ""
    lines = [
        f"scenario {scenario.id} ({scenario.file} line {scenario.line}){of_turns}",
        f"why: {scenario.why}",
        f"gold relevant (★): {', '.join(turn.relevant) or 'none'}"
        + (f" (kept {len(relevant & selected)} of {len(relevant)})" if relevant else ""),
        "",
        *explain_table(result, relevant=relevant, limit=args.limit).rstrip("\n").split("\n"),
        "",
        *_expectations(turn, spec, result, own_budget),
    ]
    sys.stdout.write("\n".join(map(visible, lines)) + "\n")
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "explain",
        help="pack one golden scenario and print why each candidate is in or out (a table)",
    )
    p.add_argument("scenario", help="scenario id")
    p.add_argument(
        "--strategy", required=True, help="strategy name or spec, e.g. hybrid or 'bm25(k1=1.5)'"
    )
    p.add_argument(
        "--budget",
        type=bounded(int, 1, 2**62),
        help="pack at this budget instead of the scenario's own (expectations are then not judged)",
    )
    p.add_argument(
        "--turn",
        type=bounded(int, 0, 2**31),
        default=0,
        help="which turn of a conversation, from 0 (default 0)",
    )
    p.add_argument(
        "--scenarios",
        nargs="+",
        metavar="FILE",
        help=f"scenario YAML files or compiled .jsonl suites (default {DEFAULT_SCENARIOS})",
    )
    p.add_argument(
        "--limit",
        type=bounded(int, 1, 2**62),
        help="only the top N candidates, plus every kept item",
    )
    p.set_defaults(func=cmd_explain)
