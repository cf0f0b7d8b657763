"""The eval benchmark on LoCoMo: the full development grid with two workers,
import included, and the cost of an extra strategy over its tasks (real
conversation sizes, which the toy default suite is not). Skipped when the data
is not beside the project; it is never committed."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from packproof.evals.bench.common import log_eval as log
from packproof.evals.bench.eval.extra import measure_extra
from packproof.evals.bench.eval.grid import grid_run
from packproof.evals.run.config import EvalConfig, load_config
from packproof.packer.jsonio import dumps

__all__ = ["LOCOMO", "LOCOMO_TASK_REPEATS", "imported_locomo", "measure_locomo"]

_PROJECT: Final = Path(__file__).resolve().parents[3]  # this file is evals/bench/eval/ in it
LOCOMO: Final = _PROJECT.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
LOCOMO_CONFIG: Final = _PROJECT / "evals" / "locomo.yaml"
LOCOMO_WORKERS: Final = 2
LOCOMO_TASK_REPEATS: Final = 3  # passes per extra-strategy figure on LoCoMo (seconds each)


def imported_locomo(
    root: Path, config: Path, suite_name: str, replay: bool = False
) -> tuple[list[Any], float, EvalConfig]:
    """LoCoMo imported into ``root/reports/imports/suite_name`` and ``config``
    copied to ``root/evals/``, as ``make eval-locomo`` lays them out: the
    scenarios, the import's seconds, and the loaded config."""
    from packproof.evals.scenarios.importers.locomo import import_locomo

    (root / "evals").mkdir()
    suite = root / "reports" / "imports" / suite_name
    start = time.perf_counter()
    scenarios, _ = import_locomo(LOCOMO, replay=replay)
    suite.parent.mkdir(parents=True)
    suite.write_text("".join(dumps(sc.to_json()) + "\n" for sc in scenarios), "utf-8")
    imported = time.perf_counter() - start
    shutil.copy(config, root / "evals" / config.name)
    return scenarios, imported, load_config(root / "evals" / config.name)


def measure_locomo(first: str, extras: Sequence[str], task_repeats: int) -> dict[str, Any] | None:
    """The full LoCoMo development grid (evals/locomo.yaml: every question x
    strategy x budget) with two workers, import included, once; and the cost of
    an extra strategy over its tasks. None when the data is not there."""
    if not LOCOMO.exists():
        log(f"LoCoMo is not at {LOCOMO}: no LoCoMo grid figure")
        return None
    with tempfile.TemporaryDirectory(prefix="packproof-locomo-") as tmp:
        root = Path(tmp)
        scenarios, imported, config = imported_locomo(root, LOCOMO_CONFIG, "locomo_dev.jsonl")
        log(f"LoCoMo grid: {len(scenarios)} conversations, {LOCOMO_WORKERS} workers")
        seconds, cells = grid_run(config, "process", LOCOMO_WORKERS, root)
        extra = measure_extra(config, first, extras, task_repeats)
    return {
        "extra_strategy": extra,
        "cells": cells,
        "workers": LOCOMO_WORKERS,
        "import_seconds": imported,
        "run_seconds": seconds,
        "total_seconds": imported + seconds,
        "cells_per_second": cells / seconds if seconds else None,
    }
