"""``packproof gate``: compare an eval run's summary with the committed baseline.

Rules (thresholds in a gates file, ``evals/data/gates.yaml`` shipped; schema
``evals/schemas/gates.v1.json``; docs/gate.md):

- Groups are matched by (strategy label, budget). Labels, not full specs, so a
  changed default parameter does not orphan the baseline; output names
  strategies by label too.
- Metrics (any of :data:`~.metrics.GATEABLE`): for each group in both summaries,
  a metric regresses when its mean moved the wrong way by more than its
  allowance (plus 1e-9 for rounding): a drop where higher is better, a rise
  where lower is (costs, regret, breaks), either way where neither is. A metric
  the baseline has and the current run lacks is "MISSING"; one only the current
  run has is "new". Replay metrics are read from ``summary["replay"]["groups"]``,
  matched by (label, budget, cache profile, static prefix tokens), shown as
  strategy ``label@profile/static``.
- Optionally (``--significance ALPHA`` or ``significance: {alpha: ...}``), a
  regression fails only when a paired, cluster-aware test over scenarios gives
  p < alpha (significance.py); otherwise it is "not significant" and passes.
- A group in the baseline but not in the current run is "MISSING"; a group only
  in the current run is "new" (noted), and its rules are still checked.
- Rules on failing cells (a cell: suite/scenario, turn, label, budget), each
  absolute or ratcheting. ``hard_invariants`` (cell failures of an external
  packer among them): ``0``, no such cell in any current group; ``no_new``, no
  cell failing that did not fail the same class in the baseline (ratchet.py).
  ``expectations``: ``all``, every expectation passes and the run lists no
  expectation failure; ``no_new``, likewise relative to the baseline. A cell
  failing in the baseline and not now is reported as fixed. ``known_failures``
  (known.py) excuse the cells they match under either mode; an entry matching
  nothing is reported as stale.
- When the baseline and the current run are one run (one file, one run id), a
  note says so first.

Bad input (a missing or unreadable file, invalid JSON, a summary of another
schema or violating ``eval-summary.v1.json``, a bad gates file or known
failure, a summary with failing cells it does not list where they are judged
one by one, or listed ones its group counts disagree with, a missing cells file
under ``--significance``) raises :class:`~packer.errors.InputError`: one line
naming the file and JSON pointer (and, for the gates YAML, the line); the CLI
exits 2. A failed rule, a new failing cell, a regression or a missing metric
exits 1.
"""

from __future__ import annotations

from packproof.evals.gate.checks import (
    FAILED,
    MISSING,
    NEW,
    NEW_FAILED,
    NOT_SIGNIFICANT,
    OK,
    REGRESSED,
    Check,
    GateResult,
    compare,
)
from packproof.evals.gate.inputs import (
    GATES_SCHEMA_ID,
    Gates,
    default_current,
    load_gates,
    load_summary,
)
from packproof.evals.gate.known import FailingCell, KnownFailure
from packproof.evals.gate.markdown import append_step_summary, render_markdown
from packproof.evals.gate.metrics import GATEABLE, LOWER_IS_BETTER, REPLAY_METRICS
from packproof.evals.gate.ratchet import CellGroup, Judgement, judge
from packproof.evals.gate.run import run_gate
from packproof.evals.gate.text import render_text

__all__ = [
    "FAILED",
    "GATEABLE",
    "GATES_SCHEMA_ID",
    "LOWER_IS_BETTER",
    "MISSING",
    "NEW",
    "NEW_FAILED",
    "NOT_SIGNIFICANT",
    "OK",
    "REGRESSED",
    "REPLAY_METRICS",
    "CellGroup",
    "Check",
    "FailingCell",
    "GateResult",
    "Gates",
    "Judgement",
    "KnownFailure",
    "append_step_summary",
    "compare",
    "default_current",
    "judge",
    "load_gates",
    "load_summary",
    "render_markdown",
    "render_text",
    "run_gate",
]
