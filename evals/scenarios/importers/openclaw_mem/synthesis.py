"""Synthesis cards: their sources and whether they are fresh, as openclaw-mem decides.

A row whose ``tool_name`` is ``graph.synth-compile`` is a card (POLICY.md, section 6;
``_graph_eval_synthesis_card``). Its ``detail.graph_synthesis.source_refs`` name its
sources; it is stale when it has none, when a source has no row, when its
``source_digest`` differs from the digest of its sources as they are now
(``_graph_source_snapshot``, ``_graph_source_digest_from_snapshots``), when it was rolled
back, or when it was superseded. Which cards are preferred is the strategy's to decide.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final

from packproof.packer.errors import InputError

from .records import parse_detail

__all__ = [
    "CARD_TOOL",
    "card_sources",
    "is_fresh",
    "scope_token",
    "source_digest",
    "source_id",
]

CARD_TOOL: Final = "graph.synth-compile"


def _synthesis(detail: Mapping[str, Any]) -> Mapping[str, Any]:
    value = detail.get("graph_synthesis")
    return value if isinstance(value, dict) else {}


def card_sources(detail: Mapping[str, Any], where: str) -> list[str]:
    """The card's source refs: ``source_refs`` stripped, each once, as written.

    openclaw-mem matches them as written against the candidates' ``obs:N`` refs (so
    ``"60"`` covers nothing, though it counts as a source), and reads each as an id
    (``obs:`` dropped) to check freshness: a ref that is not an id makes its ``pack``
    crash (POLICY.md, 15.14), so it is bad input here, as is a plain string (which
    openclaw-mem splits into characters)."""
    refs = _synthesis(detail).get("source_refs")
    if refs is None:
        return []
    if not isinstance(refs, list):
        raise InputError(
            where,
            "a synthesis card's source_refs make openclaw-mem's pack crash",
            expected="a list of refs",
            found=refs,
        )
    out = [ref for ref in dict.fromkeys(str(r).strip() for r in refs) if ref]
    for ref in out:
        try:
            source_id(ref)
        except ValueError:
            raise InputError(
                where,
                "a synthesis card's source ref that is not an id makes openclaw-mem's pack "
                "crash (POLICY.md 15.14)",
                expected="obs:N or N",
                found=ref,
            ) from None
    return out


def source_id(ref: str) -> int:
    """The row id a source ref names (``obs:`` dropped; Python's ``int``)."""
    return int(ref[4:] if ref.startswith("obs:") else ref)


def scope_token(scope: Any) -> str:
    """A row's scope as the digest holds it: lower-cased, runs of spaces, ``_`` and
    ``-`` as one ``-``, stripped of them at the ends; "" for none."""
    if not isinstance(scope, str):
        return ""
    word = "-".join(scope.strip().lower().replace("_", " ").replace("-", " ").split())
    return word


def _snapshot(row: Mapping[str, Any]) -> dict[str, Any]:
    detail = parse_detail(row.get("detail_json"))
    return {
        "recordRef": f"obs:{row['id']}",
        "ts": row.get("ts") or "",
        "kind": row.get("kind") or "",
        "tool_name": row.get("tool_name") or "",
        "summary": (row.get("summary") or "").replace("\n", " ").strip(),
        "scope": scope_token(detail.get("scope")),
    }


def source_digest(rows: list[Mapping[str, Any]]) -> str:
    """SHA-256 of the compact, key-sorted JSON (``ensure_ascii=False``) of the rows'
    snapshots, in source order."""
    snapshots = [_snapshot(r) for r in rows]
    text = json.dumps(snapshots, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _lower(value: Any) -> str:
    return value.strip().lower() if isinstance(value, str) else ""


def is_fresh(
    detail: Mapping[str, Any], sources: list[str], rows: Mapping[int, Mapping[str, Any]]
) -> bool:
    """Whether the card still matches its sources (POLICY.md, section 6)."""
    synthesis = _synthesis(detail)
    ids = [source_id(ref) for ref in sources]
    if not ids or any(i not in rows for i in ids):
        return False
    recorded = synthesis.get("source_digest")
    if recorded and recorded != source_digest([rows[i] for i in ids]):
        return False
    status = _lower(synthesis.get("status"))
    lifecycle = synthesis.get("lifecycle")
    lifecycle = lifecycle if isinstance(lifecycle, dict) else {}
    superseded = (
        synthesis.get("superseded_by")
        or lifecycle.get("superseded_by")
        or lifecycle.get("supersededBy")
        or status == "superseded"
    )
    return status != "rolled_back" and not superseded
