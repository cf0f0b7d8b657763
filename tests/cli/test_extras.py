"""A missing optional extra is one line naming the extra to install, and exit 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from packproof.cli import main
from packproof.evals.project import init_project
from packproof.packer import text, tokens

REQUEST = {"items": [{"id": "a", "text": "deploying"}], "budget_tokens": 8, "prompt": "deploy"}


@pytest.fixture
def request_file(tmp_path: Path) -> Path:
    path = tmp_path / "req.json"
    path.write_text(json.dumps(REQUEST))
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    init_project(tmp_path / "p")
    monkeypatch.chdir(tmp_path / "p")
    assert main(["scenarios", "compile"]) == 0
    return tmp_path / "p"


def missing(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make ``import MODULE`` fail as it does when the package is not installed."""
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)
    text._stemmer.cache_clear()
    tokens._cl100k.cache_clear()


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    err = capsys.readouterr().err
    return code, err


@pytest.mark.parametrize(
    ("modules", "argv", "extra"),
    [
        (["Stemmer"], ["pack", "{req}", "--strategy", "bm25(stem=english)"], "stem"),
        (["Stemmer"], ["pack", "{req}", "--strategy", "hybrid(stem=english)"], "stem"),
        (["tiktoken"], ["pack", "{req}", "--param", "k1=1", "--strategy", "bm25"], None),
        (["scipy"], ["eval"], "eval"),
        (["matplotlib"], ["eval"], "eval"),
        (["tqdm"], ["eval"], "eval"),
        (["distributed"], ["eval", "--executor", "dask"], "dask"),
        (["scipy"], ["tune"], "eval"),
    ],
    ids=[
        "stem-bm25",
        "stem-hybrid",
        "no-extra-needed",
        "scipy",
        "matplotlib",
        "tqdm",
        "dask",
        "tune",
    ],
)
def test_missing_extra_is_one_line_and_exit_2(
    modules: list[str],
    argv: list[str],
    extra: str | None,
    request_file: Path,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    missing(monkeypatch, *modules)
    code, err = run([a.replace("{req}", str(request_file)) for a in argv], capsys)
    if extra is None:  # a pack that needs no extra still works without it
        assert code == 0, err
        return
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"pip install 'packproof[{extra}]'" in err
    assert not (project / "reports").exists()  # checked before any work


def test_cl100k_without_the_exact_extra(
    request_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    request_file.write_text(json.dumps({**REQUEST, "token_counter": "cl100k"}))
    missing(monkeypatch, "tiktoken")
    code, err = run(["pack", str(request_file)], capsys)
    assert code == 2 and "token_counter 'cl100k' needs the exact extra" in err
    assert "pip install 'packproof[exact]'" in err
