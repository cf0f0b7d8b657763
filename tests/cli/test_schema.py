"""``packproof schema``: every file a user writes or reads has its schema printed,
the library's and the harness's alike; with no name, the list."""

from __future__ import annotations

import json

import pytest

from packproof.cli import main
from packproof.cli.library import shipped_schemas
from tests.paths import ROOT

# name -> the shipped file it prints
FILES = {
    "request": "packer/schemas/request.v1.json",
    "pack": "packer/schemas/context-pack.v1.json",
    "trace": "packer/schemas/trace.v1.json",
    "config": "evals/schemas/eval-config.v1.json",
    "gates": "evals/schemas/gates.v1.json",
    "space": "evals/schemas/space.v1.json",
    "cache-profiles": "evals/schemas/cache-profiles.v1.json",
    "scenarios": "evals/schemas/scenarios.v1.json",
    "summary": "evals/schemas/eval-summary.v1.json",
}


def test_every_shipped_schema_has_a_name() -> None:
    shipped = {
        str(p.relative_to(ROOT))
        for folder in ("packer/schemas", "evals/schemas")
        for p in (ROOT / folder).glob("*.json")
    }
    assert set(FILES.values()) == shipped
    assert sorted(shipped_schemas()) == sorted(FILES)


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_name_prints_its_schema_as_shipped(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", name]) == 0
    out = capsys.readouterr().out
    assert out == (ROOT / FILES[name]).read_text("utf-8")
    assert json.loads(out)["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_without_a_name_it_lists_them_with_what_each_is_for(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["schema"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[: len(FILES)]] == sorted(FILES)
    assert any(line.startswith("config ") and "packproof.yaml" in line for line in lines)
    assert lines[-1] == "packproof schema NAME prints one (JSON Schema, draft 2020-12)"


def test_the_starter_config_names_a_schema_command_that_prints_its_schema(
    capsys: pytest.CaptureFixture[str],
) -> None:
    starter = (ROOT / "evals/data/packproof.yaml").read_text("utf-8")
    assert "`packproof schema config`" in starter
    assert main(["schema", "config"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "packproof.eval.v1"
