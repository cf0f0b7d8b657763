"""What every peer's conformance test shares: its recorded cases, read once (the
test skips, saying why, where ``../shared`` is absent), and the check that every
case matches."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from packproof.evals.conformance import Peer, check_file, read_cases
from tests.paths import ROOT


@cache
def _read(peer: Peer) -> list[dict[str, Any]]:
    return [case for _, case in read_cases(ROOT / peer.default_file)]


def recorded_cases(peer: Peer) -> list[dict[str, Any]]:
    """The peer's shared cases; skips the test without ``../shared``."""
    path = ROOT / peer.default_file
    if not path.exists():
        pytest.skip(
            f"{path} is absent: the {peer.name} conformance suite is read from "
            "../shared beside the project root (CI has it)"
        )
    return _read(peer)


def assert_every_case_matches(peer: Peer, count: int) -> None:
    """Every one of the peer's ``count`` shared cases matches; the first five
    that do not are shown with their differences and the inputs behind them."""
    recorded_cases(peer)
    outcome = check_file(peer, ROOT / peer.default_file)
    shown = [f"{m.case}: {m.differences[:3]}; {m.inputs}" for m in outcome.mismatches[:5]]
    assert outcome.mismatches == [], (
        f"{len(outcome.mismatches)} of {outcome.cases} cases differ from {peer.name}:\n"
        + "\n".join(shown)
    )
    assert outcome.cases == count
