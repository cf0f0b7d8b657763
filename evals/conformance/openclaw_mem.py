"""openclaw-mem's real ``pack`` (``cmd_pack``, commit 7a3a848), by its recorded outputs.

Each case (``../shared/data/openclaw-mem/pack-cases.jsonl.gz``) holds openclaw-mem's
native inputs (argv, settings, clock, stdin, rows, the searches' ranked ids) and what
its code produced. The importer (``importers.openclaw_mem.case_request``)
makes a packproof request from the inputs alone; packproof packs it with the
``openclaw-mem`` strategy; the pack and the receipts in its trace
(``extensions.openclaw_mem``) must equal the recording: the selected refs in order,
``bundle_text`` byte for byte, every candidate (id in order, included, reasons,
importance, trust, tokens), and the policy, trust-policy, quota and tail receipts and
counts. The recording's ``diagnostics`` (openclaw-mem's intermediate results) only say
where a difference starts (:func:`diagnose`); they are never fed back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from packproof.evals.conformance.cases import Difference, Peer, register
from packproof.evals.scenarios.importers.openclaw_mem import case_request
from packproof.packer import pack
from packproof.packer.errors import InputError, pointer

__all__ = ["CANDIDATE_FIELDS", "PEER", "RECEIPTS", "check", "diagnose"]

EXTENSION: Final = "openclaw_mem"  # where the strategy puts its receipts in the trace
# the receipts compared whole: present in the recording exactly when in the trace
RECEIPTS: Final = ("policy", "trust_policy", "quota_hits", "tail", "counts", "scoring_profile")
CANDIDATE_FIELDS: Final = ("included", "reason", "importance", "trust", "tokens")
SHOWN: Final = 6  # candidate differences listed per case, then a count of the rest


def _expected(case: Mapping[str, Any]) -> Mapping[str, Any]:
    expected = case.get("expected")
    if not isinstance(expected, dict):
        raise InputError("/expected", "missing", expected="the recorded outputs", found=expected)
    for key in ("selected_record_refs", "bundle_text", "candidates"):
        if key not in expected:
            raise InputError(pointer("expected", key), "missing", expected=f"a case's {key!r}")
    if not isinstance(expected["candidates"], list) or not all(
        isinstance(c, dict) and "id" in c for c in expected["candidates"]
    ):
        raise InputError(
            "/expected/candidates", "wrong type", expected="candidate objects with ids"
        )
    return expected


def _packed(case: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The request made from the case's input, and its pack (ContextPack v1, traced)."""
    request = case_request(case)
    try:
        return request, pack(request).to_dict()
    except InputError as exc:  # the importer made a request packproof refuses
        raise InputError(
            "/input", f"its request is refused at {exc.where}: {exc.message}"
        ) from None


def _receipts(packed: Mapping[str, Any]) -> Mapping[str, Any]:
    receipts: Mapping[str, Any] = packed["trace"].get("extensions", {}).get(EXTENSION, {})
    return receipts


def _candidates(expected: list[Any], found: list[Any]) -> list[Difference]:
    ids = [c["id"] for c in expected]
    ours = [c.get("id") for c in found]
    if ids != ours:
        return [Difference("candidates: ids in trace order", ids, ours)]
    out = [
        Difference(f"candidates: {theirs['id']} {key}", theirs.get(key), mine.get(key))
        for theirs, mine in zip(expected, found, strict=True)
        for key in CANDIDATE_FIELDS
        if theirs.get(key) != mine.get(key)
    ]
    if len(out) > SHOWN:
        rest = len(out) - SHOWN
        out = [*out[:SHOWN], Difference(f"candidates: {rest} more differences", None, None)]
    return out


def check(case: Mapping[str, Any]) -> list[Difference]:
    """Every way packproof's pack of the case differs from openclaw-mem's."""
    expected = _expected(case)
    _, packed = _packed(case)
    receipts = _receipts(packed)
    out = []
    refs = [it["recordRef"] for it in packed["items"]]
    if refs != expected["selected_record_refs"]:
        out.append(Difference("selected_record_refs", expected["selected_record_refs"], refs))
    if packed["bundle_text"] != expected["bundle_text"]:
        out.append(Difference("bundle_text", expected["bundle_text"], packed["bundle_text"]))
    out += _candidates(expected["candidates"], list(receipts.get("candidates", [])))
    for key in RECEIPTS:
        if expected.get(key) != receipts.get(key):
            out.append(Difference(key, expected.get(key), receipts.get(key)))
    return out


def _first(found: Any, recorded: Any, step: str) -> str | None:
    return None if found == recorded else f"{step}: ours {found!r}, theirs {recorded!r}"


def _near(found: Any, recorded: Any, step: str) -> str | None:
    """A score: the trace rounds its floats, so equal to within that rounding."""
    if isinstance(found, float) and isinstance(recorded, float):
        return (
            None if math.isclose(found, recorded, rel_tol=1e-6) else _first(found, recorded, step)
        )
    return _first(found, recorded, step)


def diagnose(case: Mapping[str, Any]) -> str:
    """Where a difference starts: the first of openclaw-mem's recorded steps (texts,
    tail lines, fusion, composite score, synthesis preference, candidate list, sort,
    quotas) that packproof's pack does not reproduce."""
    diagnostics = case.get("diagnostics")
    if not isinstance(diagnostics, dict):
        return "no diagnostics recorded"
    request, packed = _packed(case)
    receipts = _receipts(packed)
    texts = {it["id"]: it["text"] for it in request["items"]}
    memory = [c for c in receipts.get("candidates", []) if c.get("layer") == "L1"]
    rrf = {c["id"]: c.get("scores", {}).get("rrf") for c in memory}
    final = {c["id"]: c.get("final_score") for c in memory}
    components = diagnostics.get("score_components") or {}
    synthesis = diagnostics.get("synthesis") or {}
    policy = receipts.get("policy") or {}
    checks = [
        *(
            _first(texts.get(ref), text, f"text of {ref}")
            for ref, text in (diagnostics.get("texts_where_different") or {}).items()
        ),
        _first(
            [it["text"] for it in request["items"] if it["id"].startswith("tail:")],
            diagnostics.get("tail_texts"),
            "tail lines",
        ),
        *(
            _near(rrf[ref], (diagnostics.get("rrf_scores") or {}).get(ref[4:]), f"rrf of {ref}")
            for ref in rrf
            if ref[4:] in (diagnostics.get("rrf_scores") or {})
        ),
        *(
            _near(final[ref], components[ref[4:]].get("final"), f"composite score of {ref}")
            for ref in final
            if ref[4:] in components and final[ref] is not None
        ),
        _first(
            [policy.get("graph_preferred_card_refs"), policy.get("graph_covered_raw_refs")],
            [synthesis.get("preferredCardRefs"), synthesis.get("coveredRawRefs")],
            "synthesis preference (cards, covered refs)",
        ),
        _first(
            sorted(c["id"] for c in memory),
            sorted(f"obs:{i}" for i in diagnostics.get("policy_candidate_ids") or []),
            "memory candidates (fusion cut, archive, supersedes, synthesis)",
        ),
    ]
    if "quota_hits" not in case.get("expected", {}):  # no quota reordering: trace order is sorted
        checks.append(_first([c["id"] for c in memory], diagnostics.get("sorted_refs"), "sort"))
    else:
        checks.append(
            _first(receipts.get("quota_hits"), case["expected"]["quota_hits"], "quota hits")
        )
    first = next((c for c in checks if c is not None), None)
    return first or "every recorded step agrees: the difference is in the fill or the receipts"


PEER: Final = register(
    Peer(
        name="openclaw-mem",
        system="openclaw-mem's cmd_pack, commit 7a3a848",
        default_file=Path("../shared/data/openclaw-mem/pack-cases.jsonl.gz"),
        check=check,
        diagnose=diagnose,
    )
)
