"""The speed of ``packproof cache simulate`` against its input (part of
``python -m packproof.evals.bench.cache``): the command should run at the speed
of reading its trace, the model's arithmetic a small share of the time.

On the benchmark's trace file (prompts of 30-300 segments, each line a few
kilobytes of JSON), three figures per profile, each the best of its repeats
after a full collection, the cyclic collector paused as the command pauses it:

- ``steps_per_second``: ``simulate`` end to end (reading, checking, encoding,
  pricing and writing every output line; not the write to stdout);
- ``json_lines_per_second``: ``orjson.loads`` of every line of the same file
  and nothing else, the JSON reader alone, measured beside each profile's
  ``simulate`` (the machine's load then the same) and at the top its best;
- ``ratio``: the end-to-end seconds over the JSON reader's beside them;
- ``model_share``: the share of the end-to-end seconds that pricing the
  already-encoded prompts takes (the model's own work).

The target: at least :data:`FLOOR` steps/s end to end on one core and within
:data:`MAX_RATIO` x of the JSON reader alone, both, under every profile. When
reading the JSON alone is slower than the floor, the floor cannot be met by any
reader of that trace, and the ratio is the honest figure; both are reported.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

__all__ = ["FLOOR", "MAX_RATIO", "describe_speed", "json_alone", "speed", "speed_targets"]

FLOOR: Final = 200_000  # steps/s end to end
MAX_RATIO: Final = 2.0  # end-to-end seconds over the JSON reader's


def json_alone(path: str) -> int:
    """Read every line of ``path`` with orjson and nothing else; the lines read."""
    lines = 0
    with open(path, "rb") as stream:
        for raw in stream:
            orjson.loads(raw)
            lines += 1
    return lines


def speed(steps: int, lines: int, measured: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The report's ``speed`` block from each profile's ``simulate``, ``json``
    (the JSON reader alone, measured beside it, so under the same load of the
    machine) and whole-trace ``trace`` (pricing) figures; the JSON reader's
    figure is its best."""
    profiles = {}
    for name, figures in measured.items():
        seconds = figures["simulate"]["seconds"]
        profiles[name] = {
            "steps_per_second": steps / seconds,
            "json_lines_per_second": lines / figures["json"]["seconds"],
            "ratio": seconds / figures["json"]["seconds"],
            "model_share": figures["trace"]["seconds"] / seconds,
        }
    json_seconds = min(figures["json"]["seconds"] for figures in measured.values())
    met = all(p["steps_per_second"] >= FLOOR and p["ratio"] <= MAX_RATIO for p in profiles.values())
    return {
        "steps": steps,
        "lines": lines,
        "json_seconds": json_seconds,
        "json_lines_per_second": lines / json_seconds,
        "profiles": profiles,
        "floor_steps_per_second": FLOOR,
        "max_ratio": MAX_RATIO,
        "met": met,
    }


def speed_targets(block: dict[str, Any]) -> list[dict[str, Any]]:
    """The two targets' lines of the report, each judged on the slowest profile:
    the end-to-end rate against :data:`FLOOR`, and the time over reading the
    JSON alone against :data:`MAX_RATIO`."""
    profiles = block["profiles"]
    slow = min(profiles, key=lambda n: profiles[n]["steps_per_second"])
    rate = profiles[slow]["steps_per_second"]
    far = max(profiles, key=lambda n: profiles[n]["ratio"])
    ratio = profiles[far]["ratio"]
    return [
        {
            "target": f"cache simulate end to end, 30-300 segments per prompt (slowest: {slow}, "
            f"the model {profiles[slow]['model_share']:.0%} of the time)",
            "measured": rate,
            "unit": "steps/s",
            "floor": FLOOR,
            "ratio": rate / FLOOR,
            "at_most": False,
            "met": rate >= FLOOR,
        },
        {
            "target": f"cache simulate over reading the JSON alone "
            f"({block['json_lines_per_second']:,.0f} lines/s; worst: {far})",
            "measured": ratio,
            "unit": "x",
            "floor": MAX_RATIO,
            "ratio": ratio / MAX_RATIO,
            "at_most": True,
            "met": ratio <= MAX_RATIO,
        },
    ]


def describe_speed(block: dict[str, Any]) -> str:
    """The measurement in one line of the printed table."""
    ratios = ", ".join(f"{n} {p['ratio']:.2f}x" for n, p in block["profiles"].items())
    return (
        f"  JSON alone {block['json_lines_per_second'] / 1000:,.0f}k lines/s; "
        f"simulate end to end over it: {ratios}"
    )
