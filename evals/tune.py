"""``ctxpack tune``: search a strategy's parameters, scored only on held-out conversations.

Every candidate parameter set (a grid, or a seeded random draw) is evaluated on
the config's grid as one more strategy spec, so each turn is parsed and
tokenised once for all of them. Then conversation-level cross-validation: the
conversations (scenarios) are dealt into folds; for each fold the candidate with
the best mean metric on the other folds is chosen and scored on this fold's
cells only. A weight set is therefore never scored on the conversations it was
chosen on. The held-out scores of all folds, cell by cell, give the tuned
policy's estimate (mean, bootstrap interval) and a paired Wilcoxon test against
the strategy's default parameters on the same cells. The parameters reported as
chosen are the best on all conversations; they "win" only if the held-out
estimate beats the defaults (p < 0.05).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np
from jsonschema.exceptions import best_match

from ctxpack.evals.report.stats import mean_ci, paired
from ctxpack.evals.run.config import load_config
from ctxpack.evals.run.folder import safe_component
from ctxpack.evals.run.runner import run_cells
from ctxpack.evals.scenarios.yamlsafe import load_yaml
from ctxpack.evals.schemafiles import validator
from ctxpack.packer.errors import InputError, require
from ctxpack.packer.files import write_atomic
from ctxpack.packer.jsonio import dumps, significant
from ctxpack.packer.strategies import build_strategy

__all__ = ["tune"]

SIGNIFICANCE: Final = 0.05


def _load_space(path: Path, strategy: str) -> dict[str, Any]:
    data, lines = load_yaml(path)
    err = best_match(validator("space.v1.json").iter_errors(data))
    if err is not None:
        where = "".join(f"/{p}" for p in err.absolute_path)
        raise lines.error(where, f"schema violation: {' '.join(str(err.message).split())[:160]}")
    if data["strategy"] != strategy:
        raise lines.error(
            "/strategy",
            "the space is for another strategy",
            expected=strategy,
            found=data["strategy"],
        )
    for key, values in data["params"].items():
        for i, value in enumerate(values):
            try:
                build_strategy(strategy, {key: value}, "")
            except InputError as exc:
                raise lines.error(
                    f"/params/{key}/{i}", exc.message, expected=exc.expected, found=exc.found
                ) from None
    space: dict[str, Any] = data
    return space


MAX_CANDIDATES: Final = 10_000  # parameter sets a space may expand to


def _candidates(space: Mapping[str, Any], source: str = "") -> list[dict[str, Any]]:
    names = sorted(space["params"])
    size = math.prod(len(space["params"][n]) for n in names)
    if size > MAX_CANDIDATES:  # checked before the grid is built: 40^8 sets is 6.5e12
        raise InputError(
            "/params",
            "the search space is too large",
            expected=f"at most {MAX_CANDIDATES} parameter sets",
            found=size,
            source=source,
        )
    grid = [
        dict(zip(names, combo, strict=True))
        for combo in itertools.product(*(space["params"][n] for n in names))
    ]
    if space.get("search", "grid") == "grid":
        return grid
    rng = random.Random(space.get("seed", 0))
    return rng.sample(grid, min(space.get("trials", 20), len(grid)))


def _folds(groups: Sequence[str], k: int, seed: int) -> list[list[str]]:
    order = sorted(groups)
    random.Random(seed).shuffle(order)
    k = max(1, min(k, len(order)))
    return [order[i::k] for i in range(k)]


def tune(
    config_path: Path,
    strategy: str,
    space_path: Path,
    *,
    out_root: Path,
    jobs: int,
    executor: str = "process",
) -> tuple[Path, dict[str, Any]]:
    """Run the search; write tune.json and tune.md; return the directory and result."""
    require("scipy", "eval", "ctxpack tune")  # its statistics; checked before the search
    config = load_config(config_path)
    space = _load_space(space_path, strategy)
    metric = space.get("metric", "evidence_recall")
    default = build_strategy(strategy, {}).spec_string()
    candidates = _candidates(space, str(space_path))
    specs = [build_strategy(strategy, c).spec_string() for c in candidates]
    grid = dataclasses.replace(config, specs=tuple(dict.fromkeys([default, *specs])))
    with tempfile.TemporaryDirectory(prefix="ctxpack-tune-") as tmp:
        records = run_cells(grid, Path(tmp), jobs=jobs, executor=executor)

    # values[spec][cell] with cell = (scenario, turn, budget); groups = conversations
    values: dict[str, dict[tuple[str, int, str], float]] = {}
    for r in records:
        v = r["metrics"].get(metric)
        if v is not None:
            values.setdefault(r["spec"], {})[(r["scenario"], r["turn"], str(r["budget"]))] = v
    cells = sorted(values.get(default, {}))
    groups = sorted({c[0] for c in cells})
    if len(groups) < 2:
        raise InputError(
            "--config",
            "tuning needs at least two conversations (scenarios) to hold one out",
            found=len(groups),
        )

    def mean(spec: str, keep: set[str]) -> float:
        got = [v for c, v in values.get(spec, {}).items() if c[0] in keep]
        return float(np.mean(got)) if got else float("-inf")

    folds = []
    held_tuned: list[float] = []
    held_default: list[float] = []
    for fold in _folds(groups, space.get("folds", 5), space.get("seed", 0)):
        train = set(groups) - set(fold)
        best = max(specs, key=lambda s: (mean(s, train), -specs.index(s)))
        test = [c for c in cells if c[0] in fold]
        held_tuned += [values[best][c] for c in test]
        held_default += [values[default][c] for c in test]
        folds.append(
            {
                "held_out": sorted(fold),
                "chosen": candidates[specs.index(best)],
                "train_score": mean(best, train),
                "held_out_score": mean(best, set(fold)),
                "default_held_out_score": mean(default, set(fold)),
            }
        )
    a, b = np.array(held_tuned), np.array(held_default)
    versus = paired(a, b, config.resamples, config.confidence, config.seed)
    estimate = mean_ci(a, config.resamples, config.confidence, config.seed)
    everyone = set(groups)
    final = max(specs, key=lambda s: (mean(s, everyone), -specs.index(s)))
    wins = versus is not None and versus["mean"] > 0 and versus["p_value"] < SIGNIFICANCE
    result: dict[str, Any] = significant(
        {
            "schema": "ctxpack.tune.v1",
            "config": config.name,
            "strategy": strategy,
            "metric": metric,
            "search": space.get("search", "grid"),
            "candidates": len(specs),
            "conversations": len(groups),
            "cells": len(cells),
            "budgets": list(config.budgets),
            "default": {
                "spec": default,
                "label": build_strategy(strategy, {}).label(),
                "held_out": mean_ci(b, config.resamples, config.confidence, config.seed),
            },
            "tuned": {"held_out": estimate, "versus_default": versus},
            "chosen": {
                "params": candidates[specs.index(final)],
                "spec": final,
                "label": build_strategy(strategy, candidates[specs.index(final)]).label(),
                "score_all_conversations": mean(final, everyone),
            },
            "wins_on_held_out": wins,
            "folds": folds,
        }
    )
    out = out_root / safe_component(f"{config.name}-{strategy}")
    write_atomic(out / "tune.json", dumps(result, indent=2, prepared=True) + "\n")
    write_atomic(out / "tune.md", _markdown(result))
    return out, result


def _markdown(r: Mapping[str, Any]) -> str:
    def stat(s: Mapping[str, Any] | None) -> str:
        return "–" if not s else f"{s['mean']:.3f} [{s['low']:.3f}, {s['high']:.3f}]"

    vs = r["tuned"]["versus_default"] or {}
    lines = [
        f"# ctxpack tune: {r['strategy']} on {r['config']}",
        "",
        f"{r['candidates']} parameter sets ({r['search']}), {r['metric']} over {r['cells']} "
        f"cells of {r['conversations']} conversations, budgets {r['budgets']}; "
        f"{len(r['folds'])}-fold cross-validation by conversation.",
        "",
        "| | held-out " + r["metric"] + " |",
        "|---|---|",
        f"| defaults `{r['default']['label']}` | {stat(r['default']['held_out'])} |",
        f"| tuned (chosen per fold) | {stat(r['tuned']['held_out'])} |",
        f"| difference (Wilcoxon p) | {stat(vs)} (p={vs.get('p_value', float('nan')):.3g}) |",
        "",
        f"Chosen on all conversations: `{r['chosen']['label']}` "
        f"(score {r['chosen']['score_all_conversations']:.3f}). "
        + (
            "It **wins** on held-out conversations."
            if r["wins_on_held_out"]
            else "It does **not** win on held-out conversations: keep the defaults."
        ),
        "",
        "| held-out conversations | chosen | train | held-out | defaults held-out |",
        "|---|---|---|---|---|",
    ]
    for f in r["folds"]:
        params = ", ".join(f"{k}={v}" for k, v in f["chosen"].items())
        lines.append(
            f"| {', '.join(f['held_out'])} | {params} | {f['train_score']:.3f} "
            f"| {f['held_out_score']:.3f} | {f['default_held_out_score']:.3f} |"
        )
    return "\n".join(lines) + "\n"
