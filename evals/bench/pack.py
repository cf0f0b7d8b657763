"""Benchmark of the packer: ``python -m evals.bench`` (``make bench``).

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
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib
import importlib.metadata
import itertools
import json
import math
import os
import platform
import random
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Final, TypeVar

import numpy as np
from ctxpack.packer.files import write_atomic
from ctxpack.packer.jsonio import dumps

from ctxpack import packer

__all__ = ["Corpus", "build_request", "load_corpus", "main", "pick_prompts"]

SCHEMA: Final = "ctxpack.bench.pack.v1"
DEFAULT_SIZES: Final = (1_000, 10_000, 100_000)
DEFAULT_OUT: Final = Path("reports/bench/pack.json")
PROMPTS: Final = 5
MIN_PROMPT_WORDS: Final = 4
BUDGET_TOKENS: Final = 4096
FRESH_TAIL: Final = 8
CORPUS: Final = "chitchat-dataset"
WORD: Final = re.compile(r"\w+")

# The targets: sizes they are stated at, and their limits.
TARGET_SIZE: Final = 100_000
GROWTH_FROM: Final = 10_000
LEXICAL: Final = ("bm25", "hybrid")
MAX_OVER_TOKENIZE: Final = 1.5
MAX_OVER_BM25S: Final = 1.0
MAX_GROWTH: Final = 12.0
MAX_RSS_MB: Final = 500.0

EXIT_OK, EXIT_USAGE = 0, 2
T = TypeVar("T")


def log(message: str) -> None:
    """A progress line on stderr (stdout carries the table)."""
    print(f"bench: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- corpus


@dataclass(frozen=True)
class Corpus:
    """Messages column-wise. Only strings and ints, which the cyclic garbage
    collector does not track, so holding the corpus does not slow the packs
    measured beside it (a list of 100k message objects would)."""

    texts: list[str]
    roles: list[str]
    turns: list[int]
    total: int  # messages in the whole dataset

    def __len__(self) -> int:
        return len(self.texts)

    def head(self, n: int) -> Corpus:
        return Corpus(self.texts[:n], self.roles[:n], self.turns[:n], self.total)


class CorpusError(RuntimeError):
    """The corpus package is not installed, or cannot supply what was asked."""


def load_corpus(limit: int) -> Corpus:
    """The first ``limit`` messages, conversations in sorted key order. Each
    conversation is a list of groups (messages by one sender); groups alternate
    user/assistant and each is one turn."""
    try:
        ccc = importlib.import_module("chitchat_dataset")
    except ImportError:
        raise CorpusError(
            f"the benchmark corpus needs {CORPUS}: pip install 'ctxpack[bench]'"
        ) from None
    dataset: dict[str, Any] = ccc.Dataset()  # conversation key -> {"messages": groups}
    texts: list[str] = []
    roles: list[str] = []
    turns: list[int] = []
    turn = 0
    for key in sorted(dataset):
        for index, group in enumerate(dataset[key]["messages"]):
            turn += 1
            role = "user" if index % 2 == 0 else "assistant"
            texts.extend(m["text"] for m in group)
            roles.extend([role] * len(group))
            turns.extend([turn] * len(group))
    if len(texts) < limit:
        raise CorpusError(f"{CORPUS} has only {len(texts)} messages; use smaller --sizes")
    return Corpus(texts[:limit], roles[:limit], turns[:limit], total=len(texts))


def pick_prompts(texts: Sequence[str], count: int, seed: int) -> list[str]:
    """``count`` texts of at least MIN_PROMPT_WORDS words, seeded. Prompts are
    messages of the corpus, as a user's next question often echoes the chat;
    shorter ones would leave BM25 too few terms to work on."""
    candidates = [t for t in texts if len(WORD.findall(t)) >= MIN_PROMPT_WORDS]
    if not candidates:
        raise CorpusError(f"no message of {MIN_PROMPT_WORDS}+ words to use as a prompt")
    return random.Random(seed).sample(candidates, min(count, len(candidates)))


def build_items(corpus: Corpus) -> list[dict[str, Any]]:
    return [
        {"id": f"m{i}", "text": text, "role": role, "turn": turn}
        for i, (text, role, turn) in enumerate(
            zip(corpus.texts, corpus.roles, corpus.turns, strict=True)
        )
    ]


def build_request(items: list[dict[str, Any]], prompt: str, strategy: str) -> dict[str, Any]:
    """A request JSON object; ``items`` is shared, never copied or mutated."""
    return {
        "items": items,
        "prompt": prompt,
        "budget_tokens": BUDGET_TOKENS,
        "fresh_tail": {"count": FRESH_TAIL},
        "strategy": {"name": strategy, "params": {}},
    }


# ---------------------------------------------------------------- timing


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    """Seconds of one call of ``fn`` (after a full collection) and its result."""
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def best_of(repeats: int, fn: Callable[[], T]) -> tuple[float, T]:
    """The fastest of ``repeats`` calls and the last result."""
    best = math.inf
    result: T | None = None
    for _ in range(repeats):
        result = None  # drop the previous result before the next run
        seconds, result = timed(fn)
        best = min(best, seconds)
    assert result is not None
    return best, result


def time_tokenize(texts: list[str], repeats: int) -> float:
    """The floor: lowercase and split every text once, keeping the term lists
    (a scorer needs them, and building them is much of the cost)."""
    return best_of(repeats, lambda: [WORD.findall(t.lower()) for t in texts])[0]


@dataclass(frozen=True)
class Bm25sTiming:
    tokenize: float
    index_query: float


def _bm25s_index_query(bm25s: Any, tokens: Any, prompt: str, n_docs: int) -> np.ndarray:
    retriever = bm25s.BM25(method="lucene")  # the idf the packer's bm25 uses
    retriever.index(tokens, show_progress=False)
    query = bm25s.tokenize([prompt], stopwords=None, show_progress=False, return_ids=False)[0]
    known = [t for t in query if t in retriever.vocab_dict]
    # get_scores fails on an empty query; no known term means every score is 0.
    scores: np.ndarray = retriever.get_scores(known) if known else np.zeros(n_docs)
    return scores


def time_bm25s(bm25s: Any, texts: list[str], prompt: str, repeats: int) -> Bm25sTiming:
    """Best-of-``repeats`` of bm25s's tokenize pass and, apart, of index + one query."""
    best_tok = best_iq = math.inf
    for _ in range(repeats):
        # Two clocks in one repeat: the index needs this repeat's tokens.
        tok_s, tokens = timed(
            functools.partial(bm25s.tokenize, texts, stopwords=None, show_progress=False)
        )
        iq_s, _ = timed(functools.partial(_bm25s_index_query, bm25s, tokens, prompt, len(texts)))
        best_tok, best_iq = min(best_tok, tok_s), min(best_iq, iq_s)
    return Bm25sTiming(best_tok, best_iq)


@dataclass(frozen=True)
class StrategyTiming:
    pack: float  # median over prompts of best-of-repeats
    pack_per_prompt: list[float]
    render: float  # best-of-repeats, first prompt's result
    mode: str  # the first prompt's pack mode
    selected: int


def time_strategy(
    name: str, items: list[dict[str, Any]], prompts: list[str], repeats: int
) -> StrategyTiming:
    """Pack time per prompt and the render time of the first prompt's pack (render
    hardly depends on the prompt and is the slowest step, so it is timed once)."""
    per_prompt: list[float] = []
    render = math.nan
    mode, selected = "", 0
    for index, prompt in enumerate(prompts):
        # A fresh parse per call: the packer caches terms on the parsed items only.
        request = build_request(items, prompt, name)  # outside the clock
        seconds, result = best_of(repeats, functools.partial(packer.pack, request))
        per_prompt.append(seconds)
        if index == 0:
            render = best_of(repeats, result.to_json)[0]
            mode, selected = result.mode, len(result.selected_ids)
        del result
    return StrategyTiming(statistics.median(per_prompt), per_prompt, render, mode, selected)


# ---------------------------------------------------------------- memory


def peak_rss_mb() -> tuple[float, str]:
    """This process's peak resident set size in MB, and where it was read.

    Linux keeps the parent's high-water mark in ``ru_maxrss`` across fork and
    exec, so a child started by this (corpus-laden) process would report at least
    the parent's peak. ``VmHWM`` in ``/proc/self/status`` belongs to the exec'd
    image alone; ``ru_maxrss`` (KiB on Linux, bytes on macOS) is the fallback.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024, "VmHWM"
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return (peak / 2**20 if sys.platform == "darwin" else peak / 1024), "ru_maxrss"


def child_main(strategy: str, do_pack: bool) -> int:
    """Subprocess side: read the corpus columns and prompt from stdin, build the
    request, pack once unless told not to, print the peak RSS as JSON."""
    payload = json.loads(sys.stdin.buffer.read())
    # Both kinds of child do exactly this much, so their peaks differ by the pack.
    corpus = Corpus(payload["texts"], payload["roles"], payload["turns"], len(payload["texts"]))
    request = build_request(build_items(corpus), payload["prompt"], strategy)
    del payload, corpus
    if do_pack:
        packer.pack(request)
    peak, source = peak_rss_mb()
    sys.stdout.write(json.dumps({"peak_rss_mb": peak, "source": source}) + "\n")
    return EXIT_OK


def child_peak_mb(payload: bytes, strategy: str, do_pack: bool) -> tuple[float, str]:
    """Peak RSS of a fresh interpreter running :func:`child_main`, and its source."""
    argv = [sys.executable, "-m", "evals.bench", "--_child", strategy]
    if not do_pack:
        argv.append("--_no-pack")
    # A fresh interpreter, not a fork: a fork would start with this process's pages.
    proc = subprocess.run(argv, input=payload, capture_output=True, check=False)
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:]
        raise RuntimeError(f"memory child for {strategy} failed: {' '.join(tail)}")
    answer = json.loads(proc.stdout)
    return float(answer["peak_rss_mb"]), str(answer["source"])


def measure_memory(corpus: Corpus, prompt: str, strategies: list[str]) -> dict[str, Any]:
    """Peak RSS at the largest size: a build-only baseline child, then one pack child
    per strategy; the increment is what the pack itself added."""
    # The corpus goes over stdin: a child loading chitchat-dataset itself would
    # peak at the size of that whole JSON file, hiding the pack.
    columns = {"texts": corpus.texts, "roles": corpus.roles, "turns": corpus.turns}
    payload = json.dumps({**columns, "prompt": prompt}).encode()
    baseline, source = child_peak_mb(payload, strategies[0], do_pack=False)
    log(f"memory at {len(corpus)} items: build-only baseline {baseline:.1f} MB ({source})")
    per_strategy: dict[str, Any] = {}
    for name in strategies:
        peak, _ = child_peak_mb(payload, name, do_pack=True)
        per_strategy[name] = {"peak_rss_mb": peak, "increment_mb": peak - baseline}
        log(f"memory at {len(corpus)} items: {name} peak {peak:.1f} MB")
    return {
        "size": len(corpus),
        "source": source,
        "baseline_rss_mb": baseline,
        "strategies": per_strategy,
    }


# ---------------------------------------------------------------- the run


@dataclass(frozen=True)
class Config:
    sizes: list[int]
    repeats: int
    seed: int
    out: Path
    strategies: list[str]


def _ratio(a: float | None, b: float | None) -> float | None:
    # A zero denominator only happens on timer granularity at tiny sizes.
    return None if a is None or b is None or b <= 0 else a / b


def measure_size(
    corpus: Corpus,
    prompts: list[str],
    config: Config,
    bm25s: ModuleType | None,
) -> dict[str, Any]:
    """Every timing at one corpus size, with the ratios between them."""
    n = len(corpus)
    texts = corpus.texts
    # One item list for every request at this size, as one caller's history would be.
    items = build_items(corpus)
    repeats = config.repeats
    tokenize = time_tokenize(texts, repeats)
    log(f"{n} items: tokenize {tokenize:.4f} s")
    bm = None if bm25s is None else time_bm25s(bm25s, texts, prompts[0], repeats)
    if bm is not None:
        log(f"{n} items: bm25s tokenize {bm.tokenize:.4f} s, index+query {bm.index_query:.4f} s")
    strategies: dict[str, Any] = {}
    for name in config.strategies:
        st = time_strategy(name, items, prompts, repeats)
        log(f"{n} items: {name} pack {st.pack:.4f} s, render {st.render:.4f} s")
        strategies[name] = {
            "pack": st.pack,
            "pack_per_prompt": st.pack_per_prompt,
            "render": st.render,
            "mode": st.mode,
            "selected": st.selected,
            "pack_over_tokenize": _ratio(st.pack, tokenize),
            "pack_over_bm25s": _ratio(st.pack, None if bm is None else bm.index_query),
        }
    return {
        "size": n,
        "chars": sum(map(len, texts)),
        "tokenize": tokenize,
        "bm25s_tokenize": None if bm is None else bm.tokenize,
        "bm25s": None if bm is None else bm.index_query,
        "strategies": strategies,
    }


def growth(results: list[dict[str, Any]], strategies: list[str]) -> dict[str, dict[str, float]]:
    """Pack time ratio between each pair of consecutive sizes, per strategy."""
    out: dict[str, dict[str, float]] = {name: {} for name in strategies}
    for small, large in itertools.pairwise(results):
        for name in strategies:
            key = f"{small['size']}->{large['size']}"
            ratio = _ratio(large["strategies"][name]["pack"], small["strategies"][name]["pack"])
            if ratio is not None:
                out[name][key] = ratio
    return out


def evaluate_targets(report: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The issue's targets that this run measured, and why any others were not."""
    evaluated: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    by_size = {r["size"]: r for r in report["results"]}
    top = by_size.get(TARGET_SIZE)
    names = report["config"]["strategies"]
    no_top = f"{TARGET_SIZE} is not among --sizes"

    def add(target: str, measured: float | None, limit: float, why: str, strict: bool) -> None:
        # strict: "under" the limit; otherwise "within" it (equal passes).
        if measured is None:
            skipped.append({"target": target, "reason": why})
        else:
            ok = measured < limit if strict else measured <= limit
            evaluated.append({"target": target, "measured": measured, "met": ok})

    for name in (n for n in LEXICAL if n in names):
        strat = top["strategies"][name] if top else {}
        add(
            f"{name} pack at {TARGET_SIZE} items <= {MAX_OVER_TOKENIZE:g} x tokenize",
            strat.get("pack_over_tokenize"),
            MAX_OVER_TOKENIZE,
            no_top,
            strict=False,
        )
        add(
            f"{name} pack at {TARGET_SIZE} items <= bm25s index+query",
            strat.get("pack_over_bm25s"),
            MAX_OVER_BM25S,
            no_top if top is None else "bm25s is not installed",
            strict=False,
        )
    key = f"{GROWTH_FROM}->{TARGET_SIZE}"
    for name in names:
        add(
            f"{name} pack time growth {key} items <= {MAX_GROWTH:g}x",
            report["growth"][name].get(key) if GROWTH_FROM in by_size else None,
            MAX_GROWTH,
            f"needs {GROWTH_FROM} and {TARGET_SIZE} among --sizes",
            strict=False,
        )
    memory = report["memory"]
    for name in names:
        peak = memory["strategies"][name]["peak_rss_mb"] if memory["size"] == TARGET_SIZE else None
        add(
            f"{name} peak RSS at {TARGET_SIZE} items < {MAX_RSS_MB:g} MB",
            peak,
            MAX_RSS_MB,
            f"memory is measured at the largest size, {TARGET_SIZE} is not it",
            strict=True,
        )
    return evaluated, skipped


def _optional_module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "numpy": np.__version__,
        "ctxpack": packer.__version__,
        "bm25s": _version("bm25s"),
    }


def run(config: Config) -> dict[str, Any]:
    """The whole benchmark; returns the report written to ``config.out``."""
    log(f"loading {CORPUS}")
    corpus = load_corpus(max(config.sizes))
    # Prompts from the smallest size, so each is a message of every corpus measured.
    prompts = pick_prompts(corpus.texts[: min(config.sizes)], PROMPTS, config.seed)
    bm25s = _optional_module("bm25s")
    if bm25s is None:
        log("bm25s is not installed (pip install 'ctxpack[bench]'): its column is null")
    results = [measure_size(corpus.head(n), prompts, config, bm25s) for n in config.sizes]
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
            "corpus": {"name": CORPUS, "version": _version(CORPUS), "messages": corpus.total},
            "bm25s_available": bm25s is not None,
            "statistic": "seconds; best of repeats, pack is the median over prompts",
        },
        "machine": machine(),
        "prompts": prompts,
        "results": results,
        "growth": growth(results, config.strategies),
        "memory": measure_memory(corpus, prompts[0], config.strategies),
    }
    # Targets read the finished report, so they judge exactly the figures written.
    report["targets"], report["targets_not_evaluated"] = evaluate_targets(report)
    return report


# ---------------------------------------------------------------- output


def plot(report: dict[str, Any], path: Path) -> None:
    """Pack time against item count (log-log) per strategy, beside the bare
    tokenization pass and bm25s, as a PNG for the README."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = report["results"]
    sizes = [r["size"] for r in results]
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    ax.plot(sizes, [r["tokenize"] for r in results], "k--", label="bare regex tokenize pass")
    if all(r["bm25s"] is not None for r in results):
        ax.plot(sizes, [r["bm25s"] for r in results], "k:", label="bm25s index + 1 query")
    for name in report["config"]["strategies"]:
        ax.plot(sizes, [r["strategies"][name]["pack"] for r in results], marker="o", label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("items (real chat messages, chitchat-dataset)")
    ax.set_ylabel("seconds (median over prompts of best-of-repeats)")
    ax.set_title("ctxpack pack time, validation to selection")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)


def _cell(value: float | None, fmt: str) -> str:
    # None: bm25s missing or a ratio without a denominator; NaN: never timed.
    return "-" if value is None or math.isnan(value) else format(value, fmt)


def format_report(report: dict[str, Any]) -> str:
    """A plain-text table, sizes as columns, followed by memory and targets."""
    results = report["results"]
    names = report["config"]["strategies"]
    width = 14  # wide enough for 100000 and for seconds to four decimals
    lines = [f"{'seconds':<26}" + "".join(f"{r['size']:>{width}}" for r in results)]

    def row(label: str, values: list[float | None], fmt: str = ".4f") -> None:
        lines.append(f"{label:<26}" + "".join(f"{_cell(v, fmt):>{width}}" for v in values))

    row("tokenize (bare regex)", [r["tokenize"] for r in results])
    row("bm25s tokenize", [r["bm25s_tokenize"] for r in results])
    row("bm25s index+query", [r["bm25s"] for r in results])
    for name in names:
        row(f"{name} pack", [r["strategies"][name]["pack"] for r in results])
        row(f"{name} render", [r["strategies"][name]["render"] for r in results])
    lines.append("ratios")
    for name in names:
        strats = [r["strategies"][name] for r in results]
        row(f"{name} pack/tokenize", [s["pack_over_tokenize"] for s in strats], ".2f")
        row(f"{name} pack/bm25s", [s["pack_over_bm25s"] for s in strats], ".2f")
    for name, steps in report["growth"].items():
        text = ", ".join(f"{k}: {v:.2f}x" for k, v in steps.items()) or "-"
        lines.append(f"growth {name}: {text}")
    memory = report["memory"]
    lines.append(
        f"peak RSS at {memory['size']} items (MB): build-only baseline "
        f"{memory['baseline_rss_mb']:.1f} ({memory['source']})"
    )
    for name, mem in memory["strategies"].items():
        lines.append(
            f"  {name:<24}peak {mem['peak_rss_mb']:8.1f}   pack's increment "
            f"{mem['increment_mb']:8.1f}"
        )
    lines.append("targets")
    for t in report["targets"]:
        verdict = "met" if t["met"] else "NOT MET"
        lines.append(f"  [{verdict:>7}] {t['target']}: measured {t['measured']:.2f}")
    for t in report["targets_not_evaluated"]:
        lines.append(f"  [not run] {t['target']}: {t['reason']}")
    return "\n".join(lines)


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


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _strategies(text: str) -> list[str]:
    names = sorted({part.strip() for part in text.split(",") if part.strip()})
    unknown = [n for n in names if n not in packer.REGISTRY]
    if not names or unknown:
        known = ",".join(sorted(packer.REGISTRY))
        raise argparse.ArgumentTypeError(f"unknown strategy {unknown or text!r} (known: {known})")
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evals.bench",
        description="Benchmark the packer against a bare tokenization pass and bm25s.",
    )
    parser.add_argument("--sizes", type=_sizes, default=list(DEFAULT_SIZES), help="item counts")
    parser.add_argument("--repeats", type=_positive, default=5, help="runs per figure (best)")
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
    if len(config.sizes) > 1 and _optional_module("matplotlib") is not None:
        plot(report, config.out.with_suffix(".png"))
        log(f"wrote {config.out.with_suffix('.png')}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
