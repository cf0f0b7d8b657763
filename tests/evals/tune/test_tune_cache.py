"""packproof tune over the cache-aware options: candidates are canonical
``strategy(...)+cache(...)`` specs, impossible combinations are left out and
counted, and on replays the objective (probe recall under a cost ceiling, or
cost under a recall floor) picks per fold on the training conversations only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import packproof.evals.tune.search as tune_module
from packproof.evals.project import DATA
from packproof.evals.run.config import load_config
from packproof.evals.scenarios.compile import compile_sources, load_sources, write_compiled
from packproof.evals.tune.objective import (
    COST,
    RECALL,
    Objective,
    choose,
    configurations,
    cross_validate,
    means,
    unit_values,
)
from packproof.evals.tune.search import _candidates, _load_space, tune
from packproof.packer import InputError
from packproof.packer.packspec import parse_pack_spec
from tests.evals.tune.test_tune import conversation


def replay(name: str, n: int, talk: int) -> str:
    """A fact said first, then ``talk`` steps of small talk that push it out of a
    1600-token budget, then a probe asking for it."""
    steps = [f"      - t: 0\n        items: [[{name}-fact, user, 400, the vault code is {n}{n}]]\n"]
    steps += [
        f"      - t: {30 * k}\n        items: [[{name}-{k}, user, 400, small talk {k} {name}]]\n"
        for k in range(1, talk + 1)
    ]
    probe = (
        "      - t: 900\n        probe: true\n        prompt: what is the vault code\n"
        f"        relevant: [{name}-fact]\n"
    )
    return (
        f"  - id: {name}\n    why: A fact, small talk, then a question about the fact.\n"
        "    request:\n      budget_tokens: 2000\n      fresh_tail: {count: 1}\n      items: []\n"
        "    turns:\n" + "".join(steps) + probe
    )


CONFIG = """\
name: t
suites: [compiled/r.jsonl]
strategies: [bm25]
budgets: [1600, 2400]
bootstrap: {resamples: 200}
cache:
  profiles: [anthropic, openai]
  static_prefix_tokens: [0, 2000]
"""

SPACE = """\
strategy: bm25
folds: 3
cache:
  low_water: [0.3, 0.5]
  recall_share: [0.0, 0.3, 0.6]
objective:
  maximize: probe_recall
  cost_ceiling: 0.4
  profile: anthropic
  static_prefix_tokens: 2000
"""


def suite(tmp: Path, space: str = SPACE) -> tuple[Path, Path]:
    source = tmp / "r.yaml"
    source.write_text(
        "scenarios:\n" + "".join(replay(c, n, 4 + 2 * n) for n, c in enumerate("abc", 1))
    )
    write_compiled(compile_sources(load_sources([source])), tmp / "compiled")
    (tmp / "cfg.yaml").write_text(CONFIG)
    (tmp / "space.yaml").write_text(space)
    return tmp / "cfg.yaml", tmp / "space.yaml"


def run(config: Path, space: Path, tmp: Path) -> tuple[Path, dict[str, Any]]:
    return tune(config, "bm25", space, out_root=tmp / "out", jobs=1, executor="serial")


def test_cache_candidates_are_canonical_and_impossible_sums_are_left_out() -> None:
    space = {"cache": {"low_water": [0.3, 0.5], "recall_share": [0.0, 0.3, 0.6]}}
    found, left_out = _candidates(space, "bm25")
    assert left_out == 1 and len(found) == 5  # 0.5 + 0.6 > 1
    for c in found:
        assert "+cache(" in c.spec and parse_pack_spec(c.spec).spec_string() == c.spec
        assert c.params == {} and c.cache is not None
        assert c.cache["low_water"] + c.cache["recall_share"] <= 1
    # with strategy parameters: the product of both
    both, left_out = _candidates({**space, "params": {"k1": [0.9, 1.2]}}, "bm25")
    assert (len(both), left_out) == (10, 2)
    assert [c.params["k1"] for c in both] == [0.9] * 5 + [1.2] * 5
    with pytest.raises(InputError, match="no candidate left") as err:
        _candidates({"cache": {"low_water": [0.8], "recall_share": [0.5]}}, "bm25", "s.yaml")
    assert len(str(err.value).splitlines()) == 1


def test_every_shipped_space_loads(tmp_path: Path) -> None:
    """As evals/locomo-replay.yaml prices (every shipped profile, statics 0 and 2000)."""
    suite(tmp_path)
    (tmp_path / "cfg.yaml").write_text(CONFIG.replace("  profiles: [anthropic, openai]\n", ""))
    config = load_config(tmp_path / "cfg.yaml")
    for path in sorted((DATA / "spaces").glob("*.yaml")):
        space, objective = _load_space(path, path.stem.split("-")[0], config)
        candidates, left_out = _candidates(space, space["strategy"])
        assert candidates and (left_out == 0 or "carry_recall" in space["cache"])
    space, objective = _load_space(DATA / "spaces" / "bm25-cache.yaml", "bm25", config)
    assert objective == Objective(COST, 0.645, "anthropic", 2000)
    # 2 x 2 x 2 x 2 (low_water, recall_share, recall_depth, placement) x 4 recall
    # variants: carried, or not carried and refreshed each step, every 20 steps or on
    # compaction
    candidates, left_out = _candidates(space, "bm25")
    assert (len(candidates), left_out) == (64, 32)
    assert sum("carry_recall=false" in c.label for c in candidates) == 48


BAD = {
    "out-of-range": ("[0.3, 0.5]", "[0.3, 1.5]", r"line 4 /cache/low_water/1: out of range"),
    "placement": (
        "  low_water:",
        "  placement: [after, middle]\n  low_water:",
        r"line 4 /cache/placement/1: unknown value \(expected one of after\|first",
    ),
    "unknown-option": (
        "  low_water:",
        "  low_tide: [1]\n  low_water:",
        r"line 4 /cache/low_tide: unknown cache-aware option",
    ),
    "profile": ("profile: anthropic", "profile: gemini", r"line 9 /objective/profile: a cache"),
    "static": (
        "tokens: 2000",
        "tokens: 1000",
        r"line 10 /objective/static_prefix_tokens: a static prefix size the config cfg.yaml",
    ),
    "floor-with-maximize": (
        "cost_ceiling: 0.4",
        "recall_floor: 0.9",
        r"line 8 /objective/recall_floor: recall_floor does not go",
    ),
    "metric-too": (
        "folds: 3",
        "folds: 3\nmetric: mrr",
        r"line 3 /metric: a space with an objective",
    ),
    "no-params-no-cache": (SPACE, "strategy: bm25\nparams: {}\n", "schema violation"),
    "neither-goal": (
        "  maximize: probe_recall\n",
        "",
        r"line 7 /objective: an objective either maximizes .* found \"neither\"",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_spaces_are_one_line_naming_the_space_line(case: str, tmp_path: Path) -> None:
    old, new, needle = BAD[case]
    assert old in SPACE
    config, space = suite(tmp_path, SPACE.replace(old, new, 1))
    with pytest.raises(InputError, match=needle) as err:
        run(config, space, tmp_path)
    assert str(err.value).startswith(str(space)) and len(str(err.value).splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_the_cli_refuses_an_unpriced_profile_in_one_line(tmp_path: Path) -> None:
    config, space = suite(tmp_path, SPACE.replace("profile: anthropic", "profile: gemini"))
    argv = ["tune", "--config", str(config), "--strategy", "bm25", "--space", str(space)]
    out = subprocess.run(
        [sys.executable, "-m", "packproof", *argv, "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2, out.stdout + out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert "/objective/profile" in line and "does not price" in line and 'found "gemini"' in line


def test_an_objective_needs_replays(tmp_path: Path) -> None:
    lines = "".join(json.dumps(conversation(n).to_json()) + "\n" for n in range(3))
    write_compiled({tmp_path / "r.yaml": lines}, tmp_path / "compiled")
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    (tmp_path / "space.yaml").write_text(SPACE)
    with pytest.raises(InputError, match="the config's suites hold none"):
        run(tmp_path / "cfg.yaml", tmp_path / "space.yaml", tmp_path)


CEILING = Objective(RECALL, 0.35, "anthropic", 2000)
FLOOR = Objective(COST, 0.7, "anthropic", 2000)


def test_the_constrained_choice() -> None:
    specs = ["a", "b", "c", "d"]
    # a ceiling: the best recall among those at most 0.35; a tie goes to the earlier
    train = {"a": (0.9, 0.50), "b": (0.7, 0.30), "c": (0.8, 0.35), "d": (0.8, 0.20)}
    assert choose(specs, train, CEILING) == ("c", True)
    # none under the ceiling: the cheapest (a tie to the earlier), flagged infeasible
    train = {"a": (0.9, 0.50), "b": (0.7, 0.40), "c": (0.8, 0.40), "d": (0.1, None)}
    assert choose(specs, train, CEILING) == ("b", False)
    # a floor: the cheapest among those with recall >= 0.7; ties to the earlier
    train = {"a": (0.9, 0.50), "b": (0.7, 0.30), "c": (0.6, 0.10), "d": (0.75, 0.30)}
    assert choose(specs, train, FLOOR) == ("b", True)
    # none above the floor: the highest recall, flagged infeasible
    train = {"a": (0.5, 0.50), "b": (None, 0.30), "c": (0.6, 0.10), "d": (0.6, 0.05)}
    assert choose(specs, train, FLOOR) == ("c", False)


def grid(value: dict[str, dict[str, tuple[float, float]]]) -> dict[str, Any]:
    """Per spec, the same (recall, cost) of a conversation at two budgets."""
    return {
        s: {(c, b): v for c, v in per.items() for b in ("100", "200")} for s, per in value.items()
    }


def test_cross_validation_never_scores_a_candidate_where_it_was_chosen() -> None:
    """``x`` shines on conversation a only. Chosen with a in view it would win over
    ``y`` (1/3 > 0.8/3); the fold holding a out must choose y and score it on a."""
    values = grid(
        {
            "x": {"a": (1.0, 0.1), "b": (0.0, 0.2), "c": (0.0, 0.3)},
            "y": {"a": (0.0, 0.1), "b": (0.4, 0.2), "c": (0.4, 0.3)},
            "default": {"a": (0.5, 0.9), "b": (0.5, 0.9), "c": (0.5, 0.9)},
        }
    )
    rows, held = cross_validate(values, ["x", "y"], "default", [["a"], ["b"], ["c"]], CEILING)
    assert [r["spec"] for r in rows] == ["y", "x", "x"]
    assert rows[0]["train"] == {RECALL: pytest.approx(0.4), COST: pytest.approx(0.25)}
    assert rows[0]["held_out_values"] == {RECALL: 0.0, COST: 0.1}
    assert rows[0]["default_held_out"] == {RECALL: 0.5, COST: 0.9}
    assert [u for u, _, _ in held] == [(c, b) for c in "abc" for b in ("100", "200")]
    assert [t[0] for _, t, _ in held] == [0.0] * 6  # held out, the tuning does not pay
    assert [d for _, _, d in held] == [values["default"][u] for u, _, _ in held]
    # the constraint too is judged on the training conversations only: z is cheap
    # on b and c but not on a, so only the fold holding a out takes it
    values = grid(
        {
            "z": {"a": (0.9, 0.9), "b": (0.9, 0.3), "c": (0.9, 0.3)},
            "y": {"a": (0.4, 0.2), "b": (0.4, 0.2), "c": (0.4, 0.2)},
            "default": {"a": (0.5, 0.9), "b": (0.5, 0.9), "c": (0.5, 0.9)},
        }
    )
    rows, _ = cross_validate(values, ["z", "y"], "default", [["a"], ["b"], ["c"]], CEILING)
    assert [(r["spec"], r["feasible"]) for r in rows] == [("z", True), ("y", True), ("y", True)]
    assert rows[0]["held_out_values"] == {RECALL: 0.9, COST: 0.9}  # over the ceiling, held out


@pytest.mark.parametrize(
    ("ceiling", "chosen", "feasible", "wins"),
    [
        # under 0.46 only low_water 0.5 without a recall block keeps the fact and the
        # cost (its probes counted: 0.43-0.46 on the training folds)
        (0.46, {"low_water": 0.5, "recall_share": 0.0}, True, True),
        # nothing is that cheap: the cheapest, flagged
        (0.2, {"low_water": 0.3, "recall_share": 0.0}, False, False),
    ],
)
def test_tuning_a_replay_under_a_cost_ceiling(
    ceiling: float,
    chosen: dict[str, float],
    feasible: bool,
    wins: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config, space = suite(tmp_path, SPACE.replace("cost_ceiling: 0.4", f"cost_ceiling: {ceiling}"))
    seen: list[dict[str, Any]] = []

    def recording(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = real(*args, **kwargs)
        seen.extend(records)
        return records

    real = tune_module.run_cells
    monkeypatch.setattr(tune_module, "run_cells", recording)
    out, result = run(config, space, tmp_path)
    default = "bm25(b=0.75,k1=1.2,stem=none,stopwords=none)"
    assert result["candidates"] == 5 and result["left_out"] == 1
    assert result["default"]["spec"] == default  # the plain defaults, no +cache
    assert result["conversations"] == 3 and result["units"] == 6  # 3 conversations x 2 budgets
    objective = Objective(RECALL, ceiling, "anthropic", 2000)
    assert (
        result["objective"]
        == objective.to_json()
        == {
            "maximize": "probe_recall",
            "cost_ceiling": ceiling,
            "profile": "anthropic",
            "static_prefix_tokens": 2000,
        }
    )
    values = unit_values(seen, objective)
    # each of the 5 cache-aware specs, and it under the 2 placements its packs suggest
    bare = list(dict.fromkeys(s.split(" @ ")[0] for s in values if "+cache(" in s))
    specs = configurations(bare, values)  # as the search orders them (ties: the first)
    assert len(bare) == 5 and len(specs) == 15
    held_out: list[str] = []
    for fold in result["folds"]:
        test = set(fold["held_out"])
        train = {"a", "b", "c"} - test
        held_out += fold["held_out"]
        # the choice is made on the training conversations alone ...
        spec, ok = choose(specs, {s: means(values[s], train) for s in specs}, objective)
        bare, _, placement = spec.partition(" @ ")
        assert (fold["label"], fold["feasible"]) == (parse_pack_spec(bare).label(), ok)
        assert fold["chosen"] == {
            "params": {},
            "cache": chosen,
            "placement": placement or "default",
        }
        assert ok == feasible
        # ... and scored on the held-out ones alone
        recall, cost = means(values[spec], test)
        assert fold["held_out_values"] == {RECALL: recall, COST: pytest.approx(cost)}
    assert sorted(held_out) == ["a", "b", "c"]
    tuned, plain = result["tuned"], result["default"]
    assert tuned["held_out"][RECALL]["n"] == tuned["held_out"][COST]["n"] == 6
    assert tuned["satisfies_on_held_out"] == (tuned["held_out"][COST]["mean"] <= ceiling) == wins
    assert not plain["satisfies_on_held_out"] and result["wins_on_held_out"] == wins
    assert tuned["versus_default"][COST]["mean"] < 0  # cache-aware is cheaper here
    assert result["chosen"]["cache"] == chosen and result["chosen"]["feasible"] == feasible
    # the cost is a mean over conversation x budget units, each its own sum over
    # its requests, steps and probes alike: never cells pooled across
    # conversations (which differ in length)
    steps = [r for r in seen if r["spec"] == default]
    assert any(r["probe"] for r in steps)
    priced = [r["cache"]["anthropic"]["2000"] for r in steps]
    pooled = sum(f["cost"] for f in priced) / sum(
        f["cached"] + f["written"] + f["uncached"] for f in priced
    )
    a = [
        r["cache"]["anthropic"]["2000"]
        for r in steps
        if r["scenario"] == "a" and r["budget"] == 1600
    ]
    by_hand = sum(f["cost"] for f in a) / sum(f["cached"] + f["written"] + f["uncached"] for f in a)
    assert values[default][("a", "1600")][1] == pytest.approx(by_hand)
    unit_mean = sum(v[1] for v in values[default].values()) / 6
    assert plain["held_out"][COST]["mean"] == pytest.approx(unit_mean)
    assert abs(unit_mean - pooled) > 1e-4
    text = (out / "tune.md").read_text()
    assert f"| held out | probe recall | relative cost | relative cost <= {ceiling} |" in text
    assert "1 combinations no pack can honour left out" in text
    assert "| feasible |" in text and "low_water=" in text
    assert ("| **no** |" in text) and (("closest" in text) != feasible)
    assert json.loads((out / "tune.json").read_text())["left_out"] == 1


def test_tuning_a_replay_above_a_recall_floor(tmp_path: Path) -> None:
    floor = SPACE.replace("maximize: probe_recall", "minimize: relative_cost")
    config, space = suite(tmp_path, floor.replace("cost_ceiling: 0.4", "recall_floor: 0.9"))
    out, result = run(config, space, tmp_path)
    assert result["objective"]["minimize"] == COST and result["objective"]["recall_floor"] == 0.9
    # low_water 0.3 without a recall block is cheapest but loses the fact: the
    # cheapest that keeps it is low_water 0.5
    assert [f["chosen"]["cache"] for f in result["folds"]] == [
        {"low_water": 0.5, "recall_share": 0.0}
    ] * 3
    assert all(f["feasible"] for f in result["folds"])
    tuned, vs = result["tuned"], result["tuned"]["versus_default"]
    assert tuned["satisfies_on_held_out"] and result["default"]["satisfies_on_held_out"]
    assert vs[RECALL]["mean"] == 0 and vs[COST]["mean"] < 0
    assert result["wins_on_held_out"] == (vs[COST]["p_value"] < 0.05)
    assert (
        "| held out | probe recall | relative cost | probe recall >= 0.9 |"
        in (out / "tune.md").read_text()
    )
