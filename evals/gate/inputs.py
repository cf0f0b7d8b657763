"""The gate's inputs, each checked before anything is compared: the gates file
(``gates.v1.json`` plus the metric names of :data:`~.metrics.GATEABLE`), the
two summaries (``eval-summary.v1.json``, no duplicate group) and, by default,
where the current run is. Every refusal is one :class:`InputError` line naming
the file, the line or JSON pointer, what was expected and what was found.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from packproof.evals.gate.known import KnownFailure, known_failures
from packproof.evals.gate.metrics import GATEABLE
from packproof.evals.report.model import SUMMARY_SCHEMA_ID
from packproof.evals.run.folder import LATEST, safe_component
from packproof.evals.scenarios.yamlsafe import load_yaml
from packproof.evals.schemafiles import best_error, validator, violation
from packproof.packer.errors import InputError, pointer
from packproof.packer.jsonio import loads

__all__ = [
    "GATES_SCHEMA_ID",
    "Gates",
    "default_current",
    "group_key",
    "load_gates",
    "load_summary",
    "replay_key",
]

GATES_SCHEMA_ID: Final = "packproof.gates.v1"


def _violation(
    data: Any, schema_file: str, *, yaml: bool = False
) -> tuple[str, str, dict[str, Any]] | None:
    """The most relevant schema violation as (JSON pointer, one-line message,
    expected and found when they are said apart)."""
    err = best_error(validator(schema_file).iter_errors(data))
    if err is None:
        return None
    where = "".join(f"/{p}" for p in err.absolute_path) or "/"
    message, detail = violation(err, yaml=yaml)
    return where, message, detail


# The statistics of a metric a summary holds (its mean and interval): where each
# block of them is, as (pointer to a list, key of the block in each entry or ""
# for the entry itself, key of the cluster block or "").
_STAT_BLOCKS: Final = (
    ("/groups", "metrics"),
    ("/groups", ""),  # prefix_stability and prefix_stability_tokens
    ("/groups", "cluster"),
    ("/breakdown", ""),
    ("/breakdown", "cluster"),
    ("/replay/groups", ""),
)
_SLACK: Final = 1e-9  # rounding: a summary's figures have 10 significant digits


def _metric_ranges(data: Mapping[str, Any], role: str, source: str) -> None:
    """Every statistic of a metric the gate knows lies in its metric's range:
    every metric is >= 0 and a share (a recall, a rate) <= 1
    (:attr:`~.metrics.Gateable.share`). A hand-edited mean of -1.0 would otherwise
    be a baseline no run can fall below, so the gate would pass whatever ran."""
    for at, block in _STAT_BLOCKS:
        entries: Any = data
        for part in at.strip("/").split("/"):
            entries = entries.get(part, []) if isinstance(entries, Mapping) else []
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            stats = entry.get(block, {}) if block else entry
            for name, stat in stats.items() if isinstance(stats, Mapping) else ():
                metric = GATEABLE.get(name)
                if metric is None or not isinstance(stat, Mapping):
                    continue
                high = 1.0 if metric.share else math.inf
                for field in ("mean", "low", "high"):
                    value = stat.get(field)
                    if isinstance(value, int | float) and not (-_SLACK <= value <= high + _SLACK):
                        where = f"{at}/{i}" + pointer(*(p for p in (block, name, field) if p))
                        raise InputError(
                            where,
                            f"the {role} summary's {name} is out of its range",
                            expected="a number in [0, 1]" if metric.share else "a number >= 0",
                            found=value,
                            source=source,
                        )


@dataclass(frozen=True)
class Gates:
    """The thresholds: how far each gated metric may move the wrong way (in file
    order): a drop where higher is better, a rise where lower is, either way
    where neither is (:data:`~.metrics.GATEABLE`). ``alpha``: when set, a move
    beyond its allowance fails only if a paired test over scenarios gives
    p < alpha. The rules: hard invariants 0 (or ``no_new``: no failing cell the
    baseline did not have), every expectation passing (or ``no_new``); the
    known failures excuse the failing cells they match (known.py)."""

    max_drop: Mapping[str, float]
    source: str
    alpha: float | None = None
    hard_invariants: Literal[0, "no_new"] = 0
    expectations: Literal["all", "no_new"] = "all"
    known_failures: tuple[KnownFailure, ...] = ()

    def __post_init__(self) -> None:
        unknown = sorted(set(self.max_drop) - GATEABLE.keys())
        if unknown:
            raise ValueError(f"not a gateable metric: {', '.join(unknown)}")

    def describe(self) -> str:
        """The thresholds in one line, e.g. ``allowed drop mrr 0.03; hard invariants 0; ...``."""
        said: dict[str, list[str]] = {"drop": [], "rise": [], "change": []}
        way = {1: "drop", -1: "rise", 0: "change"}
        for m, v in self.max_drop.items():
            said[way[GATEABLE[m].better]].append(f"{m} {v:g}")
        parts = [f"allowed {w} " + ", ".join(these) for w, these in said.items() if these]
        parts += [f"hard invariants {self.hard_invariants}", f"expectations {self.expectations}"]
        if self.known_failures:
            n = len(self.known_failures)
            parts.append(f"{n} known failure{'s' if n != 1 else ''}")
        if self.alpha is not None:
            parts.append(f"a regression must be significant (p < {self.alpha:g})")
        return "; ".join(parts)

    def metrics(self, replay: bool) -> dict[str, float]:
        """The gated metrics of the replay groups, or of the main groups."""
        return {
            m: v for m, v in self.max_drop.items() if (GATEABLE[m].source == "replay") == replay
        }


def _unknown_metric(name: str) -> str:
    close = difflib.get_close_matches(name, list(GATEABLE), n=1)
    return "unknown metric" + (f", did you mean {close[0]!r}?" if close else "")


def load_gates(path: Path) -> Gates:
    """A validated gates file; errors name the file, line and JSON pointer. An
    unknown metric name is refused with the list of the names the gate knows."""
    data, lines = load_yaml(path)
    metrics = data.get("metrics") if isinstance(data, dict) else None
    for name in metrics if isinstance(metrics, dict) else ():
        if name not in GATEABLE:
            raise lines.error(
                pointer("metrics", name),
                _unknown_metric(name),
                expected="one of " + ", ".join(GATEABLE),
                found=name,
            )
    known = data.get("known_failures") if isinstance(data, dict) else None
    for i, entry in enumerate(known if isinstance(known, list) else ()):
        reason = entry.get("reason") if isinstance(entry, dict) else None
        if isinstance(reason, str) and not reason.strip():  # said better than "does not match"
            raise lines.error(
                pointer("known_failures", i, "reason"),
                "schema violation: a known failure needs its reason",
                expected="why the failure is accepted",
                found=reason,
            )
    found = _violation(data, "gates.v1.json", yaml=True)
    if found is not None:
        where, message, detail = found
        raise lines.error("" if where == "/" else where, f"schema violation: {message}", **detail)
    for metric, drop in data["metrics"].items():  # YAML's .nan and .inf are numbers too
        if not math.isfinite(drop):
            raise lines.error(
                pointer("metrics", metric),
                "not a finite number",
                expected="an allowed move >= 0",
                found=drop,
            )
    alpha = data.get("significance", {}).get("alpha")
    if alpha is not None and not math.isfinite(alpha):
        raise lines.error(
            "/significance/alpha", "not a finite number", expected="0 < alpha <= 0.5", found=alpha
        )
    return Gates(
        max_drop={m: float(v) for m, v in data["metrics"].items()},
        source=lines.source,
        alpha=None if alpha is None else float(alpha),
        hard_invariants="no_new" if data["hard_invariants"] == "no_new" else 0,
        expectations=data["expectations"],
        known_failures=known_failures(data.get("known_failures", []), lines),
    )


def group_key(group: Mapping[str, Any]) -> tuple[str, str]:
    """A main group's (strategy label, budget)."""
    return str(group["label"]), str(group["budget"])


def replay_key(group: Mapping[str, Any]) -> tuple[str, str]:
    """A replay group's (strategy cell, budget): ``label@profile/static``."""
    where = f"{group['profile']}/{group['static_prefix_tokens']}"
    return f"{group['label']}@{where}", str(group["budget"])


def load_summary(path: Path, role: str) -> dict[str, Any]:
    """A summary.json checked against ``eval-summary.v1.json``; ``role``
    ("baseline" or "current") names it in errors."""
    source = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(
            "", f"cannot read the {role} summary: {exc.strerror}", source=source
        ) from None
    data = loads(raw, source=source)
    if not isinstance(data, dict):
        raise InputError(
            "/",
            f"the {role} summary is not a JSON object",
            expected="an object",
            found=data,
            source=source,
        )
    if "schema" not in data:
        raise InputError(
            "/schema", f"{role} has no schema field, expected {SUMMARY_SCHEMA_ID}", source=source
        )
    if data["schema"] != SUMMARY_SCHEMA_ID:
        shown = data["schema"] if isinstance(data["schema"], str) else json.dumps(data["schema"])
        raise InputError(
            "/schema", f"{role} has schema {shown}, expected {SUMMARY_SCHEMA_ID}", source=source
        )
    found = _violation(data, "eval-summary.v1.json")
    if found is not None:
        where, message, detail = found
        raise InputError(
            where,
            f"the {role} summary violates eval-summary.v1.json: {message}",
            source=source,
            **detail,
        )
    _metric_ranges(data, role, source)
    seen: set[tuple[str, str]] = set()
    replay = data.get("replay", {}).get("groups", [])
    for where, key in [
        *((f"/groups/{i}", group_key(g)) for i, g in enumerate(data["groups"])),
        *((f"/replay/groups/{i}", replay_key(g)) for i, g in enumerate(replay)),
    ]:
        if key in seen:
            raise InputError(
                where, f"duplicate group for strategy {key[0]} at budget {key[1]}", source=source
            )
        seen.add(key)
    return data


def default_current(baseline: Mapping[str, Any], reports: Path = Path("reports")) -> Path:
    """Where the current run is when ``--current`` is not given: the latest run
    of the baseline's config, ``reports/<name>/latest/summary.json`` (``name``
    made a safe path component, as ``packproof eval`` names its folders), else
    ``reports/latest/summary.json`` (the layout before per-config folders)."""
    named = reports / safe_component(str(baseline["manifest"]["name"])) / LATEST / "summary.json"
    if named.exists():
        return named
    legacy = reports / LATEST / "summary.json"
    if not legacy.exists():
        raise InputError(
            "",
            f"no current run: neither {named} nor {legacy} exists; "
            "run `packproof eval` first, or pass --current",
            source="current",
        )
    return legacy
