"""Benchmark of the prompt-cache model: ``python -m packproof.evals.bench.cache``
(``make bench``). Writes ``reports/bench/cache.json`` and prints a table.

The traces are built in memory from a seed, one chain of ``--steps`` (1,000)
steps per kind. Every prompt is a 2,000-token static segment (``static_segments``
1) and 30-300 items of 10-60 tokens; time gaps are 2-60 s, and on 5% of steps
301-4,000 s, past the 300 s lifetimes and sometimes past the 3,600 s ones:

- ``append``: a conversation that only grows, from 30 items to 300;
- ``sliding``: a drop-oldest buffer, 1-2 items appended per step and the oldest
  dropped past 300 (a prefix break on every step once full);
- ``middle``: one item in the middle half replaced per step, by a new item or
  (half the time) one recalled from earlier prompts, and one appended on half the
  steps (a recall placed mid-prompt: a break on every step);
- ``probes``: the ``append`` kind with, after every tenth step, three question
  probes (a 10-60-token question after the prompt), as a LoCoMo replay has them.

Figures, under every shipped profile (``evals/data/cache-profiles.yaml``), in
steps per second on one core, each the best of its repeats after a full
``gc.collect()``, with the cyclic collector paused as ``packproof cache simulate``
pauses it:

- ``price``: :func:`~packproof.evals.metrics.cache.model.price_prompts` over each chain
  and over the whole trace: the pricing alone, each chain encoded beforehand as
  :class:`~packproof.evals.metrics.cache.model.Prompts` (ids numbered, tokens
  summed: the only per-segment work, which ``simulate`` does as it reads).
  After a full collection each repeat finds little of the trace in the CPU
  caches; ``(warm)`` prices it again back to back: the gap is memory latency.
- ``read``: ``read_steps`` over the trace file, parsing and checking each line
  (the same for every profile), and ``read+price``: steps over the read and
  pricing seconds together.
- ``simulate``: every output line of ``simulate`` (reading, encoding, pricing a
  batch at a time, totals), the whole command but the write to stdout.
- ``encode``: ``Prompts.of`` over each chain's ``Step`` values (``price_chain``'s part).
- ``speed``: ``simulate`` against ``orjson.loads`` of the same lines alone, and
  the model's share of its time (:mod:`~packproof.evals.bench.cache_speed`).
- ``memory``: ``packproof cache simulate`` run in a subprocess on a long trace
  (``--memory-steps``, 1,000,000 steps in ``--memory-chains`` interleaved chains,
  written to a temporary file from the seed): its seconds and peak resident
  memory (:mod:`~packproof.evals.bench.streaming`), against a target of 500 MB.

The targets (each with its floor and their ratio) are reported, never asserted:
the exit code is 0 whatever they say (2 for bad arguments). No date is written.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final

from packproof.evals.bench.cache_speed import describe_speed, json_alone, speed, speed_targets
from packproof.evals.bench.common import EXIT_OK, machine, positive, timed
from packproof.evals.bench.streaming import describe_memory, measure_memory, memory_target
from packproof.evals.metrics.cache.files import load_profiles, read_steps, simulate
from packproof.evals.metrics.cache.model import Profile, Prompts, Step, price_prompts
from packproof.packer.files import write_atomic
from packproof.packer.jsonio import dumps
from packproof.packer.result import cyclic_gc_paused

__all__ = [
    "TARGET_STEPS_PER_SECOND",
    "Config",
    "build_chains",
    "format_report",
    "main",
    "run",
    "trace_text",
]

SCHEMA: Final = "packproof.bench.cache.v1"
DEFAULT_OUT: Final = Path("reports/bench/cache.json")
TARGET_STEPS_PER_SECOND: Final = 1_000_000
STATIC: Final = ("static", 2000)
ITEMS: Final = (30, 300)  # items per prompt
ITEM_TOKENS: Final = (10, 60)
GAPS: Final = (2.0, 60.0)  # seconds between steps
LONG_GAPS: Final = (301.0, 4000.0)  # on LONG_GAP_SHARE of the steps
LONG_GAP_SHARE: Final = 0.05
PROBE_EVERY: Final = 10  # conversation steps between two rounds of probes
PROBES: Final = 3  # probes in a round


def log(message: str) -> None:
    print(f"bench_cache: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the traces


class _Chain:
    """One chain under construction: its items, fresh ids and seeded draws."""

    def __init__(self, name: str, rng: random.Random) -> None:
        self.name, self.rng, self.made, self.t = name, rng, 0, 0.0
        self.items: list[tuple[str, int]] = []
        self.seen: list[tuple[str, int]] = []  # every item made
        self.steps: list[Step] = []

    def item(self) -> tuple[str, int]:
        self.made += 1
        self.seen.append((f"{self.name}-{self.made}", self.rng.randint(*ITEM_TOKENS)))
        return self.seen[-1]

    def step(self, probe: tuple[str, int] | None = None) -> None:
        segments = [STATIC, *self.items] + ([probe] if probe else [])
        self.steps.append(Step(self.t, segments, 1, probe is not None))

    def tick(self) -> None:
        long = self.rng.random() < LONG_GAP_SHARE
        self.t = round(self.t + self.rng.uniform(*(LONG_GAPS if long else GAPS)), 1)


def _append(chain: _Chain, count: int, probes: bool = False) -> None:
    grown = [chain.item() for _ in range(ITEMS[1])]
    for k in range(count):
        chain.items = grown[: ITEMS[0] + (ITEMS[1] - ITEMS[0]) * k // max(count - 1, 1)]
        chain.step()
        if probes and k % PROBE_EVERY == PROBE_EVERY - 1:
            for _ in range(PROBES):
                chain.step(chain.item())
        chain.tick()


def _sliding(chain: _Chain, count: int) -> None:
    chain.items = [chain.item() for _ in range(ITEMS[0])]
    for _ in range(count):
        chain.items += [chain.item() for _ in range(chain.rng.randint(1, 2))]
        del chain.items[: max(len(chain.items) - ITEMS[1], 0)]
        chain.step()
        chain.tick()


def _middle(chain: _Chain, count: int) -> None:
    chain.items = [chain.item() for _ in range(chain.rng.randint(*ITEMS))]
    for _ in range(count):
        size = len(chain.items)
        # half the time an item recalled from earlier prompts, else a new one
        item = chain.rng.choice(chain.seen)
        if chain.rng.random() < 0.5 or item in chain.items:
            item = chain.item()
        chain.items[chain.rng.randrange(size // 4, 3 * size // 4)] = item
        if size < ITEMS[1] and chain.rng.random() < 0.5:
            chain.items.append(chain.item())
        chain.step()
        chain.tick()


KINDS: Final[dict[str, Callable[[_Chain, int], None]]] = {
    "append": _append,
    "sliding": _sliding,
    "middle": _middle,
    "probes": partial(_append, probes=True),
}


def build_chains(seed: int, steps: int) -> dict[str, list[Step]]:
    """Each kind's chain of ``steps`` conversation steps (plus probes), seeded."""
    out = {}
    for offset, (name, build) in enumerate(KINDS.items()):
        chain = _Chain(name, random.Random(seed * len(KINDS) + offset))
        build(chain, steps)
        out[name] = chain.steps
    return out


def trace_text(chains: dict[str, list[Step]]) -> str:
    """The chains as a ``packproof cache simulate`` trace, one chain after another."""
    lines = []
    for name, steps in chains.items():
        for t, segments, static, probe, marks in steps:
            line: dict[str, object] = {
                "chain": name,
                "t": t,
                "segments": segments,
                "static_segments": static,
            }
            if probe:
                line["probe"] = True
            if marks is not None:
                line["breakpoints"] = list(marks)
            lines.append(dumps(line))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- the measurements


def _best(fn: Callable[[], object], repeats: int) -> float:
    """The least seconds of ``repeats`` calls, each after a full collection and
    with the cyclic collector paused during the call, as ``simulate`` runs."""

    def paused() -> object:
        with cyclic_gc_paused():
            return fn()

    return min(timed(paused)[0] for _ in range(repeats))


def _warm(fn: Callable[[], object], repeats: int) -> float:
    """The least seconds of ``repeats`` calls run back to back with no collection
    between, each finding the data where the one before left it, in the CPU
    caches: a bound that pricing right after reading does not reach."""
    best = math.inf
    with cyclic_gc_paused():
        fn()
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
    return best


def _rate(steps: int, seconds: float) -> dict[str, Any]:
    return {"steps": steps, "seconds": seconds, "steps_per_second": steps / seconds}


def _measure_profile(
    name: str,
    prof: Profile,
    path: str,
    encoded: dict[str, Prompts],
    read_seconds: float,
    config: Config,
) -> dict[str, Any]:
    chains: dict[str, Any] = {}
    for chain, prompts in encoded.items():
        seconds = _best(partial(price_prompts, prompts, prof), config.repeats)
        chains[chain] = _rate(len(prompts.codes), seconds)
    steps = sum(len(p.codes) for p in encoded.values())

    def price_all() -> object:
        return [price_prompts(p, prof) for p in encoded.values()]

    whole = _best(price_all, config.repeats)
    runs = (lambda: sum(1 for _ in simulate(path, name, prof)), lambda: json_alone(path))
    pairs = [[_best(run, 1) for run in runs] for _ in range(config.read_repeats)]  # alternated,
    simulated, json_seconds = map(min, zip(*pairs, strict=True))  # under the same load
    return {
        "chains": chains,
        "trace": _rate(steps, whole),
        "trace_warm": _rate(steps, _warm(price_all, config.repeats)),
        "read_price": _rate(steps, read_seconds + whole),
        "simulate": _rate(steps, simulated),
        "json": _rate(steps, json_seconds),
    }


@dataclass(frozen=True)
class Config:
    seed: int
    steps: int
    repeats: int
    read_repeats: int
    out: Path
    memory_steps: int = 1_000_000  # 0: no memory measurement
    memory_chains: int = 100


def run(config: Config) -> dict[str, Any]:
    """The whole benchmark; returns the report written to ``config.out``."""
    chains = build_chains(config.seed, config.steps)
    profiles = load_profiles()
    encoded = {name: Prompts.of(steps) for name, steps in chains.items()}
    steps = sum(len(s) for s in chains.values())
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "trace.jsonl")
        Path(path).write_text(trace_text(chains), "utf-8")
        log(f"{steps} steps in {len(chains)} chains; reading")
        read_seconds = _best(lambda: sum(1 for _ in read_steps(path)), config.read_repeats)
        encode_seconds = _best(lambda: [Prompts.of(c) for c in chains.values()], config.repeats)
        measured = {}
        for name, prof in profiles.items():
            log(f"pricing under {name}")
            measured[name] = _measure_profile(name, prof, path, encoded, read_seconds, config)
        memory = None
        if config.memory_steps:
            log(f"cache simulate on {config.memory_steps} steps: peak memory")
            memory = measure_memory(
                config.memory_steps, config.memory_chains, config.seed, Path(tmp)
            )
    report: dict[str, Any] = {
        "schema": SCHEMA,
        "config": {
            "seed": config.seed,
            "steps": config.steps,
            "chains": {
                name: {"steps": len(s), "probes": sum(x.probe for x in s)}
                for name, s in chains.items()
            },
            "static_tokens": STATIC[1],
            "items": list(ITEMS),
            "item_tokens": list(ITEM_TOKENS),
            "gaps_s": list(GAPS),
            "long_gaps_s": list(LONG_GAPS),
            "long_gap_share": LONG_GAP_SHARE,
            "repeats": config.repeats,
            "read_repeats": config.read_repeats,
            "memory_steps": config.memory_steps,
            "memory_chains": config.memory_chains,
            "statistic": "seconds; best of repeats; one core; cyclic collector paused",
        },
        "machine": machine(),
        "read": _rate(steps, read_seconds),
        "encode": _rate(steps, encode_seconds),
        "profiles": measured,
        "memory": memory,
        "speed": speed(steps, steps, measured),
    }
    report["targets"] = [
        {
            "target": f"{name}: pricing >= {TARGET_STEPS_PER_SECOND:,} steps/s on one core "
            "(whole trace, reading not counted)",
            "measured": figures["trace"]["steps_per_second"],
            "unit": "steps/s",
            "floor": TARGET_STEPS_PER_SECOND,
            "ratio": figures["trace"]["steps_per_second"] / TARGET_STEPS_PER_SECOND,
            "at_most": False,
            "met": figures["trace"]["steps_per_second"] >= TARGET_STEPS_PER_SECOND,
        }
        for name, figures in measured.items()
    ]
    report["targets"] += speed_targets(report["speed"])
    if memory is not None:
        report["targets"].append(memory_target(memory))
    return report


# ---------------------------------------------------------------- the table and command line


def _k(rate: dict[str, Any]) -> str:
    return f"{rate['steps_per_second'] / 1000:,.0f}k"


def format_report(report: dict[str, Any]) -> str:
    cfg = report["config"]
    kinds = list(cfg["chains"])
    lines = [
        f"prompt-cache model: {len(kinds)} chains of {cfg['steps']} steps (seed {cfg['seed']}), "
        f"{report['read']['steps']} steps in all; steps/s, best of {cfg['repeats']} "
        f"(reading and simulate: {cfg['read_repeats']})",
        f"  read {_k(report['read'])}, encode {_k(report['encode'])}; price per chain and "
        "for the whole trace:",
        "  "
        + f"{'profile':<16}"
        + "".join(f"{k:>9}" for k in kinds)
        + f"{'trace':>9}{'(warm)':>9}{'read+price':>12}{'simulate':>10}",
    ]
    for name, f in report["profiles"].items():
        row = "".join(f"{_k(f['chains'][k]):>9}" for k in kinds)
        lines.append(
            f"  {name:<16}{row}{_k(f['trace']):>9}{_k(f['trace_warm']):>9}"
            f"{_k(f['read_price']):>12}{_k(f['simulate']):>10}"
        )
    lines.append(describe_speed(report["speed"]))
    if report.get("memory"):
        lines.append(describe_memory(report["memory"]))
    lines.append("targets")
    for t in report["targets"]:
        verdict = "met" if t["met"] else "NOT MET"
        lines.append(f"  [{verdict:>7}] {t['target']}: {t['measured']:,.0f} {t['unit']}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m packproof.evals.bench.cache",
        description="Benchmark the prompt-cache model of packproof cache simulate.",
    )
    parser.add_argument("--seed", type=int, default=0, help="the traces' seed (default 0)")
    parser.add_argument("--steps", type=positive, default=1000, help="steps per chain")
    parser.add_argument("--repeats", type=positive, default=7, help="pricing runs (best)")
    parser.add_argument(
        "--read-repeats", type=positive, default=3, help="reading and simulate runs (best)"
    )
    parser.add_argument(
        "--memory-steps",
        type=int,
        default=1_000_000,
        help="steps of the trace whose peak memory is measured (0: none; default 1,000,000)",
    )
    parser.add_argument(
        "--memory-chains", type=positive, default=100, help="its chains (default 100)"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="report JSON path")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.memory_steps < 0:
        build_parser().error(f"--memory-steps: expected 0 or more, found {args.memory_steps}")
    config = Config(
        args.seed,
        args.steps,
        args.repeats,
        args.read_repeats,
        args.out,
        args.memory_steps,
        args.memory_chains,
    )
    report = run(config)
    print(format_report(report))
    # Canonical JSON (sorted keys, fixed float digits) and no date: runs diff cleanly.
    write_atomic(config.out, dumps(report, indent=2) + "\n")
    log(f"wrote {config.out}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
