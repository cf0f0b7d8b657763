"""Bad input, every class: one line naming where and what, exit 2, no traceback,
nothing half-written, nothing a user gave lost. A table, one row per class."""

from __future__ import annotations

import csv
import json
import os
import pickle
import shutil
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from packproof.cli import main
from packproof.evals.run.folder import safe_component
from packproof.evals.run.journal import gzip_member
from packproof.evals.scenarios.format import Scenario
from packproof.packer.errors import InputError, MissingExtraError
from tests.paths import ROOT
from tests.reliability.helpers import SUITE, assert_one_line_exit_2, config, write

REQUEST = {"items": [{"id": "a", "text": "deploy"}], "budget_tokens": 8, "prompt": "deploy"}


def suite_lines() -> list[str]:
    return SUITE.read_text("utf-8").splitlines()


def edited_suite(tmp: Path, edit: Callable[[list[str]], list[str]]) -> list[str]:
    path = write(tmp / "s" / "edited.jsonl", "\n".join(edit(suite_lines())) + "\n")
    return ["eval", "--config", str(config(tmp, [str(path)])), "--out", str(tmp / "r")]


def retitled(line: str, **changes: object) -> str:
    return json.dumps({**json.loads(line), **changes})


def bad_request_suite(tmp: Path, *executor: str) -> list[str]:
    """A suite whose sha256 matches but whose request is invalid (as a tool that
    writes compiled suites itself could make): the error is raised in a worker."""
    obj = json.loads(suite_lines()[0])
    obj["turns"][0]["request"]["budget_tokens"] = "lots"
    obj["sha256"] = Scenario.from_json(obj).sha256
    path = write(tmp / "s" / "bad.jsonl", json.dumps(obj) + "\n")
    cfg = config(tmp, [str(path)])
    return ["eval", "--config", str(cfg), "--out", str(tmp / "r"), "--jobs", "2", *executor]


def resume_with(tmp: Path, corrupt: Callable[[Path], None]) -> list[str]:
    cfg = config(tmp, [str(SUITE)])
    argv = ["eval", "--config", str(cfg), "--out", str(tmp / "r"), "--jobs", "1"]
    assert main(argv) == 0
    (journal,) = (tmp / "r").glob("t/t-*/results.jsonl.gz")
    corrupt(journal)
    return [*argv, "--resume"]


def append(line: str) -> Callable[[Path], None]:
    """Append ``line`` to a journal as a batch of its own (a gzip member)."""

    def go(path: Path) -> None:
        with path.open("ab") as f:
            f.write(gzip_member([line.encode() + b"\n"]))

    return go


def first_record(path: Path) -> str:
    return zlib.decompressobj(31).decompress(path.read_bytes()).decode().splitlines()[0]


def locomo(tmp: Path, turn: dict[str, object]) -> list[str]:
    sample = {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "A",
            "speaker_b": "B",
            "session_1": [{"dia_id": "D1:1", "speaker": "A", "text": "hi"}, turn],
        },
        "qa": [{"question": "hi?", "answer": "hi", "evidence": ["D1:1"], "category": 4}],
    }
    path = write(tmp / "locomo.json", json.dumps([sample]))
    return ["import", "locomo", str(path), "-o", str(tmp / "out.jsonl")]


def request_file(tmp: Path, text: str | None = None) -> Path:
    return write(tmp / "req.json", text if text is not None else json.dumps(REQUEST))


def fifo(tmp: Path) -> Path:
    path = tmp / "fifo"
    os.mkfifo(path)
    return path


def compact_item_source(tmp: Path, item: str) -> Path:
    """A scenario source whose one item is the compact ``item`` (YAML flow text)."""
    return write(
        tmp / "s.yaml",
        "schema: packproof.scenarios.v1\nscenarios:\n  - id: one\n"
        "    why: One item to pack, said in a sentence.\n"
        f"    request:\n      budget_tokens: 20\n      items:\n        - {item}\n"
        "    relevant: [m1]\n",
    )


def suites_above_the_config(tmp: Path) -> list[str]:
    """A project in a folder whose parent has suites where its config looks for
    its own (``packproof init`` inside a repository): they are not its suites."""
    shutil.copy(SUITE, write(tmp / "scenarios" / "compiled" / "x.jsonl", ""))
    cfg = config(tmp / "project", ["scenarios/compiled/*.jsonl"])
    return ["eval", "--config", str(cfg), "--out", str(tmp / "r")]


def _same_stem(t: Path) -> list[str]:
    twin = t / "twin" / SUITE.name
    twin.parent.mkdir(parents=True)
    shutil.copy(SUITE, twin)
    return ["eval", "--config", str(config(t, [str(SUITE), str(twin)])), "--out", str(t / "r")]


# (id, argv builder, what the one line says)
CASES: list[tuple[str, Callable[[Path], list[str]], str]] = [
    ("suites-with-one-stem", lambda t: _same_stem(t), "cells would collide"),
    (
        "duplicate-scenario-id",
        lambda t: edited_suite(t, lambda ls: [*ls, ls[0]]),
        "duplicate scenario id",
    ),
    (
        "mirror-invalid-id",
        lambda t: edited_suite(t, lambda ls: [retitled(ls[0], id="Bad Id"), *ls[1:]]),
        "invalid scenario id",
    ),
    (
        "mirror-stale-sha256",
        lambda t: edited_suite(t, lambda ls: [retitled(ls[0], why="edited"), *ls[1:]]),
        "does not match its sha256",
    ),
    ("suite-empty", lambda t: edited_suite(t, lambda ls: []), "no scenarios"),
    (
        "scenario-without-turns",
        lambda t: edited_suite(t, lambda ls: [retitled(ls[0], turns=[]), *ls[1:]]),
        "has no turns",
    ),
    ("suite-line-is-array", lambda t: edited_suite(t, lambda ls: ["[1, 2]"]), "a JSON object"),
    (
        "suite-not-utf8",
        lambda t: [
            "eval",
            "--config",
            str(config(t, [str(write(t / "s" / "b.jsonl", b"\xff\xfe{}\n"))])),
        ],
        "not UTF-8",
    ),
    (
        "bad-request-under-the-process-pool",
        lambda t: bad_request_suite(t),
        "scenario lcm-relevant-older-summary-beats-newer turn 0",
    ),
    (
        "bad-request-under-dask",
        lambda t: bad_request_suite(t, "--executor", "dask"),
        "/budget_tokens: wrong type",
    ),
    (
        "resume-duplicate-record",
        lambda t: resume_with(t, lambda p: append(first_record(p))(p)),
        "recorded twice",
    ),
    (
        "resume-foreign-record",
        lambda t: resume_with(
            t, lambda p: append(retitled(first_record(p), key="other/x#0|bm25|9"))(p)
        ),
        "not in this config's grid",
    ),
    (
        "resume-non-numeric-metric",
        lambda t: resume_with(
            t,
            lambda p: p.write_bytes(
                gzip_member(
                    [
                        retitled(first_record(p), metrics={"evidence_recall": "high"}).encode()
                        + b"\n"
                    ]
                )
            ),
        ),
        "not a result record",
    ),
    (
        "resume-journal-is-not-gzip",
        lambda t: resume_with(t, lambda p: p.write_bytes(b'{"key": "k"}\n')),
        "results.jsonl.gz: byte 0: not a gzip member of a journal",
    ),
    (
        "resume-journal-is-a-directory",
        lambda t: resume_with(t, lambda p: (p.unlink(), p.mkdir())),  # type: ignore[func-returns-value]
        "cannot read results",
    ),
    (
        "gates-nan",
        lambda t: [
            "gate",
            "--baseline",
            str(ROOT / "reports/baseline/summary.json"),
            "--current",
            str(ROOT / "reports/baseline/summary.json"),
            "--gates",
            str(
                write(
                    t / "g.yaml",
                    "schema: packproof.gates.v1\nmetrics: {evidence_recall: .nan}\n"
                    "hard_invariants: 0\nexpectations: all\n",
                )
            ),
        ],
        "not a finite number",
    ),
    (
        "locomo-speaker-is-a-list",
        lambda t: locomo(t, {"dia_id": "D1:2", "speaker": ["B"], "text": "yo"}),
        "/0/conversation/session_1/1/speaker: wrong type",
    ),
    (
        "spec-parameter-twice",
        lambda t: ["pack", str(request_file(t)), "--strategy", "bm25(k1=1,k1=3)"],
        "parameter 'k1' given twice",
    ),
    (
        "param-nested-too-deeply",
        lambda t: [
            "pack",
            str(request_file(t)),
            "--strategy",
            "bm25",
            "--param",
            "k1=" + "[" * 50_000,
        ],
        "--strategy/params/k1: wrong type",
    ),
    (
        "pack-output-is-its-input",
        lambda t: ["pack", str(request_file(t)), "-o", str(t / "req.json")],
        "is this command's input",
    ),
    (
        "import-output-is-its-input",
        lambda t: [
            *locomo(t, {"dia_id": "D1:2", "speaker": "B", "text": "yo"})[:3],
            "-o",
            str(t / "locomo.json"),
        ],
        "is this command's input",
    ),
    (
        "pack-output-is-a-fifo",
        lambda t: ["pack", str(request_file(t)), "-o", str(fifo(t))],
        "not a regular file",
    ),
    (
        "pack-output-is-dev-null",
        lambda t: ["pack", str(request_file(t)), "-o", "/dev/null"],
        "not a regular file",
    ),
    (
        "pack-output-is-a-directory",
        lambda t: ["pack", str(request_file(t)), "-o", str(t)],
        "is a directory",
    ),
    (
        "eval-out-under-a-file",
        lambda t: [
            "eval",
            "--config",
            str(config(t, [str(SUITE)])),
            "--out",
            str(write(t / "afile", "x") / "sub"),
        ],
        "Not a directory",
    ),
    (
        "scenarios-out-is-a-file",
        lambda t: [
            "scenarios",
            "compile",
            str(shutil.copy(ROOT / "scenarios" / "trust.yaml", t / "trust.yaml")),
            "--out",
            str(write(t / "afile", "x")),
        ],
        "Not a directory",
    ),
    (
        "import-output-is-a-directory",
        lambda t: [*locomo(t, {"dia_id": "D1:2", "text": "yo"})[:3], "-o", str(t)],
        "is a directory",
    ),
    (
        "tune-out-under-a-file",
        lambda t: [
            "tune",
            "--config",
            str(config(t, [str(SUITE)])),
            "--out",
            str(write(t / "afile", "x") / "sub"),
        ],
        "Not a directory",
    ),
    (
        "json-nested-too-deeply",
        lambda t: ["pack", str(request_file(t, "[" * 100_000 + "]" * 100_000))],
        "nested too deeply",
    ),
    (
        "json-lone-surrogate",
        lambda t: [
            "pack",
            str(
                request_file(t, '{"items": [{"id": "a", "text": "x\\ud800"}], "budget_tokens": 5}')
            ),
        ],
        "lone surrogate",
    ),
    (
        "yaml-nested-too-deeply",
        lambda t: [
            "scenarios",
            "validate",
            str(write(t / "d.yaml", "a: " + "[" * 200 + "]" * 200)),
        ],
        "nested deeper than 64 levels",
    ),
    (
        "yaml-lone-surrogate",
        lambda t: ["scenarios", "validate", str(write(t / "d.yaml", 'a: "x\\ud800"\n'))],
        "lone surrogate",
    ),
    (
        "yaml-integer-too-long-for-python",  # F9: ValueError past 4300 digits
        lambda t: [
            "gate",
            "--baseline",
            str(ROOT / "reports/baseline/summary.json"),
            "--current",
            str(ROOT / "reports/baseline/summary.json"),
            "--gates",
            str(write(t / "g.yaml", "metrics: {tokens_used: " + "9" * 5000 + "}\n")),
        ],
        "line 1 /metrics/tokens_used: integer too large to be a number (expected at most 300 "
        'digits, found "5000 digits")',
    ),
    (
        "yaml-hex-integer-too-large-for-a-float",  # read whole, it fails where it is used
        lambda t: [
            "scenarios",
            "validate",
            str(compact_item_source(t, f"[m1, user, 0x{'f' * 4000}, hi]")),
        ],
        "line 8 /scenarios/0/request/items/0/2: integer too large to be a number",
    ),
    (
        "yaml-boolean-where-text-belongs",  # F18: `yes` is true; the 4-item form is meant
        lambda t: ["scenarios", "validate", str(compact_item_source(t, "[m1, user, 5, yes]"))],
        "line 8 /scenarios/0/request/items/0/3: schema violation: text expected, but YAML read "
        "a boolean (YAML reads an unquoted yes, no, on, off, true or false as one): quote it "
        "(expected a string, found true)",
    ),
    (
        "yaml-number-where-text-belongs",
        lambda t: ["scenarios", "validate", str(compact_item_source(t, "[m1, user, 1.5]"))],
        "line 8 /scenarios/0/request/items/0/2: schema violation: text expected, but YAML read "
        "a number: quote it (expected a string, found 1.5)",
    ),
    (
        "config-budget-past-the-largest",  # F10: OverflowError in numpy
        lambda t: [
            "eval",
            "--config",
            str(config(t, [str(SUITE)], budgets=[10**20])),
            "--out",
            str(t / "r"),
        ],
        "/budgets/0: schema violation: 100000000000000000000 is greater than the maximum",
    ),
    (
        "config-name-too-long-for-a-folder",  # F11: OSError, file name too long
        lambda t: [
            "eval",
            "--config",
            str(config(t, [str(SUITE)], name="a" * 300)),
            "--out",
            str(t / "r"),
        ],
        "/name: schema violation: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' (302 characters) "
        "is too long",
    ),
    (
        "config-suites-only-in-the-folder-above",  # F12: another project's suites ran
        suites_above_the_config,
        "line 1 /suites/0: no scenario file matches 'scenarios/compiled/*.jsonl' in",
    ),
    (
        "scheduler-without-dask",  # F13: silently unused
        lambda t: ["eval", "--config", str(config(t, [str(SUITE)])), "--scheduler", "tcp://x:1"],
        "usage: --scheduler: only the dask executor uses a scheduler",
    ),
    (
        "error-line-shows-control-characters",  # F17: an id that clears the terminal
        lambda t: edited_suite(t, lambda ls: [retitled(ls[0], id="x\x1b[2Jy"), *ls[1:]]),
        'invalid scenario id (expected [a-z0-9][a-z0-9._-]*, found "x\\x1b[2Jy")',
    ),
    ("packer-timeout-nan", lambda t: ["eval", "--packer-timeout", "nan"], "--packer-timeout"),
    ("packer-timeout-negative", lambda t: ["eval", "--packer-timeout", "-1"], "--packer-timeout"),
    ("jobs-negative", lambda t: ["eval", "--jobs", "-3"], "--jobs"),
    (
        "indent-huge",
        lambda t: ["pack", str(request_file(t)), "--indent", "100000000"],
        "--indent",
    ),
    (
        "tune-space-too-large",
        lambda t: [
            "tune",
            "--config",
            str(config(t, [str(SUITE)])),
            "--space",
            str(
                write(
                    t / "space.yaml",
                    "schema: packproof.space.v1\nstrategy: hybrid\nparams:\n"
                    + "".join(
                        f"  {p}: [{', '.join(str(1 + i / 40) for i in range(40))}]\n"
                        for p in ["w_relevance", "w_recency", "w_usage", "half_life_turns", "k1"]
                    ),
                )
            ),
        ],
        "too large",
    ),
]


@pytest.mark.parametrize(("builder", "says"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_and_exit_2(
    builder: Callable[[Path], list[str]],
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert_one_line_exit_2(builder, says, tmp_path, monkeypatch, capsys)


def test_a_config_name_never_leaves_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("../../escape", "/abs/x", ".."):
        assert "/" not in safe_component(name) and not safe_component(name).startswith(".")
    cfg = config(tmp_path, [str(SUITE)], name="../../escape")
    assert main(["eval", "--config", str(cfg), "--out", str(tmp_path / "r"), "--jobs", "1"]) == 0
    (top,) = (tmp_path / "r").iterdir()  # <out>/<config name>/
    assert top.name.startswith(("_", "escape"))
    made = {p.name for p in top.iterdir()}
    assert {"latest"} < made and all(n.startswith(("_", "escape", "latest")) for n in made)
    assert not (tmp_path.parent / "escape").exists()


def test_errors_cross_process_boundaries_whole() -> None:
    """A worker's bad-input error reaches the parent as itself (picklable by state)."""
    for error in (
        InputError("/a", "bad", expected="x", found=[1], source="f.json"),
        MissingExtraError("stem='english'", "stem", "Stemmer"),
    ):
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and str(copy) == str(error)


def test_metrics_csv_neutralises_formulas(tmp_path: Path) -> None:
    evil = tmp_path / "s" / "=HYPERLINK(1).jsonl"
    evil.parent.mkdir()
    shutil.copy(SUITE, evil)
    cfg = config(tmp_path, [str(evil)])
    assert main(["eval", "--config", str(cfg), "--out", str(tmp_path / "r"), "--jobs", "1"]) == 0
    (csv_path,) = (tmp_path / "r").glob("*/latest/metrics.csv")
    with csv_path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(r["key"].startswith("'=HYPERLINK(1)/") for r in rows)
    assert all(r["suite"] == "'=HYPERLINK(1)" for r in rows)


def test_serve_answers_a_bad_line_and_goes_on(tmp_path: Path) -> None:
    import subprocess

    lines = [
        "[" * 100_000 + "]" * 100_000,
        '{"items": [], "budget_tokens": 5, "prompt": "\\udc00"}',
        json.dumps({**REQUEST, "request_id": "7"}),
    ]
    out = subprocess.run(
        [sys.executable, "-m", "packproof", "serve"],
        input=("\n".join(lines) + "\n").encode() + b"\xff\n",
        capture_output=True,
        timeout=60,
    )
    answers = [json.loads(x) for x in out.stdout.decode().splitlines()]
    assert len(answers) == 4
    assert "error" in answers[0] and "error" in answers[1] and "error" in answers[3]
    assert answers[2]["request_id"] == "7" and answers[2]["schema"].startswith("openclaw-mem")


def test_a_bad_request_under_dask_is_one_line_with_the_workers_quiet(tmp_path: Path) -> None:
    """The workers' own "Compute Failed" log would repeat the error with a
    traceback on the real stderr (which capsys does not see): read it whole."""
    import subprocess

    argv = bad_request_suite(tmp_path, "--executor", "dask")
    out = subprocess.run(
        [sys.executable, "-m", "packproof", *argv], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 2, out.stderr
    lines = [x for x in out.stderr.splitlines() if x.strip() and not x.startswith("eval: ")]
    assert len(lines) == 1 and "/budget_tokens: wrong type" in lines[0], out.stderr


def test_a_second_eval_into_a_held_folder_exits_2_and_keeps_the_journal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import fcntl

    cfg = config(tmp_path, [str(SUITE)])
    argv = ["eval", "--config", str(cfg), "--out", str(tmp_path / "r"), "--jobs", "1"]
    assert main(argv) == 0
    (run,) = [p for p in (tmp_path / "r").glob("*/*") if p.name != "latest"]
    journal = (run / "results.jsonl.gz").read_bytes()
    with (run / ".lock").open("w") as held:  # as a running eval holds it
        fcntl.flock(held, fcntl.LOCK_EX)
        capsys.readouterr()
        assert main(argv) == 2
        err = capsys.readouterr().err
    assert "another packproof run is writing into this folder" in err
    assert (run / "results.jsonl.gz").read_bytes() == journal


def _packproof(*args: str, **how: Any) -> subprocess.CompletedProcess[bytes]:
    """``python -m packproof`` in a process of its own: its standard streams are
    the process's, as a shell gives them (closed, full, ASCII)."""
    how = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **how}
    return subprocess.run([sys.executable, "-m", "packproof", *args], timeout=120, **how)


def _closed_stdin() -> None:
    os.close(0)  # as `<&-` leaves it


@pytest.mark.parametrize("command", ["pack", "serve"])
def test_a_closed_stdin_is_one_line_and_exit_2(command: str) -> None:
    out = _packproof(command, stdin=subprocess.DEVNULL, preexec_fn=_closed_stdin)
    err = out.stderr.decode()
    assert out.returncode == 2 and err.count("\n") == 1, err
    assert err.startswith("packproof: error: <stdin>: standard input is closed"), err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_a_full_stdout_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with open("/dev/full", "wb") as full:
        out = _packproof("pack", str(request_file(tmp_path)), stdout=full)
    err = out.stderr.decode()
    assert out.returncode == 2 and err.count("\n") == 1, err
    assert err == "packproof: error: <stdout>: cannot write: No space left on device\n"


def test_what_an_ascii_stdout_cannot_encode_is_escaped_not_an_error() -> None:
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    out = _packproof("docs", "metrics", env=env)
    assert out.returncode == 0 and out.stderr == b"", out.stderr
    assert out.stdout.isascii() and b"\\u2265" in out.stdout  # ≥, written as its escape
