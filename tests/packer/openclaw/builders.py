"""Memory candidates for the unit tests of the openclaw-mem steps."""

from __future__ import annotations

from typing import Any

from packproof.packer.openclaw.order import Candidate


def cand(ref: str, index: int = 0, **fields: Any) -> Candidate:
    """A candidate with neutral defaults: text ``ref``, 1 token, no kind,
    unknown importance and trust, no scores, no lanes, not a card."""
    values: dict[str, Any] = {
        "ref": ref,
        "position": index,
        "index": index,
        "text": ref,
        "tokens": 1,
        "kind": "",
        "importance": "unknown",
        "trust": "unknown",
        "rrf": 0.0,
        "final": None,
        "fts": False,
        "semantic": False,
        "ts_value": 0.0,
        "synthesis": False,
        "decision": None,
    }
    values.update(fields)
    return Candidate(**values)
