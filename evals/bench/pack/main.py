"""Benchmark of the packer: ``python -m packproof.evals.bench.pack`` (``make bench``).

What is measured, on real chat text (the Chit Chat Challenge corpus of the
``chitchat-dataset`` package) at 1k, 10k and 100k items:

- ``pack``: one full library call, ``packer.pack(request_dict)``: validation,
  token counting, scoring and selection. The request dict is built before the
  clock starts; JSON serialisation is timed apart as ``render``
  (``PackResult.to_json()``, the pack plus its per-item trace).
- ``tokenize``: one bare regex tokenization pass over the same texts,
  ``[WORD.findall(t.lower()) for t in texts]``. It is the floor for any
  lexical strategy: scoring must at least read every word once.
- ``bm25s``: a reference BM25 library on the same texts, ``index`` plus one
  ``get_scores`` query. Its own tokenization pass is timed apart
  (``bm25s_tokenize``) and is not part of the ``bm25s`` figure.
- ``process``: at the largest size, the whole ``packproof pack REQUEST.json``
  process (interpreter start-up to the last byte written) at ``--trace full``,
  ``decisions`` and ``none``, against a bare tokenization process: a fresh
  interpreter that reads and parses the same file and runs the ``tokenize``
  pass over its texts (``process``).

Every figure is the best of ``--repeats`` runs at every size (the best run is
the one least disturbed by the machine; equal counts keep sizes comparable),
each after a full ``gc.collect()`` with the collector left on, as a real caller
has it (``pack()`` pauses it for its own duration: it builds no cycles, see
``packer.pipeline.cyclic_gc_paused``); a strategy's pack time is the median over five
seeded prompts of those best runs, since relevance scoring depends on the
prompt. Ratios are taken between figures of the same run, so they hold across
machines better than the seconds do. Peak memory is measured at the largest size
in fresh subprocesses: one that only builds the request (the baseline) and one
per strategy that builds it and packs once.

Targets (from the issue) are evaluated and reported, never asserted: the exit
code is 0 whatever they say, and 2 only for bad command-line arguments or a
missing corpus package.

This module is the run and the command line; the parts are beside it:
``corpus`` (the corpus and the requests), ``timing``, ``memory``
(the memory subprocesses, which re-enter this package), ``process`` (the
whole-process timings) and ``report`` (the targets, the table and the plot).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import packproof.packer as packer
from packproof.evals.bench.common import (
    EXIT_OK,
    EXIT_USAGE,
    machine,
    optional_module,
    positive,
    version,
)
from packproof.evals.bench.common import log_pack as log
from packproof.evals.bench.pack.corpus import (
    BUDGET_TOKENS,
    CORPUS,
    FRESH_TAIL,
    Corpus,
    CorpusError,
    build_request,
    load_corpus,
    pick_prompts,
)
from packproof.evals.bench.pack.memory import child_main, measure_memory
from packproof.evals.bench.pack.process import measure_process
from packproof.evals.bench.pack.report import evaluate_targets, format_report, plot
from packproof.evals.bench.pack.timing import growth, measure_size
from packproof.packer.files import write_atomic
from packproof.packer.jsonio import dumps

__all__ = ["Corpus", "build_request", "load_corpus", "main", "pick_prompts"]

SCHEMA: Final = "packproof.bench.pack.v1"
DEFAULT_SIZES: Final = (1_000, 10_000, 100_000)
DEFAULT_OUT: Final = Path("reports/bench/pack.json")
PROMPTS: Final = 5


@dataclass(frozen=True)
class Config:
    sizes: list[int]
    repeats: int
    seed: int
    out: Path
    strategies: list[str]


def run(config: Config) -> dict[str, Any]:
    """The whole benchmark; returns the report written to ``config.out``."""
    log(f"loading {CORPUS}")
    corpus = load_corpus(max(config.sizes))
    # Prompts from the smallest size, so each is a message of every corpus measured.
    prompts = pick_prompts(corpus.texts[: min(config.sizes)], PROMPTS, config.seed)
    bm25s = optional_module("bm25s")
    if bm25s is None:
        log("bm25s is not installed (pip install 'packproof[bench]'): its column is null")
    results = [
        measure_size(corpus.head(n), prompts, config.strategies, config.repeats, bm25s)
        for n in config.sizes
    ]
    report: dict[str, Any] = {
        "schema": SCHEMA,
        "config": {
            "sizes": config.sizes,
            "repeats": config.repeats,
            "prompts": len(prompts),
            "seed": config.seed,
            "budget_tokens": BUDGET_TOKENS,
            "fresh_tail": FRESH_TAIL,
            "strategies": config.strategies,
            "corpus": {"name": CORPUS, "version": version(CORPUS), "messages": corpus.total},
            "bm25s_available": bm25s is not None,
            "statistic": "seconds; best of repeats, pack is the median over prompts",
        },
        "machine": machine(),
        "prompts": prompts,
        "results": results,
        "growth": growth(results, config.strategies),
        "memory": measure_memory(corpus, prompts[0], config.strategies),
        "process": measure_process(corpus, prompts[0], config.strategies, config.repeats),
    }
    # Targets read the finished report, so they judge exactly the figures written.
    report["targets"], report["targets_not_evaluated"] = evaluate_targets(report)
    return report


# ---------------------------------------------------------------- command line


def _sizes(text: str) -> list[int]:
    try:
        # Ascending and distinct: growth is read between neighbouring sizes.
        sizes = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None
    if not sizes or sizes[0] < 1:
        raise argparse.ArgumentTypeError(f"expected positive sizes, got {text!r}")
    return sizes


def _strategies(text: str) -> list[str]:
    names = sorted({part.strip() for part in text.split(",") if part.strip()})
    unknown = [n for n in names if n not in packer.REGISTRY]
    if not names or unknown:
        known = ",".join(sorted(packer.REGISTRY))
        raise argparse.ArgumentTypeError(f"unknown strategy {unknown or text!r} (known: {known})")
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m packproof.evals.bench.pack",
        description="Benchmark the packer against a bare tokenization pass and bm25s.",
    )
    parser.add_argument("--sizes", type=_sizes, default=list(DEFAULT_SIZES), help="item counts")
    parser.add_argument("--repeats", type=positive, default=5, help="runs per figure (best)")
    parser.add_argument("--seed", type=int, default=0, help="seed for picking the prompts")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="report JSON path")
    parser.add_argument(
        "--strategies",
        type=_strategies,
        default=sorted(packer.REGISTRY),
        help="comma list (default: every registered strategy)",
    )
    # Internal: the memory subprocesses re-enter this module.
    parser.add_argument("--_child", help=argparse.SUPPRESS)
    parser.add_argument("--_no-pack", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args._child is not None:  # a memory subprocess, see measure_memory
        return child_main(args._child, do_pack=not args._no_pack)
    config = Config(args.sizes, args.repeats, args.seed, args.out, args.strategies)
    try:
        report = run(config)
    except CorpusError as exc:
        print(f"bench: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(format_report(report))
    # Canonical JSON (sorted keys, fixed float digits) and no date: runs diff cleanly.
    write_atomic(config.out, dumps(report, indent=2) + "\n")
    log(f"wrote {config.out}")
    if len(config.sizes) > 1 and optional_module("matplotlib") is not None:
        plot(report, config.out.with_suffix(".png"))
        log(f"wrote {config.out.with_suffix('.png')}")
    return EXIT_OK
