"""The packer benchmark's peak memory, measured at the largest size in fresh
subprocesses: one that only builds the request (the baseline) and one per
strategy that builds it and packs once. Both the parent side (start a child,
read its answer) and the child side (``--_child``) live here; the child is
started as ``python -m packproof.evals.bench.pack --_child STRATEGY``."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from typing import Any, Final

import packproof.packer as packer
from packproof.evals.bench.common import EXIT_OK
from packproof.evals.bench.common import log_pack as log
from packproof.evals.bench.pack.corpus import Corpus, build_items, build_request

__all__ = ["child_main", "child_peak_mb", "measure_memory", "peak_rss_mb"]

# The module whose command line answers --_child (see pack.main).
CHILD_MODULE: Final = "packproof.evals.bench.pack"


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
    argv = [sys.executable, "-m", CHILD_MODULE, "--_child", strategy]
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
