"""``python -m packproof.evals.scenarios.examples``: every request in a folder packed
with every registered strategy; from the repository's root it packs the bundled
examples, elsewhere it takes a folder, and a missing one is one line, exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from packproof.packer.strategies import REGISTRY
from tests.paths import ROOT

MODULE = "packproof.evals.scenarios.examples"
# lcm tokens: a 6, b 8 (an assistant message is priced as its JSON content blocks), c 1
REQUEST = {
    "items": [
        {"id": "a", "text": "database migration plan"},
        {"id": "b", "text": "lunch", "role": "assistant"},
        {"id": "c", "text": "ok"},
    ],
    "budget_tokens": 8,
    "prompt": "database",
}


def examples(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", MODULE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def kept(stdout: str) -> dict[str, list[str]]:
    """strategy -> the ids it kept, from the printed table (one example)."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("  "):
            name, _mode, _tokens, _word, *ids = line.split()
            out[name] = ids
    return out


def test_it_packs_a_folder_of_requests_with_every_strategy(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/debug.json").write_text(json.dumps(REQUEST))
    done = examples("--examples", "mine", "--out", "packs", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    table = kept(done.stdout)
    assert sorted(table) == sorted(REGISTRY)
    # newest first: c (1) fits, b (8) does not fit the 7 left, and the walk stops
    assert table["chronological"] == ["c"]
    # a (the match) first, b does not fit what is left, c (zero score) fills the rest
    assert table["bm25"] == ["a", "c"]
    written = sorted(p.name for p in (tmp_path / "packs/debug").iterdir())
    assert written == sorted(f"{name}.json" for name in REGISTRY)
    pack = json.loads((tmp_path / "packs/debug/bm25.json").read_text())
    assert [i["recordRef"] for i in pack["items"]] == ["a", "c"]


def test_from_the_repository_root_it_packs_the_bundled_examples(tmp_path: Path) -> None:
    done = examples("--out", str(tmp_path), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    bundled = sorted(p.stem for p in (ROOT / "scenarios/examples").glob("*.json"))
    assert bundled and sorted(p.name for p in tmp_path.iterdir()) == bundled


def test_a_folder_without_requests_is_one_line_exit_2(tmp_path: Path) -> None:
    done = examples(cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert "scenarios/examples: no example requests" in done.stderr
    assert "--examples DIR" in done.stderr


def test_a_bad_request_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text(json.dumps({**REQUEST, "budget_tokens": -1}))
    done = examples("--examples", ".", "--out", "packs", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "bad.json: /budget_tokens" in done.stderr
    assert not (tmp_path / "packs").exists()
