"""Clarity's real v1 scorer and pruner (OpenClaw plugin, commit 88bb3988), by their
recorded outputs; v2 cases are handed to :mod:`.clarity_v2`.

Each v1 case (``../shared/data/clarity/scorer-cases.jsonl.gz``) holds the plugin's
native input: the tracker's persisted ``state``, the ``scoring`` and ``pruning``
settings, how ``pruning`` reached the pruner (``pruner_options``), ``strictMode`` and
``existingContext``. It is run through the functions the ``clarity`` strategy is made
of (:func:`~packproof.packer.strategies.clarity.v1_score`,
:func:`~packproof.packer.strategies.clarity.v1_prune`), with the plugin's defaulting
(``zeros=default``), and every item must give the recorded ``final_score``,
``raw_score``, ``components``, ``breakdown``, ``tier_multiplier`` and
``adjusted_score``, and the pruner the recorded order, keep and prune lists, reasons
and positions. The case's ``request`` (written for packproof's old reading) and its
``expected`` are never fed in.

Tolerance (the data README's): a score matches to 1e-9 absolute, or, where the
staleness decay is large, to floating-point rounding, taken as 1e-12 relative (the
README measured the plugin's rounded ``decayFactor ** turnsStale`` against other
evaluations at most 5e-13 relative, 9e-7 absolute among scores up to 1.2e11).
Breakdowns (rounded to 0.1), tiers, lists and reasons must be equal.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from packproof.evals.conformance.cases import Difference, Peer, register
from packproof.packer.clarity_pruner import PrunerItem, PrunerResult, PrunerSettings, v1_prune
from packproof.packer.errors import InputError
from packproof.packer.strategies.clarity import ScorerSettings, V1Score, or_default, v1_score

__all__ = ["PEER", "V2_FILE", "check", "diagnose", "run_case", "within"]

V2_FILE: Final = Path("../shared/data/clarity/v2-cases.jsonl.gz")
ABSOLUTE: Final = 1e-9
RELATIVE: Final = 1e-12
SHOWN: Final = 6  # item differences listed per case, then a count of the rest
UNTRACKED_SCORE: Final = 10.0  # the pruner's fixed score for a context id the tracker lacks


def within(found: float | None, expected: float | None) -> bool:
    """The README's tolerance: 1e-9 absolute, or 1e-12 relative for large scores."""
    if found is None or expected is None:
        return found is expected
    return math.isclose(found, expected, rel_tol=RELATIVE, abs_tol=ABSOLUTE)


def _v2() -> Any:
    try:
        return importlib.import_module("packproof.evals.conformance.clarity_v2")
    except ModuleNotFoundError:
        return None


def _is_v2(case: Mapping[str, Any]) -> bool:
    module = _v2()
    if module is not None:
        return bool(module.is_v2(case))
    if isinstance(case.get("input"), Mapping) and "turns" in case["input"]:
        raise InputError(
            "/input/turns",
            "a Clarity v2 case, but this packproof has no v2 checker "
            "(packproof.evals.conformance.clarity_v2)",
        )
    return False


def _input(case: Mapping[str, Any]) -> Mapping[str, Any]:
    given = case.get("input")
    if not isinstance(given, Mapping) or not isinstance(given.get("state"), Mapping):
        raise InputError("/input/state", "missing", expected="the tracker's persisted state")
    return given


def run_case(
    case: Mapping[str, Any],
) -> tuple[float, dict[str, V1Score], PrunerResult]:
    """The case's native input scored and pruned as the plugin does: the current
    turn, each tracked item's score (by id), and the pruner's result."""
    given = _input(case)
    state = given["state"]
    current_turn = float(or_default(state.get("currentTurn"), 0))
    scorer = ScorerSettings.of(given.get("scoring") or {})
    pruner = PrunerSettings.of(given.get("pruning") or {}, str(given.get("pruner_options")))
    items: dict[str, Mapping[str, Any]] = {}
    for i, raw in enumerate(state.get("items") or []):
        if not isinstance(raw, Mapping) or not isinstance(raw.get("id"), str):
            raise InputError(f"/input/state/items/{i}", "wrong type", expected="{id, ...}")
        items[raw["id"]] = raw  # a repeated id: the later entry wins, in the first place
    scores = {
        key: v1_score(
            it.get("mentionCount", 0),
            it.get("referenceCount", 0),
            it.get("lastMentionTurn", 0),
            bool(it.get("anchored", False)),
            current_turn,
            scorer,
        )
        for key, it in items.items()
    }
    # the scorer's order: finalScore descending, stable over the tracker's order
    scored = sorted(items, key=lambda key: -scores[key].final)
    context = [c for c in given.get("existingContext") or [] if isinstance(c, Mapping)]
    tiers: dict[str, str] = {}
    for c in context:
        tiers.setdefault(str(c.get("id")), str(or_default(c.get("tier"), "normal")))
    walk = [
        PrunerItem(
            key,
            scores[key].final,
            items[key].get("mentionCount", 0),
            bool(items[key].get("anchored", False)),
            tiers.get(key, "normal"),
        )
        for key in scored
    ]
    walk += [
        PrunerItem(
            str(c.get("id")), UNTRACKED_SCORE, 0, False, str(or_default(c.get("tier"), "normal"))
        )
        for c in context
        if str(c.get("id")) not in items
    ]
    return current_turn, scores, v1_prune(walk, pruner, bool(given.get("strictMode", False)))


def _expected(case: Mapping[str, Any]) -> Mapping[str, Any]:
    expected = case.get("expected")
    if not isinstance(expected, Mapping) or not isinstance(expected.get("items"), Mapping):
        raise InputError("/expected/items", "missing", expected="the recorded items by id")
    if not isinstance(expected.get("pruner"), Mapping):
        raise InputError("/expected/pruner", "missing", expected="the recorded pruner lists")
    return expected


def _item(
    key: str, theirs: Mapping[str, Any], score: V1Score | None, result: PrunerResult
) -> list[Difference]:
    out = []
    mine = result.decisions.get(key)
    if score is not None:
        for name, value in (("final_score", score.final), ("raw_score", score.raw)):
            if not within(value, theirs.get(name)):
                out.append(Difference(f"{key} {name}", theirs.get(name), value))
        for name, value in score.components.items():
            if not within(value, (theirs.get("components") or {}).get(name)):
                out.append(
                    Difference(f"{key} components.{name}", theirs["components"].get(name), value)
                )
        if score.breakdown != theirs.get("breakdown"):
            out.append(Difference(f"{key} breakdown", theirs.get("breakdown"), score.breakdown))
    if mine is None:
        return [*out, Difference(f"{key} pruner decision", theirs.get("reason"), None)]
    if mine.tier_multiplier != theirs.get("tier_multiplier"):
        out.append(
            Difference(
                f"{key} tier_multiplier", theirs.get("tier_multiplier"), mine.tier_multiplier
            )
        )
    if not within(mine.adjusted_score, theirs.get("adjusted_score")):
        out.append(
            Difference(f"{key} adjusted_score", theirs.get("adjusted_score"), mine.adjusted_score)
        )
    decided: tuple[tuple[str, object], ...] = (
        ("category", mine.category),
        ("decision", "keep" if mine.keep else "prune"),
        ("reason", mine.reason),
        ("position", mine.position),
    )
    for field, found in decided:
        if found != theirs.get(field):
            out.append(Difference(f"{key} {field}", theirs.get(field), found))
    return out


def check(case: Mapping[str, Any]) -> list[Difference]:
    """Every way packproof's Clarity differs from the plugin's recording of the case."""
    if _is_v2(case):
        return list(_v2().check(case))
    expected = _expected(case)
    _, scores, result = run_case(case)
    out = []
    for key, theirs in expected["items"].items():
        out += _item(key, theirs, scores.get(key), result)
    if len(out) > SHOWN:
        rest = len(out) - SHOWN
        out = [*out[:SHOWN], Difference(f"{rest} more item differences", None, None)]
    pruner = expected["pruner"]
    for name, value in (("order", result.order), ("keep", result.keep), ("prune", result.prune)):
        if pruner.get(name) != value:
            out.append(Difference(f"pruner {name}", pruner.get(name), value))
    return out


def diagnose(case: Mapping[str, Any]) -> str:
    """The inputs behind a difference: the effective settings against the recorded
    ones, then the first differing item's native record."""
    if _is_v2(case):
        return str(_v2().diagnose(case))
    expected = _expected(case)
    given = _input(case)
    scorer = ScorerSettings.of(given.get("scoring") or {})
    pruner = PrunerSettings.of(given.get("pruning") or {}, str(given.get("pruner_options")))
    notes = [
        f"scoring {dict(given.get('scoring') or {})}",
        f"pruning {dict(given.get('pruning') or {})} passed as {given.get('pruner_options')}",
        f"strictMode {given.get('strictMode')}",
    ]
    recorded = expected.get("scorer_effective") or {}
    if recorded.get("decayFactor") not in (None, scorer.decay_factor):
        notes.append(
            f"decayFactor ours {scorer.decay_factor!r}, theirs {recorded['decayFactor']!r}"
        )
    if (expected.get("pruner_effective") or {}).get("maxContextItems") not in (
        None,
        pruner.max_context_items,
    ):
        notes.append("pruner settings differ")
    _, scores, result = run_case(case)
    items = {it.get("id"): it for it in given["state"].get("items") or []}
    for key, theirs in expected["items"].items():
        if _item(key, theirs, scores.get(key), result):
            notes.append(
                f"first differing item {key}: {dict(items.get(key) or {'untracked': True})}"
            )
            break
    return "; ".join(notes)


PEER: Final = register(
    Peer(
        name="clarity",
        system="the Clarity plugin (commit 88bb3988: v1 scorer and pruner; v2 tracker)",
        default_file=Path("../shared/data/clarity/scorer-cases.jsonl.gz"),
        check=check,
        diagnose=diagnose,
        also_files=(V2_FILE,),
    )
)
