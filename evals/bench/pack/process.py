"""The packer benchmark's whole-process timings: ``packproof pack REQUEST.json`` run
as a user runs it (a fresh interpreter: start-up, imports, reading and parsing
the file, packing, rendering, writing) at each ``--trace`` level, against a bare
tokenization process over the same file: a fresh interpreter that reads and
parses the JSON and runs the benchmark's floor pass
(``[WORD.findall(t.lower()) for t in texts]``, :data:`corpus.WORD`) over
every text, and nothing else.

Wall time of each subprocess, best of ``repeats``; both write their output to
``/dev/null``, so neither pays for a reader. The request file is written once
per strategy into a temporary folder (UTF-8, as ``json.dumps`` with
``ensure_ascii=False`` writes it) and removed afterwards.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

from packproof.evals.bench.common import log_pack as log
from packproof.evals.bench.pack.corpus import WORD, Corpus, build_items, build_request
from packproof.evals.bench.pack.timing import ratio

__all__ = ["LEVELS", "measure_process", "tokenize_script"]

LEVELS: Final = ("full", "decisions", "none")  # packproof pack --trace LEVEL


def tokenize_script() -> str:
    """The bare tokenization process's program: the floor pass over the request
    file given as its argument, with the benchmark's own word pattern."""
    return (
        "import json, re, sys\n"
        f"WORD = re.compile({WORD.pattern!r})\n"
        "with open(sys.argv[1], 'rb') as f:\n"
        "    request = json.loads(f.read())\n"
        "terms = [WORD.findall(item['text'].lower()) for item in request['items']]\n"
    )


def _wall(argv: list[str]) -> float:
    """Seconds of wall time of one run of ``argv`` (which must succeed)."""
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:]
        raise RuntimeError(f"{' '.join(argv[:5])} ... failed: {' '.join(tail)}")
    return seconds


def _best_walls(commands: dict[str, list[str]], repeats: int) -> dict[str, float]:
    """The fastest of ``repeats`` runs of each command. The commands take turns
    (round-robin), so a busy spell of the machine slows all of them alike."""
    best = dict.fromkeys(commands, math.inf)
    for _ in range(repeats):
        for key, argv in commands.items():
            best[key] = min(best[key], _wall(argv))
    return best


def measure_process(
    corpus: Corpus, prompt: str, strategies: list[str], repeats: int
) -> dict[str, Any]:
    """Whole-process seconds of ``packproof pack`` per strategy and trace level, and
    of the bare tokenization process over the same file, timed in turns with
    them; the ratios are to that floor."""
    items = build_items(corpus)
    per_strategy: dict[str, Any] = {}
    request_bytes = 0
    with tempfile.TemporaryDirectory(prefix="packproof-bench-") as folder:
        for name in strategies:
            path = Path(folder) / f"{name}.json"
            text = json.dumps(build_request(items, prompt, name), ensure_ascii=False)
            path.write_bytes(text.encode("utf-8"))
            request_bytes = path.stat().st_size
            commands = {"tokenize_process": [sys.executable, "-c", tokenize_script(), str(path)]}
            for level in LEVELS:
                commands[level] = [sys.executable, "-m", "packproof", "pack", str(path)]
                commands[level] += ["--trace", level]
            timings: dict[str, Any] = _best_walls(commands, repeats)
            for level in LEVELS:
                timings[f"{level}_over_tokenize"] = ratio(
                    timings[level], timings["tokenize_process"]
                )
            log(
                f"{len(corpus)} items: {name} pack process "
                + ", ".join(f"--trace {level} {timings[level]:.3f} s" for level in LEVELS)
                + f"; bare tokenization process {timings['tokenize_process']:.3f} s"
            )
            per_strategy[name] = timings
    return {
        "size": len(corpus),
        "request_mb": request_bytes / 1e6,
        "statistic": "seconds of wall time per process, best of repeats taken in turns; "
        "output to /dev/null",
        "strategies": per_strategy,
    }
