"""``packproof tune``: search a strategy's parameters, scored only on held-out conversations.

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

A space may also search the cache-aware options (a ``cache`` block: every
candidate is then ``strategy(...)+cache(...)``, and combinations with
low_water + recall_share > 1, or with recall options that do not go together,
are left out), and, on replays, optimise probe
recall under a cost ceiling or cost under a recall floor instead of one metric
(an ``objective`` block: :mod:`packproof.evals.tune.objective`). The defaults to
beat stay the strategy's plain default spec, so the report shows what the
cache-aware options change.
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

from packproof.evals.report.stats import mean_ci, paired
from packproof.evals.run.config import EvalConfig, load_config
from packproof.evals.run.folder import safe_component
from packproof.evals.run.runner import run_cells
from packproof.evals.run.suites import load_suite
from packproof.evals.scenarios.yamlsafe import LineMap, load_yaml
from packproof.evals.schemafiles import best_error, validator, violation
from packproof.evals.tune.markdown import objective_markdown, searched
from packproof.evals.tune.objective import (
    COST,
    RECALL,
    Candidate,
    Objective,
    folds,
    make_candidate,
    objective_result,
    require_two,
)
from packproof.packer.cacheaware import CacheAware, build_cache_aware, check_option
from packproof.packer.errors import InputError, require
from packproof.packer.files import check_targets, write_files
from packproof.packer.jsonio import dumps, significant
from packproof.packer.strategies import build_strategy

__all__ = ["tune"]

SIGNIFICANCE: Final = 0.05


def _load_space(
    path: Path, strategy: str, config: EvalConfig
) -> tuple[dict[str, Any], Objective | None]:
    data, lines = load_yaml(path)
    err = best_error(validator("space.v1.json").iter_errors(data))
    if err is not None:
        where = "".join(f"/{p}" for p in err.absolute_path)
        message, detail = violation(err, yaml=True)
        raise lines.error(where, f"schema violation: {message}", **detail)
    if data["strategy"] != strategy:
        raise lines.error(
            "/strategy",
            "the space is for another strategy",
            expected=strategy,
            found=data["strategy"],
        )
    for key, values in data.get("params", {}).items():
        for i, value in enumerate(values):
            try:
                build_strategy(strategy, {key: value}, "")
            except InputError as exc:
                raise lines.error(
                    f"/params/{key}/{i}", exc.message, expected=exc.expected, found=exc.found
                ) from None
    options = CacheAware().params()
    for key, values in data.get("cache", {}).items():
        if key not in options:
            raise lines.error(
                f"/cache/{key}",
                "unknown cache-aware option",
                expected="one of " + ", ".join(options),
                found=key,
            )
        for i, value in enumerate(values):
            try:
                check_option(key, value, "")
            except InputError as exc:
                raise lines.error(
                    f"/cache/{key}/{i}", exc.message, expected=exc.expected, found=exc.found
                ) from None
    objective = None
    if "objective" in data:
        if "metric" in data:
            raise lines.error("/metric", "a space with an objective has no metric: drop one")
        objective = _parse_objective(data["objective"], lines, config)
    space: dict[str, Any] = data
    return space, objective


def _parse_objective(data: Mapping[str, Any], lines: LineMap, config: EvalConfig) -> Objective:
    """The space's ``objective`` block, checked against what the config prices."""
    if ("maximize" in data) == ("minimize" in data):
        raise lines.error(
            "/objective",
            "an objective either maximizes probe_recall or minimizes relative_cost",
            expected="maximize: probe_recall with cost_ceiling, or minimize: relative_cost "
            "with recall_floor",
            found="both" if "maximize" in data else "neither",
        )
    need, other = ("cost_ceiling", "recall_floor")
    if "minimize" in data:
        need, other = other, need
    if other in data:
        raise lines.error(f"/objective/{other}", f"{other} does not go with this objective")
    if need not in data:
        raise lines.error("/objective", f"the objective needs {need}")
    profiles = list(config.cache_profiles)
    if not profiles:
        raise lines.error("/objective", f"the config {config.source.name} prices no cache profile")
    profile = data.get("profile", profiles[0])
    if profile not in profiles:
        raise lines.error(
            "/objective/profile",
            f"a cache profile the config {config.source.name} does not price",
            expected="one of " + ", ".join(profiles),
            found=profile,
        )
    static = data.get("static_prefix_tokens", config.static_prefix_tokens[0])
    if static not in config.static_prefix_tokens:
        raise lines.error(
            "/objective/static_prefix_tokens",
            f"a static prefix size the config {config.source.name} does not price",
            expected="one of " + ", ".join(map(str, config.static_prefix_tokens)),
            found=static,
        )
    goal = RECALL if "maximize" in data else COST
    return Objective(goal, float(data[need]), profile, int(static))


def _require_replays(config: EvalConfig) -> None:
    """Refuse, before any work, a config whose suites hold no replay."""
    if not any(sc.replay for path in config.suites for sc in load_suite(path)):
        raise InputError(
            "--config",
            "the space's objective prices replays, and the config's suites hold none",
            expected="a replay suite (timed turns and probes)",
            found=", ".join(p.name for p in config.suites),
            source=str(config.source),
        )


MAX_CANDIDATES: Final = 10_000  # parameter sets a space may expand to


def _candidates(
    space: Mapping[str, Any], strategy: str, source: str = ""
) -> tuple[list[Candidate], int]:
    """The candidates, and how many cache combinations were left out because no
    pack could honour them (low_water + recall_share > 1, or recall options
    that do not go together: a refresh policy with carry_recall true, or
    recall_every / recall_gate without their policy)."""
    params: Mapping[str, list[Any]] = space.get("params", {})
    cache: Mapping[str, list[Any]] = space.get("cache", {})
    names, options = sorted(params), sorted(cache)
    size = math.prod(len(params[n]) for n in names) * math.prod(len(cache[n]) for n in options)
    if size > MAX_CANDIDATES:  # checked before the grid is built: 40^8 sets is 6.5e12
        raise InputError(
            "/cache" if cache else "/params",
            "the search space is too large",
            expected=f"at most {MAX_CANDIDATES} parameter sets",
            found=size,
            source=source,
        )
    combos = [
        dict(zip(names, combo, strict=True))
        for combo in itertools.product(*(params[n] for n in names))
    ]
    grid: list[tuple[dict[str, Any], dict[str, Any] | None]] = [(c, None) for c in combos]
    left_out = 0
    if cache:
        honoured = []
        for values in itertools.product(*(cache[n] for n in options)):
            chosen = dict(zip(options, values, strict=True))
            try:  # combinations no pack honours: a sum over 1, options that do not go together
                build_cache_aware(chosen)
            except InputError:
                left_out += len(combos)
                continue
            honoured.append(chosen)
        grid = [(combo, chosen) for combo in combos for chosen in honoured]
        if not grid:
            raise InputError(
                "/cache",
                "no candidate left: every combination has low_water + recall_share > 1 or "
                "recall options that do not go together",
                expected="low_water + recall_share <= 1, and recall_refresh other than each "
                "only with carry_recall false",
                found=f"{left_out} combinations",
                source=source,
            )
    if space.get("search", "grid") == "random":
        rng = random.Random(space.get("seed", 0))
        grid = rng.sample(grid, min(space.get("trials", 20), len(grid)))
    return [make_candidate(strategy, p, c) for p, c in grid], left_out


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
    require("scipy", "eval", "packproof tune")  # its statistics; checked before the search
    config = load_config(config_path)
    space, objective = _load_space(space_path, strategy, config)
    default = make_candidate(strategy, {}, None)
    candidates, left_out = _candidates(space, strategy, str(space_path))
    if objective is not None:
        _require_replays(config)
    out = out_root / safe_component(f"{config.name}-{strategy}")
    files, reads = (out / "tune.json", out / "tune.md"), [config_path, space_path, *config.suites]
    check_targets(files, reads)  # before the search, which takes the time
    specs = [c.spec for c in candidates]
    grid = dataclasses.replace(config, specs=tuple(dict.fromkeys([default.spec, *specs])))
    with tempfile.TemporaryDirectory(prefix="packproof-tune-") as tmp:
        records = run_cells(grid, Path(tmp), jobs=jobs, executor=executor)
    head: dict[str, Any] = {
        "schema": "packproof.tune.v1",
        "config": config.name,
        "strategy": strategy,
        "search": space.get("search", "grid"),
        "candidates": len(specs),
        "budgets": list(config.budgets),
    }
    if "cache" in space:
        head["left_out"] = left_out  # combinations build_cache_aware refuses
    if objective is None:
        result = _metric_result(records, candidates, default, space, config, head)
        markdown = _markdown(result)
    else:
        body = objective_result(records, candidates, default, space, objective, config)
        result = significant({**head, **body})
        markdown = objective_markdown(result)
    json_text = dumps(result, indent=2, prepared=True) + "\n"
    write_files(dict(zip(files, (json_text, markdown), strict=True)), inputs=reads)
    return out, result


def _metric_result(
    records: Sequence[Mapping[str, Any]],
    candidates: Sequence[Candidate],
    default_candidate: Candidate,
    space: Mapping[str, Any],
    config: EvalConfig,
    head: Mapping[str, Any],
) -> dict[str, Any]:
    """The single-metric search's tune.json content."""
    metric = space.get("metric", "evidence_recall")
    default = default_candidate.spec
    specs = [c.spec for c in candidates]
    # values[spec][cell] with cell = (scenario, turn, budget); groups = conversations
    values: dict[str, dict[tuple[str, int, str], float]] = {}
    for r in records:
        v = r["metrics"].get(metric)
        if v is not None:
            values.setdefault(r["spec"], {})[(r["scenario"], r["turn"], str(r["budget"]))] = v
    cells = sorted(values.get(default, {}))
    groups = sorted({c[0] for c in cells})
    require_two(groups, "conversations (scenarios)")

    def mean(spec: str, keep: set[str]) -> float:
        got = [v for c, v in values.get(spec, {}).items() if c[0] in keep]
        return float(np.mean(got)) if got else float("-inf")

    fold_rows = []
    held_tuned: list[float] = []
    held_default: list[float] = []
    for fold in folds(groups, space.get("folds", 5), space.get("seed", 0)):
        train = set(groups) - set(fold)
        best = max(specs, key=lambda s: (mean(s, train), -specs.index(s)))
        test = [c for c in cells if c[0] in fold]
        held_tuned += [values[best][c] for c in test]
        held_default += [values[default][c] for c in test]
        chosen = candidates[specs.index(best)]
        fold_rows.append(
            {
                "held_out": sorted(fold),
                "chosen": chosen.params,
                **({} if chosen.cache is None else {"cache": chosen.cache}),
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
    chosen = candidates[specs.index(final)]
    result: dict[str, Any] = significant(
        {
            **head,
            "metric": metric,
            "conversations": len(groups),
            "cells": len(cells),
            "default": {
                "spec": default,
                "label": default_candidate.label,
                "held_out": mean_ci(b, config.resamples, config.confidence, config.seed),
            },
            "tuned": {"held_out": estimate, "versus_default": versus},
            "chosen": {
                **chosen.fields(),
                "spec": final,
                "label": chosen.label,
                "score_all_conversations": mean(final, everyone),
            },
            "wins_on_held_out": wins,
            "folds": fold_rows,
        }
    )
    return result


def _markdown(r: Mapping[str, Any]) -> str:
    def stat(s: Mapping[str, Any] | None) -> str:
        return "–" if not s else f"{s['mean']:.3f} [{s['low']:.3f}, {s['high']:.3f}]"

    vs = r["tuned"]["versus_default"] or {}
    left = (
        f"; {r['left_out']} combinations no pack can honour left out" if r.get("left_out") else ""
    )
    lines = [
        f"# packproof tune: {r['strategy']} on {r['config']}",
        "",
        f"{r['candidates']} parameter sets ({r['search']}{left}), {r['metric']} over {r['cells']} "
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
        params = searched(
            {"params": f["chosen"], **({"cache": f["cache"]} if "cache" in f else {})}
        )
        lines.append(
            f"| {', '.join(f['held_out'])} | {params} | {f['train_score']:.3f} "
            f"| {f['held_out_score']:.3f} | {f['default_held_out_score']:.3f} |"
        )
    return "\n".join(lines) + "\n"
