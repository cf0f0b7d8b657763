"""Conformance: packproof against a peer system's recorded outputs, one adapter per peer.

A peer's recordings are a case file (JSON lines, gzipped or not): each case holds the
peer's inputs and what its real code produced for them. An adapter (one module here,
registered in :data:`PEERS` by :func:`~.cases.register`) packs a case's inputs with
packproof and lists every way the result differs from the recording; it never feeds
the recorded outputs back into the inputs. ``packproof conformance PEER [FILE]``
runs every case of a file (:func:`~.cases.check_file`).
"""

from __future__ import annotations

from packproof.evals.conformance import clarity, lossless_claw, openclaw_mem
from packproof.evals.conformance.cases import (
    PEERS,
    Difference,
    Outcome,
    Peer,
    check_file,
    read_cases,
)

__all__ = [
    "PEERS",
    "Difference",
    "Outcome",
    "Peer",
    "check_file",
    "clarity",
    "lossless_claw",
    "openclaw_mem",
    "read_cases",
]
