"""``ctxpack gate``: compare an eval run's summary with the committed baseline.

Rules (thresholds in ``evals/gates.yaml``, schema ``evals/schemas/gates.v1.json``):

- Groups are matched by (strategy label, budget). Labels, not full specs, so a
  changed default parameter does not orphan the baseline.
- Metric drop: for each group in both summaries and each gated metric, the drop
  is how far the mean moved the wrong way: baseline - current where higher is
  better (recall, stability, cache hit rate), current - baseline where lower is
  better (:data:`LOWER_IS_BETTER`: ``relative_cost``, ``input_cost``). It
  regresses when it exceeds the allowed value (plus 1e-9 for rounding): a fall
  in hit rate or a rise in cost beyond it regresses, the opposite never does.
  A metric the baseline has but the current run lacks regresses ("MISSING");
  one only the current run has is "new". A metric neither has is not checked.
- Replay metrics (:data:`REPLAY_METRICS`) are read from ``summary["replay"]
  ["groups"]``, matched by (label, budget, cache profile, static prefix tokens)
  and shown as strategy ``label@profile/static_prefix_tokens``; replay groups are
  compared (missing and new ones as below) only when a replay metric is gated.
- A group in the baseline but not in the current run regresses ("MISSING"); a
  group only in the current run is listed as "new" (not a regression), and its
  hard invariants and expectations are still checked.
- Hard invariants (``hard_invariants: 0``): every count in every current group
  must be exactly 0, whatever the baseline says.
- Expectations (``expectations: all``): in every current group that has
  expectations, ``passed == total``; and the current ``expectation_failures``
  list must be empty.

Bad input (a missing or unreadable file, invalid JSON, a summary of another
schema or violating ``eval-summary.v1.json``, a bad gates file) raises
:class:`~packer.errors.InputError`: one line naming the file and JSON pointer
(and, for the gates YAML, the line); the CLI exits 2. Regressions exit 1.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from jsonschema.exceptions import best_match

from ctxpack.evals.report.model import SUMMARY_SCHEMA_ID
from ctxpack.evals.scenarios.yamlsafe import load_yaml
from ctxpack.evals.schemafiles import validator
from ctxpack.packer.errors import InputError
from ctxpack.packer.jsonio import loads

__all__ = [
    "GATES_SCHEMA_ID",
    "LOWER_IS_BETTER",
    "REPLAY_METRICS",
    "SUMMARY_SCHEMA_ID",
    "Check",
    "GateResult",
    "Gates",
    "compare",
    "load_gates",
    "load_summary",
    "run_gate",
]

GATES_SCHEMA_ID: Final = "ctxpack.gates.v1"
TOLERANCE: Final = 1e-9
# Gated metrics of the replay groups (summary["replay"]["groups"]), and the
# metrics (of either kind) that regress by rising rather than by falling.
REPLAY_METRICS: Final = frozenset({"cache_hit_rate", "relative_cost", "input_cost", "probe_recall"})
LOWER_IS_BETTER: Final = frozenset({"relative_cost", "input_cost"})
OK, REGRESSED, MISSING, NEW = "ok", "REGRESSED", "MISSING", "new"
_COLUMNS: Final = ("strategy", "budget", "metric", "baseline", "current", "drop", "allowed")
_MAX_MESSAGE: Final = 160
_MAX_FAILURES_SHOWN: Final = 20


def _violation(data: Any, schema_file: str) -> tuple[str, str] | None:
    """The most relevant schema violation as (JSON pointer, one-line message)."""
    err = best_match(validator(schema_file).iter_errors(data))
    if err is None:
        return None
    where = "".join(f"/{p}" for p in err.absolute_path) or "/"
    message = " ".join(str(err.message).split())
    if len(message) > _MAX_MESSAGE:
        message = message[: _MAX_MESSAGE - 3] + "..."
    return where, message


# ---------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Gates:
    """The thresholds: allowed drop per metric (in file order; for a metric in
    :data:`LOWER_IS_BETTER`, the allowed rise). Hard invariants must be 0 and
    every expectation must pass; the schema admits nothing else."""

    max_drop: Mapping[str, float]
    source: str

    def describe(self) -> str:
        said: dict[str, list[str]] = {"drop": [], "rise": []}
        for m, v in self.max_drop.items():
            said["rise" if m in LOWER_IS_BETTER else "drop"].append(f"{m} {v:g}")
        parts = [f"allowed {way} " + ", ".join(these) for way, these in said.items() if these]
        return "; ".join([*parts, "hard invariants 0", "expectations all"])

    def metrics(self, replay: bool) -> dict[str, float]:
        """The gated metrics of the replay groups, or of the main groups."""
        return {m: v for m, v in self.max_drop.items() if (m in REPLAY_METRICS) == replay}


def load_gates(path: Path) -> Gates:
    """A validated gates file; errors name the file, line and JSON pointer."""
    data, lines = load_yaml(path)
    found = _violation(data, "gates.v1.json")
    if found is not None:
        where, message = found
        raise lines.error("" if where == "/" else where, f"schema violation: {message}")
    for metric, drop in data["metrics"].items():  # YAML's .nan and .inf are numbers too
        if not math.isfinite(drop):
            raise lines.error(
                f"/metrics/{metric}", "not a finite number", expected="a drop >= 0", found=drop
            )
    return Gates(max_drop={m: float(v) for m, v in data["metrics"].items()}, source=lines.source)


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
        where, message = found
        raise InputError(
            where, f"the {role} summary violates eval-summary.v1.json: {message}", source=source
        )
    seen: set[tuple[str, str]] = set()
    replay = data.get("replay", {}).get("groups", [])
    for where, key in [
        *((f"/groups/{i}", _group_key(g)) for i, g in enumerate(data["groups"])),
        *((f"/replay/groups/{i}", _replay_key(g)) for i, g in enumerate(replay)),
    ]:
        if key in seen:
            raise InputError(
                where, f"duplicate group for strategy {key[0]} at budget {key[1]}", source=source
            )
        seen.add(key)
    return data


# ---------------------------------------------------------------- comparison


@dataclass(frozen=True)
class Check:
    """One row of the gate's table. ``baseline``/``current`` are means, counts
    or short texts; ``drop`` is, for metric rows, how far the metric moved the
    wrong way (baseline - current, or current - baseline for a cost)."""

    strategy: str
    budget: str
    metric: str
    baseline: float | str | None
    current: float | str | None
    drop: float | None
    allowed: float | str | None
    verdict: str

    @property
    def regressed(self) -> bool:
        return self.verdict in (REGRESSED, MISSING)

    def cells(self) -> tuple[str, ...]:
        return (
            self.strategy,
            self.budget,
            self.metric,
            _show(self.baseline),
            _show(self.current),
            "–" if self.drop is None else f"{round(self.drop, 4) + 0.0:+.4f}",
            "–" if self.allowed is None else _show_allowed(self.allowed),
            self.verdict,
        )


def _show(value: float | str | None) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _show_allowed(value: float | str) -> str:
    return f"{value:g}" if isinstance(value, float) else value


@dataclass(frozen=True)
class GateResult:
    """Every check made, and a few notes for the reader (not verdicts)."""

    checks: tuple[Check, ...]
    header: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()

    @property
    def regressions(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.regressed)

    @property
    def passed(self) -> bool:
        return not self.regressions

    def render(self) -> str:
        """The readable report: header, the table of every check, the
        regressions again (if any) with the failing expectations, a verdict line."""
        lines = [*self.header, *(f"note: {n}" for n in self.notes), ""]
        lines += table(self.checks)
        bad = self.regressions
        if bad:
            lines += ["", f"regressions ({len(bad)}):", *table(bad)]
        if self.failures:
            lines += ["", "failing expectations:", *(f"  {f}" for f in self.failures)]
        lines.append("")
        if bad:
            lines.append(f"gate: FAILED: {len(bad)} of {len(self.checks)} checks regressed")
        else:
            lines.append(f"gate: passed: {len(self.checks)} checks, no regressions")
        return "\n".join(lines) + "\n"


def table(checks: Sequence[Check]) -> list[str]:
    """Checks as an aligned plain-text table with a header row."""
    rows = [(*_COLUMNS, "verdict"), *(c.cells() for c in checks)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for n, row in enumerate(rows):
        out.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def _group_key(group: Mapping[str, Any]) -> tuple[str, str]:
    return str(group["label"]), str(group["budget"])


def _replay_key(group: Mapping[str, Any]) -> tuple[str, str]:
    """A replay group's (strategy cell, budget): ``label@profile/static``."""
    where = f"{group['profile']}/{group['static_prefix_tokens']}"
    return f"{group['label']}@{where}", str(group["budget"])


_GROUP_LEVEL: Final = ("prefix_stability", "prefix_stability_tokens")


def _mean(group: Mapping[str, Any], metric: str) -> float | None:
    if metric in _GROUP_LEVEL or metric in REPLAY_METRICS:  # beside the metrics
        stat = group.get(metric)
    else:
        stat = group["metrics"].get(metric)
    return None if stat is None else float(stat["mean"])


def _metric_checks(
    label: str,
    budget: str,
    base: Mapping[str, Any],
    cur: Mapping[str, Any],
    gated: Mapping[str, float],
) -> Iterator[Check]:
    for metric, allowed in gated.items():
        b, c = _mean(base, metric), _mean(cur, metric)
        if b is None and c is None:
            continue
        if b is None or c is None:
            verdict = MISSING if c is None else NEW
            yield Check(label, budget, metric, b, c, None, allowed, verdict)
            continue
        drop = c - b if metric in LOWER_IS_BETTER else b - c
        verdict = REGRESSED if drop > allowed + TOLERANCE else OK
        yield Check(label, budget, metric, b, c, drop, allowed, verdict)


def _absolute_checks(
    label: str, budget: str, base: Mapping[str, Any] | None, cur: Mapping[str, Any]
) -> Iterator[Check]:
    """Hard invariants and expectations of one current group."""
    counts = cur["hard_invariants"]
    total = sum(counts.values())
    shown: str = str(total)
    if total:
        shown += " (" + ", ".join(f"{k}={v}" for k, v in sorted(counts.items()) if v) + ")"
    before = None if base is None else str(sum(base["hard_invariants"].values()))
    verdict = REGRESSED if total else OK
    yield Check(label, budget, "hard_invariants", before, shown, None, "0", verdict)
    exp = cur["expectations"]
    base_exp = None if base is None else base["expectations"]
    if exp["total"] or (base_exp is not None and base_exp["total"]):
        before = None if base_exp is None else f"{base_exp['passed']}/{base_exp['total']}"
        verdict = OK if exp["passed"] == exp["total"] else REGRESSED
        now = f"{exp['passed']}/{exp['total']}"
        yield Check(label, budget, "expectations", before, now, None, "all", verdict)


def _group_checks(
    base_groups: Mapping[tuple[str, str], Mapping[str, Any]],
    cur_groups: Mapping[tuple[str, str], Mapping[str, Any]],
    gated: Mapping[str, float],
    absolute: bool,
) -> Iterator[Check]:
    """Matched groups in the baseline's order, then the groups new in the run;
    with ``absolute``, each current group's hard invariants and expectations."""
    for key, base in base_groups.items():
        cur = cur_groups.get(key)
        if cur is None:
            yield Check(*key, "*", "present", None, None, None, MISSING)
            continue
        yield from _metric_checks(*key, base, cur, gated)
        if absolute:
            yield from _absolute_checks(*key, base, cur)
    for key, cur in cur_groups.items():
        if key not in base_groups:
            yield Check(*key, "*", None, "present", None, None, NEW)
            if absolute:
                yield from _absolute_checks(*key, None, cur)


def compare(baseline: Mapping[str, Any], current: Mapping[str, Any], gates: Gates) -> GateResult:
    """Every check of ``current`` against ``baseline`` under ``gates``, in the
    baseline's group order, then the groups new in the current run; then the
    replay groups, when a replay metric is gated."""
    checks = list(
        _group_checks(
            {_group_key(g): g for g in baseline["groups"]},
            {_group_key(g): g for g in current["groups"]},
            gates.metrics(replay=False),
            absolute=True,
        )
    )
    if gates.metrics(replay=True):
        checks += _group_checks(
            {_replay_key(g): g for g in baseline.get("replay", {}).get("groups", [])},
            {_replay_key(g): g for g in current.get("replay", {}).get("groups", [])},
            gates.metrics(replay=True),
            absolute=False,
        )
    fails = current["expectation_failures"]
    before, now = str(len(baseline["expectation_failures"])), str(len(fails))
    verdict = REGRESSED if fails else OK
    checks.append(Check("*", "*", "expectation_failures", before, now, None, "0", verdict))
    failures = [f"{f['key']}: {'; '.join(map(str, f['failures']))}" for f in fails]
    if len(failures) > _MAX_FAILURES_SHOWN:
        extra = len(failures) - _MAX_FAILURES_SHOWN
        failures = [*failures[:_MAX_FAILURES_SHOWN], f"... and {extra} more (see summary.json)"]
    notes = []
    base_suites = {s["file"]: s["sha256"] for s in baseline["manifest"]["suites"]}
    cur_suites = {s["file"]: s["sha256"] for s in current["manifest"]["suites"]}
    if base_suites != cur_suites:
        changed = sorted(
            f
            for f in base_suites.keys() | cur_suites.keys()
            if base_suites.get(f) != cur_suites.get(f)
        )
        notes.append(
            "scenario suites differ from the baseline's (" + ", ".join(changed) + "): "
            "a drop may come from changed scenarios; run `make baseline` if intended"
        )
    return GateResult(tuple(checks), notes=tuple(notes), failures=tuple(failures))


def run_gate(baseline: Path, current: Path, gates: Path) -> GateResult:
    """Load and check all three files, then compare (``ctxpack gate``)."""
    rules = load_gates(gates)
    base = load_summary(baseline, "baseline")
    cur = load_summary(current, "current")
    if base["manifest"]["name"] != cur["manifest"]["name"]:  # e.g. latest is another config
        raise InputError(
            "/manifest/name",
            "the summaries come from different eval configs",
            expected=f"a run of {base['manifest']['name']!r} (the baseline's)",
            found=cur["manifest"]["name"],
            source=str(current),
        )
    result = compare(base, cur, rules)
    header = (
        f"baseline: {baseline} ({base['manifest']['run_id']})",
        f"current:  {current} ({cur['manifest']['run_id']})",
        f"gates:    {rules.source}: {rules.describe()}",
    )
    return GateResult(result.checks, header, result.notes, result.failures)
