"""Golden packs: every scenario under every strategy, snapshotted in tests/golden/.

Any change to a pack fails here with a readable diff; only ``make golden``
(``pytest --update-goldens``) rewrites the snapshots.
"""

from __future__ import annotations

import difflib

import pytest

from packproof.evals.scenarios.format import Scenario, pack_turn
from packproof.packer.jsonio import dumps
from packproof.packer.strategies import REGISTRY
from tests.evals.scenarios.test_scenarios import ALL
from tests.paths import ROOT

GOLDEN = ROOT / "tests" / "golden"


def snapshot(scenario: Scenario) -> str:
    packs = {
        name: [pack_turn(turn, name).to_dict() for turn in scenario.turns]
        for name in sorted(REGISTRY)
    }
    return (
        dumps({"scenario": scenario.id, "sha256": scenario.sha256, "packs": packs}, indent=1) + "\n"
    )


@pytest.mark.parametrize("scenario", ALL, ids=[sc.id for sc in ALL])
def test_golden_pack(scenario: Scenario, request: pytest.FixtureRequest) -> None:
    path = GOLDEN / f"{scenario.id}.json"
    current = snapshot(scenario)
    if request.config.getoption("--update-goldens"):
        from packproof.packer.files import write_atomic

        write_atomic(path, current)
        return
    assert path.exists(), f"no golden for {scenario.id}: run `make golden` and review the diff"
    stored = path.read_text("utf-8")
    if stored != current:
        diff = difflib.unified_diff(
            stored.splitlines(),
            current.splitlines(),
            f"golden/{path.name}",
            "current",
            n=2,
            lineterm="",
        )
        shown = list(diff)[:80]
        pytest.fail(
            f"{scenario.id} ({scenario.file}:{scenario.line}) differs from its golden; "
            "if intended, run `make golden`:\n" + "\n".join(shown)
        )


def test_no_orphan_goldens(request: pytest.FixtureRequest) -> None:
    known = {f"{sc.id}.json" for sc in ALL}
    orphans = sorted(p.name for p in GOLDEN.glob("*.json") if p.name not in known)
    if request.config.getoption("--update-goldens"):
        for name in orphans:
            (GOLDEN / name).unlink()
        return
    assert not orphans, f"goldens without a scenario (run `make golden`): {orphans}"
