"""The memory of ``packproof cache simulate`` on a long trace (part of
``python -m packproof.evals.bench.cache``): the command streams, so its peak
memory should follow what each chain keeps (its live cache entries, its segment
ids, its totals), not the trace's length.

The trace, written to a file a line at a time from a seed: ``chains`` chains
interleaved round-robin (concurrent sessions), each a drop-oldest buffer of
8-16 items of 10-60 tokens behind a 2,000-token static segment, 1-2 new items a
step (so about 1.5 new segment ids a step), 2-60 s between a chain's steps and
301-4,000 s on 5% of them. ``packproof cache simulate`` runs on it in a
subprocess (stdout to /dev/null), and its peak resident memory is read from the
kernel's accounting of that one child (``os.wait4``).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Final

from packproof.packer.jsonio import dumps

__all__ = [
    "MEMORY_TARGET_BYTES",
    "describe_memory",
    "measure_memory",
    "memory_target",
    "write_trace",
]

MEMORY_TARGET_BYTES: Final = 500 * 1024 * 1024  # the target for 1e6 steps
WINDOW: Final = (8, 16)  # items in a chain's buffer
ITEM_TOKENS: Final = (10, 60)
GAPS: Final = (2.0, 60.0)
LONG_GAPS: Final = (301.0, 4000.0)
LONG_GAP_SHARE: Final = 0.05
STATIC: Final = ("static", 2000)


def write_trace(path: Path, steps: int, chains: int, seed: int) -> dict[str, Any]:
    """Write the trace (see the module docstring); return its shape."""
    rng = random.Random(seed)
    items: list[list[tuple[str, int]]] = [[] for _ in range(chains)]
    times = [0.0] * chains
    made = 0
    with path.open("w", encoding="utf-8") as out:
        for k in range(steps):
            c = k % chains
            window = items[c]
            for _ in range(rng.randint(1, 2) if window else WINDOW[0]):
                made += 1
                window.append((f"c{c}-{made}", rng.randint(*ITEM_TOKENS)))
            del window[: max(len(window) - rng.randint(*WINDOW), 0)]
            segments = [STATIC, *window]
            out.write(dumps({"chain": f"c{c}", "t": times[c], "segments": segments}) + "\n")
            long = rng.random() < LONG_GAP_SHARE
            times[c] = round(times[c] + rng.uniform(*(LONG_GAPS if long else GAPS)), 1)
    return {
        "steps": steps,
        "chains": chains,
        "item_ids": made,  # distinct segment ids besides the static one
        "bytes": path.stat().st_size,
    }


def _peak(argv: list[str], folder: Path) -> tuple[float, int, int, str]:
    """Seconds, peak resident bytes and exit code of one run of ``argv``, and
    its stderr; the peak is this child's alone (``os.wait4``)."""
    err_path = folder / "stderr.txt"
    with err_path.open("wb") as err:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    # ru_maxrss is in kilobytes on Linux (bytes on macOS)
    scale = 1 if sys.platform == "darwin" else 1024
    return seconds, usage.ru_maxrss * scale, child.returncode, err_path.read_text("utf-8")


def measure_memory(steps: int, chains: int, seed: int, folder: Path) -> dict[str, Any]:
    """The trace's shape, then the command's time and peak memory on it."""
    path = folder / "long-trace.jsonl"
    shape = write_trace(path, steps, chains, seed)
    argv = [sys.executable, "-m", "packproof", "cache", "simulate", str(path)]
    seconds, peak, code, err = _peak([*argv, "--profile", "anthropic"], folder)
    path.unlink()
    if code != 0:
        raise RuntimeError(f"packproof cache simulate failed ({code}): {err.strip()}")
    return {
        "trace": shape,
        "profile": "anthropic",
        "seconds": seconds,
        "steps_per_second": steps / seconds,
        "peak_rss_bytes": peak,
        "statistic": "one run; peak resident set size of the packproof process (os.wait4)",
    }


def memory_target(memory: dict[str, Any]) -> dict[str, Any]:
    """The target's line of the report: the peak against :data:`MEMORY_TARGET_BYTES`."""
    return {
        "target": f"cache simulate on a {memory['trace']['steps']:,}-step trace: peak "
        f"resident memory < {MEMORY_TARGET_BYTES // 2**20} MB",
        "measured": memory["peak_rss_bytes"] / 2**20,
        "unit": "MB",
        "floor": MEMORY_TARGET_BYTES / 2**20,
        "ratio": memory["peak_rss_bytes"] / MEMORY_TARGET_BYTES,
        "at_most": True,
        "met": memory["peak_rss_bytes"] < MEMORY_TARGET_BYTES,
    }


def describe_memory(memory: dict[str, Any]) -> str:
    """The measurement in one line of the printed table."""
    shape = memory["trace"]
    return (
        f"cache simulate on {shape['steps']:,} steps ({shape['chains']} chains, "
        f"{shape['item_ids']:,} segment ids, {shape['bytes'] / 2**20:,.0f} MB): "
        f"{memory['seconds']:,.1f} s ({memory['steps_per_second'] / 1000:,.0f}k steps/s), "
        f"peak memory {memory['peak_rss_bytes'] / 2**20:,.0f} MB"
    )
