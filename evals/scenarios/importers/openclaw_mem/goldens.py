"""openclaw-mem's own golden fixture lane (``CONTEXT_PACK_GOLDEN_SCENARIOS.v0.jsonl``).

A row gives ``cmd_pack``'s argv, the mocked retrieval state of its golden harness
(``pack_state``: the fused ids in order, the ids of each lane, mocked fused scores,
the rows without ``detail_json``) and what the pack must show (``expect``): the
selected refs, the policy receipt, graph-lane receipts. A row becomes a native case
(:func:`golden_case`) whose rows and lanes are ``pack_state``'s, under the
``relevance`` profile: the harness keys its mocked final scores by strings, so no
candidate gets one and every row is ordered by the relevance key (POLICY.md, 15.14).

What packproof judges is the selection (``selected_record_refs``), and only when the
fused order it computes from the lanes' ranks orders the records as the row's mocked
fused scores do. Everything else a row asserts is listed as not judged, with why:
the policy receipt (in the pack's trace: a scenario expects a selection, not a
receipt), graph-lane receipts (packproof has no graph lane), and the harness's mocks that
packproof computes instead (the synthesis preference) or does not model.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise
from typing import Any, Final, NamedTuple

from packproof.packer.errors import InputError

from .case import LANES
from .options import Settings, parse_args

__all__ = ["GRAPH_OPTION", "Golden", "golden_case", "read_golden"]

# Row keys that feed only the graph lane (not modelled) and the harness's own mocks.
_GRAPH_INPUTS: Final = (
    "seed_observations",
    "stage1",
    "probe",
    "perf_counter",
    "graph_index_payload",
    "graph_pack_payload",
    "graph_index_error",
)
RRF_K: Final = 60
GRAPH_OPTION: Final = "a graph-lane option (not modelled)"
RECEIPT: Final = "the policy receipt, which the pack's trace holds (a scenario expects a selection)"
PROFILE: Final = Settings(profile="relevance")  # how the golden harness ranks (module doc)


class Golden(NamedTuple):
    """One golden row read: its case, the selection judged (None: not judged), and
    each assertion or input not judged, with why: ``(what, why)``."""

    id: str
    why: str
    case: dict[str, Any]
    selected: list[str] | None
    not_judged: list[tuple[str, str]]


def _ids(value: Any, where: str) -> list[int]:
    if not isinstance(value, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in value
    ):
        raise InputError(where, "wrong type", expected="an array of integer ids", found=value)
    return value


def _fused(lanes: list[list[int]], limit: int) -> list[int]:
    """Reciprocal rank fusion of the lanes (POLICY.md 3.2), cut to the candidate limit."""
    score: dict[int, float] = {}
    for lane in lanes:
        for rank, ident in enumerate(lane):
            score[ident] = score.get(ident, 0.0) + 1.0 / (RRF_K + rank + 1)
    ordered = sorted(score, key=lambda i: (-score[i], i))
    return ordered[: max(3 * limit, limit + 8)]


def _agrees(fused: list[int], ordered: list[int], mocked: Mapping[str, Any]) -> bool:
    """Whether the fused ranks order every pair of ids as the mocked scores do."""
    if fused != ordered:
        return False
    raw = [mocked.get(str(i)) for i in ordered]
    scores = [s for s in raw if isinstance(s, int | float) and not isinstance(s, bool)]
    return len(scores) == len(raw) and all(a > b for a, b in pairwise(scores))


def golden_case(row: Mapping[str, Any]) -> dict[str, Any]:
    """A golden row as a native case (``input`` only): its argv, the relevance
    profile, ``pack_state``'s rows (no ``detail_json``) and its lanes."""
    state = row.get("pack_state")
    if not isinstance(state, dict):
        raise InputError("/pack_state", "wrong type", expected="an object", found=state)
    rows = state.get("obs_map")
    if not isinstance(rows, dict):
        raise InputError("/pack_state/obs_map", "wrong type", expected="an object", found=rows)
    observations = []
    for key, obs in rows.items():
        if not key.isdecimal() or not isinstance(obs, dict):
            raise InputError(
                f"/pack_state/obs_map/{key}",
                "not a row keyed by its id",
                expected="an object under a decimal id",
                found=obs,
            )
        observations.append({**obs, "id": int(key), "detail_json": obs.get("detail_json")})
    return {
        "input": {
            "args": row.get("args"),
            "env": {"OPENCLAW_MEM_SCORING_PROFILE": PROFILE.profile},
            "observations": observations,
            "retrieval": {
                "fts": _ids(state.get("fts_ids", []), "/pack_state/fts_ids"),
                "vector": _ids(state.get("vec_ids", []), "/pack_state/vec_ids"),
                "vector_en": _ids(state.get("vec_en_ids", []), "/pack_state/vec_en_ids"),
            },
        }
    }


def read_golden(row: Any) -> Golden:
    """One golden row: its case, and what of its ``expect`` packproof judges."""
    if not isinstance(row, dict):
        raise InputError("/", "not a golden row", expected="an object", found=row)
    ident, why = row.get("id"), row.get("why")
    if not isinstance(ident, str) or not ident:
        raise InputError("/id", "a golden row needs its id", expected="a string", found=ident)
    expect = row.get("expect")
    if not isinstance(expect, dict):
        raise InputError("/expect", "wrong type", expected="an object", found=expect)
    case = golden_case(row)
    options = parse_args(row.get("args"), PROFILE, "/args")
    state = row["pack_state"]
    lanes = case["input"]["retrieval"]
    fused = _fused([lanes[lane] for lane in LANES], options.limit)
    ordered = _ids(state.get("ordered_ids", []), "/pack_state/ordered_ids")
    not_judged = [(option, GRAPH_OPTION) for option in options.graph]
    not_judged += [
        (key, "a graph-lane input (not modelled)") for key in _GRAPH_INPUTS if key in row
    ]
    selected = expect.get("selected_record_refs")
    if selected is not None and not _agrees(fused, ordered, state.get("rrf_scores") or {}):
        not_judged.append(
            (
                "selected_record_refs",
                "the row's mocked fused scores order the records unlike the fused ranks of "
                "its lanes, which packproof computes",
            )
        )
        selected = None
    if selected is not None and not (
        isinstance(selected, list) and all(isinstance(r, str) for r in selected)
    ):
        raise InputError(
            "/expect/selected_record_refs", "wrong type", expected="refs", found=selected
        )
    pref = (row.get("synthesis_pref") or {}).get("meta") or {}
    if pref.get("preferredCardRefs"):
        not_judged.append(
            (
                "synthesis_pref",
                f"the row mocks the synthesis preference ({pref['preferredCardRefs']} covering "
                f"{pref.get('coveredRawRefs')}); packproof computes it from the rows",
            )
        )
    for key, value in expect.items():
        if key == "policy" and isinstance(value, dict):
            not_judged += [(f"policy.{k}", RECEIPT) for k in value]
        elif key == "graph" and isinstance(value, dict):
            not_judged += [(f"graph.{k}", "a graph-lane receipt (not modelled)") for k in value]
        elif key != "selected_record_refs":
            not_judged.append((key, "not modelled by packproof"))
    return Golden(ident, why if isinstance(why, str) else "", case, selected, not_judged)
