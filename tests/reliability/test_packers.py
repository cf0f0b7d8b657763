"""Bad input about a packer, every class: one line naming the config entry (file,
line, pointer) and what was expected, exit 2, no traceback, and no run folder:
each is found before anything is written. A table, one row per class."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.reliability.helpers import SUITE, assert_one_line_exit_2, write


def named(entry: str) -> Callable[[Path], list[str]]:
    """``packproof eval`` of a config whose strategies' second entry (line 6,
    ``/strategies/1``) is ``entry``, a YAML flow mapping."""

    def build(tmp: Path) -> list[str]:
        text = (
            "schema: packproof.eval.v1\n"
            "name: t\n"
            f"suites: [{SUITE}]\n"
            "strategies:\n"
            "  - chronological\n"
            f"  - {entry}\n"
            "bootstrap: {resamples: 100}\n"
        )
        return ["eval", "--config", str(write(tmp / "c.yaml", text)), "--out", str(tmp / "r")]

    return build


# (id, argv builder, what the one line says)
CASES: list[tuple[str, Callable[[Path], list[str]], str]] = [
    (
        "command-not-found",
        named('{name: mine, packer: "cmd:/no/such/packer"}'),
        "c.yaml: line 6 /strategies/1: packer: cannot start '/no/such/packer': "
        "No such file or directory",
    ),
    (
        "command-not-executable",
        named('{name: mine, packer: "cmd:./c.yaml"}'),
        "c.yaml: line 6 /strategies/1: packer: cannot start './c.yaml': Permission denied",
    ),
    (
        "timeout-not-a-number",
        named('{name: mine, packer: "cmd:true", timeout: .nan}'),
        "c.yaml: line 6 /strategies/1: timeout: not a timeout (expected seconds in (0, 86400]",
    ),
    (
        "name-with-a-control-character",
        named('{name: "mine\\n", packer: "cmd:true"}'),
        "c.yaml: line 6 /strategies/1: not a packer name (expected letters, digits, "
        "'.', '_', '-', found \"mine\\n\")",
    ),
]


@pytest.mark.parametrize(("builder", "says"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_packer_input_is_one_line_exit_2_and_no_run_folder(
    builder: Callable[[Path], list[str]],
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert_one_line_exit_2(builder, says, tmp_path, monkeypatch, capsys)
    assert not (tmp_path / "r").exists()
