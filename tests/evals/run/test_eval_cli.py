"""``packproof eval`` as a CI step: exit 1 on failures (and the same failures in
summary.md and junit.xml), ``--quiet``, YAML suites, stale mirrors refused,
filters and ``--list``, one ``latest`` per config, ``--keep``."""

from __future__ import annotations

import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from packproof.cli import main
from tests.journal import records as journal_records
from tests.paths import ROOT

SUITE = ROOT / "scenarios/compiled/budgets-caps.jsonl"
SOURCE = ROOT / "scenarios/budgets-caps.yaml"
# drops the oldest item of every pack: misses expectations, breaks no invariant it need not
DROP_OLDEST = """
import json, sys
from packproof import make_pack, pack
for line in sys.stdin:
    request = json.loads(line)
    rid = request.pop("request_id")
    ids = pack(request).selected_ids[1:]
    print(json.dumps({**make_pack(request, ids), "request_id": rid}), flush=True)
"""


def write_config(tmp: Path, strategies: list[Any] | None = None, **extra: Any) -> Path:
    config = {
        "schema": "packproof.eval.v1",
        "name": extra.pop("name", "cli"),
        "suites": extra.pop("suites", [str(SUITE)]),
        "strategies": strategies or ["chronological", "bm25"],
        "budgets": ["scenario", 32],
        "bootstrap": {"resamples": 200},
        **extra,
    }
    path = tmp / "cfg.yaml"
    path.write_text(json.dumps(config))
    return path


def run(tmp: Path, *argv: str) -> int:
    return main(["eval", "--out", str(tmp / "r"), "--jobs", "1", "--executor", "serial", *argv])


def test_a_clean_run_exits_0_and_quiet_prints_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = write_config(tmp_path)
    assert run(tmp_path, "--config", str(cfg), "--quiet") == 0
    out, err = capsys.readouterr()
    assert out.count("\n") == 1 and out.startswith("eval cli-") and ": passed: " in out
    assert "no failures" in out
    assert err == ""  # no progress bar where stderr is not a terminal
    assert run(tmp_path, "--config", str(cfg)) == 0
    out, _ = capsys.readouterr()
    assert out.startswith("# PASSED · packproof eval: cli")  # summary.md leads with the word
    assert out.splitlines()[-1].startswith("eval cli-")


def test_failures_exit_1_and_summary_md_agrees_with_junit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "drop.py").write_text(DROP_OLDEST)
    mine = {"name": "drop", "packer": f"cmd:{sys.executable} {tmp_path / 'drop.py'}"}
    cfg = write_config(tmp_path, ["chronological", mine])
    assert run(tmp_path, "--config", str(cfg), "-q") == 1
    out = capsys.readouterr().out
    assert ": FAILED: " in out and "missed expectations" in out
    latest = tmp_path / "r" / "cli" / "latest"
    summary = json.loads((latest / "summary.json").read_text())
    failing = summary["failures"]["cells"]
    assert failing > 0
    junit = ET.parse(latest / "junit.xml").getroot()
    assert int(junit.get("failures", "-1")) == failing
    md = (latest / "summary.md").read_text()
    assert f"## Failures: {failing}" in md and f"junit.xml has the same {failing}" in md
    assert md.startswith("# FAILED · packproof eval: cli")  # as the command's last line says
    assert run(tmp_path, "--config", str(cfg), "-q", "--no-fail") == 0


def test_a_packer_that_fails_exits_1_naming_the_class(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mute.py").write_text("import sys\nfor line in sys.stdin:\n    print('{}')\n")
    mine = {"name": "mute", "packer": f"cmd:{sys.executable} {tmp_path / 'mute.py'}"}
    cfg = write_config(tmp_path, ["chronological", mine])
    assert run(tmp_path, "--config", str(cfg), "-q") == 1
    out = capsys.readouterr().out
    assert "packer failures (DESYNC" in out
    latest = tmp_path / "r" / "cli" / "latest"
    junit = ET.parse(latest / "junit.xml").getroot()
    summary = json.loads((latest / "summary.json").read_text())
    assert int(junit.get("failures", "-1")) == summary["failures"]["cells"]
    types = {f.get("type") for f in junit.iter("failure")}
    assert "packer" in types  # every budget's failed cell is a failed case
    assert any("[mute]@32" in (c.get("name") or "") for c in junit.iter("testcase"))


def test_yaml_suites_run_directly_and_a_stale_mirror_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = write_config(tmp_path)
    assert run(tmp_path, "--config", str(cfg), "-q", str(SOURCE)) == 0
    from_yaml = json.loads((tmp_path / "r/cli/latest/summary.json").read_text())
    assert run(tmp_path, "--config", str(cfg), "-q") == 0
    from_mirror = json.loads((tmp_path / "r/cli/latest/summary.json").read_text())
    assert from_yaml["groups"] == from_mirror["groups"]  # compiled in memory: the same cells
    assert from_yaml["manifest"]["suites"][0]["file"] == "budgets-caps.yaml"
    # a mirror older than its source
    shutil.copytree(ROOT / "scenarios", tmp_path / "scenarios")
    source = tmp_path / "scenarios/budgets-caps.yaml"
    text = source.read_text()
    source.write_text(text.replace("why: ", "why: Edited. ", 1))
    mirror = tmp_path / "scenarios/compiled/budgets-caps.jsonl"
    capsys.readouterr()
    assert run(tmp_path, "--config", str(write_config(tmp_path, suites=[str(mirror)]))) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "compiled mirror older than its source" in err
    assert "changed budget-" in err and "packproof scenarios compile" in err
    # the config may name YAML sources too
    assert run(tmp_path, "--config", str(write_config(tmp_path, suites=[str(source)])), "-q") == 0


def test_filters_and_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conversations = ROOT / "scenarios/compiled/conversations.jsonl"
    cfg = write_config(
        tmp_path, ["chronological", "bm25", "hybrid"], suites=[str(SUITE), str(conversations)]
    )
    assert (
        run(tmp_path, "--config", str(cfg), "--list", "--strategy", "bm25", "--suite", "conv*") == 0
    )
    out = capsys.readouterr().out
    assert "conversations" in out and "budgets-caps" not in out
    assert "strategies (1; baseline bm25)" in out
    assert "cells:" in out and not (tmp_path / "r").exists()  # --list runs nothing
    assert (
        run(tmp_path, "--config", str(cfg), "-q", "--strategy", "hybrid", "--strategy", "bm25") == 0
    )
    summary = json.loads((tmp_path / "r/cli/latest/summary.json").read_text())
    assert [s["label"] for s in summary["strategies"]] == ["bm25", "hybrid"]
    assert summary["baseline"].startswith("bm25(")  # the configured baseline was left out
    assert summary["manifest"]["filters"] == {"strategies": ["hybrid", "bm25"]}
    tags = {t for line in SUITE.read_text().splitlines() for t in json.loads(line)["tags"]}
    tag = sorted(tags)[0]
    assert run(tmp_path, "--config", str(cfg), "-q", "--tag", tag) == 0
    summary = json.loads((tmp_path / "r/cli/latest/summary.json").read_text())
    cells = journal_records(tmp_path / "r/cli/latest")
    assert cells and all(tag in c["tags"] for c in cells)
    capsys.readouterr()
    for bad in (["--strategy", "nope"], ["--suite", "nope"], ["--tag", "no-such-tag"]):
        assert run(tmp_path, "--config", str(cfg), *bad) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and bad[0] in err


def test_each_config_has_its_own_latest_and_keep_prunes(tmp_path: Path) -> None:
    one = write_config(tmp_path, name="one")
    two = tmp_path / "two.yaml"
    two.write_text(one.read_text().replace('"one"', '"two"'))
    assert run(tmp_path, "--config", str(one), "-q") == 0
    assert run(tmp_path, "--config", str(two), "-q") == 0
    one_latest = (tmp_path / "r/one/latest").resolve()
    assert (
        one_latest.parent.name == "one"
        and (tmp_path / "r/two/latest").resolve().parent.name == "two"
    )
    for budgets in ([16], [24], [40]):
        data = json.loads(one.read_text())
        one.write_text(json.dumps({**data, "budgets": budgets}))
        assert run(tmp_path, "--config", str(one), "-q", "--keep", "2") == 0
    runs = sorted(p.name for p in (tmp_path / "r/one").iterdir() if p.name != "latest")
    assert len(runs) == 2
    assert (tmp_path / "r/one/latest").resolve().name in runs
    assert len([p for p in (tmp_path / "r/two").iterdir() if p.name != "latest"]) == 1
