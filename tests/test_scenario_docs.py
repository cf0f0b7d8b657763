"""Every scenario example in docs/scenarios.md is a valid scenario file's list:
each YAML block that starts with ``- id:`` is written under ``scenarios:`` in a
file of its own and passes ``packproof scenarios validate`` (schema, ids,
strategies, replay rules), so a reader who copies one gets a scenario that runs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from packproof.cli import main
from tests.paths import ROOT
from tests.test_documented_commands import Block, blocks

PAGE = ROOT / "docs" / "scenarios.md"
EXAMPLES = [b for b in blocks(PAGE) if b.language == "yaml" and b.text.lstrip().startswith("- id:")]


def test_the_page_has_its_scenario_examples() -> None:
    # the replay, the lossless-claw case and the gold answers, at least
    ids = [b.text.split("\n", 1)[0].removeprefix("- id:").strip() for b in EXAMPLES]
    assert {"replay-demo", "lcm-relevant-older-summary-beats-newer", "answered"} <= set(ids)


@pytest.mark.parametrize("block", EXAMPLES, ids=lambda b: b.where)
def test_a_scenario_example_validates(
    block: Block, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / f"example-line-{block.line}.yaml"
    source.write_text(
        "schema: packproof.scenarios.v1\nscenarios:\n" + textwrap.indent(block.text, "  "),
        "utf-8",
    )
    code = main(["scenarios", "validate", str(source)])
    captured = capsys.readouterr()
    assert code == 0, f"{block.where}: {captured.err}"
    assert captured.out.startswith("1 scenarios in 1 files: valid")
