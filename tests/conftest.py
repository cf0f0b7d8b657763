"""Shared test set-up: hypothesis profiles, and schema validation of every pack.

Every pack a test produces through ``packer.pack`` is rendered and validated
against the shipped JSON Schemas (an autouse fixture wraps the pipeline), so a
field added to the renderer but not to the schema fails the suite.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from packproof.packer import pipeline as packer_pipeline
from packproof.packer.render import render
from packproof.packer.schema import validate

settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


def assert_valid_pack(obj: dict[str, Any]) -> None:
    errors = validate("pack", obj)
    assert not errors, "pack violates its schema:\n" + "\n".join(errors[:10])


@pytest.fixture(autouse=True)
def _validate_every_pack(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    original = packer_pipeline.assemble

    def checked(req: Any, ranking: Any = None) -> Any:
        result = original(req, ranking)
        assert_valid_pack(render(result))
        return result

    monkeypatch.setattr(packer_pipeline, "assemble", checked)
    yield


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="rewrite tests/golden/ from the current packer (make golden)",
    )
