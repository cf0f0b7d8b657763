"""Readers are strict about every field they use (types, finiteness, bounds,
duplicates, time order), for files a tool or a hand wrote as much as for
configs: a compared run's summary and cells, a cache trace, a compiled suite
(whose sha256 a tool that writes suites recomputes), an eval config's bounds, a
request's strategy under ``--param``, a mirror ``scenarios check`` reads. A
table, one row per class: one line naming where and what, exit 2, nothing a user
gave lost; then the figures that were wrong, shown right."""

from __future__ import annotations

import csv
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from packproof.cli import main
from packproof.evals.metrics.cache.files import profile
from packproof.evals.run.config import config_from
from packproof.evals.scenarios.compile import compile_sources, load_sources
from packproof.evals.scenarios.format import Scenario, load_compiled
from tests.evals.compare.test_compare import cell, write_run
from tests.paths import ROOT
from tests.reliability.helpers import SUITE, assert_one_line_exit_2, config, write

REPLAY = """\
scenarios:
  - id: replay-demo
    why: Three timed steps of one item each, then a probe that asks a question.
    request:
      budget_tokens: 4000
      fresh_tail: {count: 1}
      items: []
    turns:
      - t: 0
        items: [[m1, user, 600, hello there]]
      - t: 10
        items: [[m2, assistant, 600, "hi, how can I help"]]
      - t: 20
        items: [[m3, user, 600, tell me about caching]]
      - t: 30
        probe: true
        prompt: what did the user ask about?
        relevant: [m2]
"""


# ---------------------------------------------------------------- builders


def two_runs(tmp: Path, edit_b: Callable[[Path], None] = lambda b: None) -> list[str]:
    """``compare A B`` of two hand-written runs, B edited by ``edit_b``."""
    rows = [cell(s, 0, evidence_recall=v) for s, v in (("a", 0.5), ("b", 1.0), ("c", 0.0))]
    a, b = write_run(tmp / "A", rows), write_run(tmp / "B", rows)
    edit_b(b)
    return ["compare", str(a), str(b), "--out", str(tmp / "cmp")]


def edit_summary_field(edit: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def go(run: Path) -> None:
        summary = json.loads((run / "summary.json").read_text())
        edit(summary)
        (run / "summary.json").write_text(json.dumps(summary))

    return go


def edit_summary(**manifest: Any) -> Callable[[Path], None]:
    return edit_summary_field(lambda summary: summary["manifest"].update(manifest))


def edit_cells(edit: Callable[[list[list[str]]], list[list[str]]]) -> Callable[[Path], None]:
    def go(run: Path) -> None:
        path = run / "metrics.csv"
        with path.open(newline="") as f:
            rows = list(csv.reader(f))
        with path.open("w", newline="") as f:
            csv.writer(f).writerows(edit(rows))

    return go


def set_field(column: str, value: str) -> Callable[[list[list[str]]], list[list[str]]]:
    def go(rows: list[list[str]]) -> list[list[str]]:
        rows[2][rows[0].index(column)] = value
        return rows

    return go


def gate_significance(tmp: Path, edit_b: Callable[[Path], None] | None = None) -> list[str]:
    """``gate --significance`` of two hand-written runs, B's cells by default
    holding a cell twice."""
    argv = two_runs(tmp, edit_b or edit_cells(lambda rows: [*rows, rows[1]]))
    gates = write(
        tmp / "g.yaml",
        "schema: packproof.gates.v1\nmetrics: {evidence_recall: 0}\n"
        "hard_invariants: 0\nexpectations: all\n",
    )
    baseline, current = f"{argv[1]}/summary.json", f"{argv[2]}/summary.json"
    return [
        *("gate", "--baseline", baseline, "--current", current),
        *("--gates", str(gates), "--significance", "0.05"),
    ]


def gzip_bomb(run: Path) -> None:
    """The run's cells as a gzip that expands to a line of 2 MiB (a gzip of a few
    KB; one of 4 MB expands so to 1 GB): refused before the line is read whole."""
    (run / "metrics.csv").unlink()
    with gzip.open(run / "metrics.csv.gz", "wb", compresslevel=1) as f:
        f.write(b"key,status,suite,scenario,turn,spec,budget\n" + b"0" * (2 << 20))


def gate_on_baseline(tmp: Path, edit: Callable[[dict[str, Any]], None]) -> list[str]:
    """``gate`` of this repository's baseline against itself, the baseline's
    copy edited by ``edit`` (by hand, as the sweep did)."""
    summary = json.loads((ROOT / "reports/baseline/summary.json").read_text("utf-8"))
    edit(summary)
    gates = "schema: packproof.gates.v1\nmetrics: {evidence_recall: 0.02}\n"
    return [
        *("gate", "--baseline", str(write(tmp / "b" / "summary.json", json.dumps(summary)))),
        *("--current", str(ROOT / "reports/baseline/summary.json")),
        *("--gates", str(write(tmp / "g.yaml", gates + "hard_invariants: 0\nexpectations: all\n"))),
    ]


def metric(group: int, name: str, field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def go(summary: dict[str, Any]) -> None:
        summary["groups"][group]["metrics"][name][field] = value

    return go


def trace(tmp: Path, *lines: Any) -> list[str]:
    text = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    return ["cache", "simulate", str(write(tmp / "t.jsonl", text)), "--profile", "anthropic"]


def replay_suite(tmp: Path, edit: Callable[[dict[str, Any]], None]) -> list[str]:
    """An eval of a compiled replay edited by ``edit``, its sha256 recomputed as a
    tool that writes compiled suites itself would."""
    source = write(tmp / "src" / "r.yaml", REPLAY)
    text = compile_sources(load_sources([source]))[source]
    obj = json.loads(text)
    edit(obj)
    obj["sha256"] = Scenario.from_json(obj).sha256
    suite = write(tmp / "s" / "r.jsonl", json.dumps(obj) + "\n")
    return ["eval", "--config", str(config(tmp, [str(suite)])), "--out", str(tmp / "r")]


def turn(k: int, **fields: Any) -> Callable[[dict[str, Any]], None]:
    def go(obj: dict[str, Any]) -> None:
        obj["turns"][k].update(fields)

    return go


def without_t(obj: dict[str, Any]) -> None:
    del obj["turns"][1]["t"]


def request_file(tmp: Path, strategy: Any) -> Path:
    body = {"items": [{"id": "a", "text": "deploy"}], "budget_tokens": 8, "strategy": strategy}
    return write(tmp / "req.json", json.dumps(body))


def check_mirror(tmp: Path, mirror: Callable[[Path], None]) -> list[str]:
    source = write(tmp / "sc" / "trust.yaml", (ROOT / "scenarios" / "trust.yaml").read_text())
    mirror(tmp / "sc" / "compiled" / "trust.jsonl")
    return ["scenarios", "check", str(source)]


def not_utf8(path: Path) -> None:
    write(path, b'{"id": "x\xff"}\n')


def a_directory(path: Path) -> None:
    path.mkdir(parents=True)


# (id, argv builder, what the one line says)
CASES: list[tuple[str, Callable[[Path], list[str]], str]] = [
    (
        "compare-cell-twice",
        lambda t: two_runs(t, edit_cells(lambda rows: [*rows, rows[1]])),
        "line 5 /key: a cell recorded twice (first on line 2)",
    ),
    (
        "compare-metric-not-a-number",
        lambda t: two_runs(t, edit_cells(set_field("evidence_recall", "high"))),
        "line 3 /evidence_recall: not a finite number",
    ),
    (
        "compare-metric-infinite",
        lambda t: two_runs(t, edit_cells(set_field("evidence_recall", "inf"))),
        "line 3 /evidence_recall: not a finite number",
    ),
    (
        "compare-turn-not-a-number",
        lambda t: two_runs(t, edit_cells(set_field("turn", "-1"))),
        "line 3 /turn: not a turn number",
    ),
    (
        "compare-row-short",
        lambda t: two_runs(t, edit_cells(lambda rows: [*rows, rows[1][:3]])),
        "line 5: a row of another width than the header",
    ),
    (
        "compare-resamples-huge",
        lambda t: two_runs(t, edit_summary(bootstrap_resamples=10**9)),
        "/manifest/bootstrap_resamples: the candidate run (B) summary violates",
    ),
    (
        "compare-seed-negative",
        lambda t: two_runs(t, edit_summary(seed=-1)),
        "/manifest/seed",
    ),
    (
        "compare-summary-wrong-type",
        lambda t: two_runs(t, edit_summary(suites="s.jsonl")),
        "/manifest/suites",
    ),
    (
        "compare-label-not-text",
        lambda t: two_runs(t, edit_summary_field(lambda s: s["strategies"][0].update(label=[1]))),
        "/strategies/0/label",
    ),
    (
        "compare-strategy-listed-twice",
        lambda t: two_runs(
            t, edit_summary_field(lambda s: s.update(strategies=s["strategies"] * 2))
        ),
        "/strategies/1: the candidate run (B) summary lists a strategy twice",
    ),
    (
        "compare-budget-listed-twice",
        lambda t: two_runs(t, edit_summary_field(lambda s: s.update(budgets=[16, 16]))),
        "/budgets: the candidate run (B) summary violates",
    ),
    ("gate-significance-cell-twice", gate_significance, "a cell recorded twice"),
    (
        "gate-baseline-mean-below-its-range",  # F21: a mean no run can fall below
        lambda t: gate_on_baseline(t, metric(1, "evidence_recall", "mean", -1.0)),
        "/groups/1/metrics/evidence_recall/mean: the baseline summary's evidence_recall is out "
        "of its range (expected a number in [0, 1], found -1.0)",
    ),
    (
        "gate-baseline-count-below-zero",
        lambda t: gate_on_baseline(t, metric(0, "tokens_used", "high", -3)),
        "/groups/0/metrics/tokens_used/high: the baseline summary's tokens_used is out of its "
        "range (expected a number >= 0, found -3)",
    ),
    (
        "gate-baseline-group-cells-negative",
        lambda t: gate_on_baseline(t, lambda s: s["groups"][0].update(cells=-1)),
        "/groups/0/cells: the baseline summary violates eval-summary.v1.json",
    ),
    (
        "compare-metric-out-of-its-range",
        lambda t: two_runs(t, edit_cells(set_field("evidence_recall", "1.5"))),
        "line 3 /evidence_recall: evidence_recall out of its range (expected a number in [0, 1], "
        'found "1.5")',
    ),
    (
        "gate-significance-cells-a-gzip-bomb",  # F22: 2 GB of memory before the refusal
        lambda t: gate_significance(t, gzip_bomb),
        "metrics.csv.gz: line 2: a line too long for a metrics.csv",
    ),
    (
        "gate-resamples-huge",
        lambda t: gate_significance(t, edit_summary(bootstrap_resamples=10**9)),
        "/manifest/bootstrap_resamples: the current summary violates",
    ),
    (
        "cache-one-id-two-token-counts",
        lambda t: trace(
            t,
            {"chain": "c", "t": 0, "segments": [["a", 2000]]},
            {"chain": "c", "t": 1, "segments": [["a", 150], ["b", 10]]},
        ),
        "line 2 /segments/0/1: segment 'a' has another token count",
    ),
    (
        "cache-time-decreasing",
        lambda t: trace(
            t,
            {"chain": "c", "t": 5, "segments": [["a", 1]]},
            {"chain": "c", "t": 4, "segments": [["a", 1]]},
        ),
        "line 2 /t: out of time order",
    ),
    (
        "cache-time-is-text",
        lambda t: trace(t, {"chain": "c", "t": "5", "segments": [["a", 1]]}),
        "line 1 /t: not a time",
    ),
    (
        "cache-trace-is-a-directory",
        lambda t: ["cache", "simulate", str(t), "--profile", "anthropic"],
        "cannot read file",
    ),
    (
        "eval-static-prefix-huge",
        lambda t: [
            "eval",
            "--config",
            str(config(t, [str(SUITE)], cache={"static_prefix_tokens": [10**19]})),
        ],
        "/cache/static_prefix_tokens/0: schema violation",
    ),
    (
        "eval-budget-twice",
        lambda t: ["eval", "--config", str(config(t, [str(SUITE)], budgets=[16, 16]))],
        "/budgets: schema violation",
    ),
    (
        "eval-confidence-nan",
        lambda t: [
            "eval",
            "--config",
            str(
                write(
                    t / "c.yaml",
                    f"suites: [{SUITE}]\nstrategies: [chronological]\n"
                    "bootstrap: {confidence: .nan}\n",
                )
            ),
        ],
        "c.yaml: line 3 /bootstrap/confidence: not a finite number",
    ),
    (
        "eval-resamples-huge",
        lambda t: [
            "eval",
            "--config",
            str(config(t, [str(SUITE)], bootstrap={"resamples": 10**9})),
        ],
        "/bootstrap/resamples: schema violation",
    ),
    (
        "compiled-replay-time-decreasing",
        lambda t: replay_suite(t, turn(2, t=5)),
        "line 1 /turns/2/t: replay steps out of time order",
    ),
    (
        "compiled-replay-time-is-text",
        lambda t: replay_suite(t, turn(1, t="10")),
        "line 1 /turns/1/t: not a compiled scenario",
    ),
    (
        "compiled-replay-time-missing",
        lambda t: replay_suite(t, without_t),
        "line 1 /turns/1: a replay step needs its time t",
    ),
    (
        "compiled-probe-not-a-flag",
        lambda t: replay_suite(t, turn(3, probe="yes")),
        "line 1 /turns/3/probe: not a compiled scenario",
    ),
    (
        "compiled-probe-adds-items",
        lambda t: replay_suite(t, turn(2, probe=True)),
        "line 1 /turns/2: a probe does not advance the conversation",
    ),
    (
        "compiled-relevant-not-an-item",
        lambda t: replay_suite(t, turn(3, relevant=["m9"])),
        "line 1 /turns/3/relevant: relevant id 'm9' is not an item",
    ),
    (
        "compiled-items-upto-past-the-items",
        lambda t: replay_suite(
            t, lambda obj: obj["turns"][3]["request"].update(items_upto=len(obj["items"]) + 1)
        ),
        "line 1 /turns/3/request/items_upto",
    ),
    (
        "pack-param-over-params-that-are-text",
        lambda t: [
            "pack",
            str(request_file(t, {"name": "bm25", "params": "k1=2"})),
            "--param",
            "k1=3",
        ],
        "req.json: /strategy/params: wrong type",
    ),
    (
        "pack-param-over-a-nameless-strategy",
        lambda t: ["pack", str(request_file(t, {"params": {}})), "--param", "k1=3"],
        "req.json: /strategy: missing required field 'name'",
    ),
    (
        "compiled-expectation-spec-not-its-label",
        lambda t: replay_suite(t, turn(3, expect={"bm25(b=0.75)": {"must_include": ["m1"]}})),
        "line 1 /turns/3/expect/bm25(b=0.75): an expectation's spec is written as its label",
    ),
    (
        "compiled-expectation-spec-unknown-parameter",
        lambda t: replay_suite(t, turn(3, expect={"bm25(zz=1)": {"must_include": ["m1"]}})),
        "line 1 /turns/3/expect/bm25(zz=1): unknown parameter for strategy 'bm25'",
    ),
    ("scenarios-check-mirror-not-utf8", lambda t: check_mirror(t, not_utf8), "not UTF-8"),
    (
        "scenarios-check-mirror-a-directory",
        lambda t: check_mirror(t, a_directory),
        "cannot read compiled scenarios",
    ),
]


@pytest.mark.parametrize(("builder", "says"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_bad_field_is_one_line_and_exit_2(
    builder: Callable[[Path], list[str]],
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert_one_line_exit_2(builder, says, tmp_path, monkeypatch, capsys)


# ---------------------------------------------------------------- wrong figures, shown right


def test_a_yaml_date_in_a_profile_is_its_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shipped = (ROOT / "evals" / "data" / "cache-profiles.yaml").read_text("utf-8")
    mine = shipped.split("\nanthropic-1h:")[0].replace("anthropic:", "mine:", 1)
    dated = mine.replace('date: "2026-11"', "date: 2026-11-01").replace(
        "date: '2026-11'", "date: 2026-11-01"
    )
    assert "date: 2026-11-01" in dated  # unquoted: YAML 1.1 would make it a date object
    path = write(tmp_path / "p.yaml", dated)
    assert profile("mine", path).date == "2026-11-01"
    steps = write(tmp_path / "t.jsonl", '{"chain": "c", "t": 0, "segments": [["a", 2000]]}\n')
    argv = ["cache", "simulate", str(steps), "--profile", "mine", "--profiles", str(path)]
    assert main(argv) == 0 and '"written":2000' in capsys.readouterr().out
    # the same in an eval config's custom profiles
    custom = {"mine": {**vars(profile("anthropic")), "date": "x"}}
    cfg = write(
        tmp_path / "c.yaml",
        f"suites: [{SUITE}]\nstrategies: [chronological]\ncache:\n  custom_profiles:\n"
        + "".join(
            f"    {name}:\n"
            + "".join(f"      {k}: {json.dumps(v)}\n" for k, v in fields.items() if k != "date")
            + "      date: 2026-11-01\n"
            for name, fields in custom.items()
        ),
    )
    from packproof.evals.run.config import load_config

    assert load_config(cfg).cache_profiles["mine"].date == "2026-11-01"


def test_integers_given_as_floats_are_integers_in_the_run(tmp_path: Path) -> None:
    cfg = config_from(
        {
            "suites": [str(SUITE)],
            "strategies": ["chronological"],
            "budgets": [16.0],
            "seed": 3.0,
            "bootstrap": {"resamples": 200.0},
            "cache": {"static_prefix_tokens": [2000.0]},
        },
        tmp_path,
    )
    figures = (cfg.budgets, cfg.seed, cfg.resamples, cfg.static_prefix_tokens)
    assert figures == ((16,), 3, 200, (2000,))
    assert all(type(x) is int for x in (*cfg.budgets, cfg.seed, cfg.resamples))


def test_a_cell_twice_in_metrics_csv_is_refused_not_counted_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A: a 0.0, b 1.0; B: a 1.0, b 1.0, and a's row repeated. Counted twice, the
    # mean of B would be (1 + 1 + 1) / 3 over pairs a, a, b: it must be refused.
    a = write_run(
        tmp_path / "A", [cell("a", 0, evidence_recall=0.0), cell("b", 0, evidence_recall=1.0)]
    )
    rows = [cell("a", 0, evidence_recall=1.0), cell("b", 0, evidence_recall=1.0)]
    b = write_run(tmp_path / "B", [*rows, rows[0]])
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "cmp")]) == 2
    assert "a cell recorded twice" in capsys.readouterr().err
    assert not (tmp_path / "cmp").exists()


def test_the_baselines_gzip_cells_are_read_whole(tmp_path: Path) -> None:
    from packproof.evals.compare.pairs import load_cells

    cells = load_cells(ROOT / "reports" / "baseline" / "summary.json", "baseline")
    with gzip.open(ROOT / "reports" / "baseline" / "metrics.csv.gz", "rt", newline="") as f:
        rows = [r for r in csv.DictReader(f) if not r["key"].startswith("replay|")]
    assert len(cells.frame) == len(rows)
    assert not cells.frame.duplicated(["suite", "scenario", "turn", "label", "budget"]).any()


def test_a_compiled_replay_as_compiled_is_read_back_as_a_replay(tmp_path: Path) -> None:
    source = write(tmp_path / "r.yaml", REPLAY)
    text = compile_sources(load_sources([source]))[source]
    (scenario,) = load_compiled(write(tmp_path / "s" / "r.jsonl", text))
    assert scenario.replay and [t.probe for t in scenario.turns] == [False, False, False, True]


def test_a_compiled_line_is_read_whole_whatever_line_separators_its_texts_hold(
    tmp_path: Path,
) -> None:
    """JSON writes U+2028, U+2029 and U+0085 unescaped; str.splitlines() would end a
    line there, so a compiled mirror is split at "\\n" only."""
    text = "para\u2028graph\u2029end\x85next"
    source = write(tmp_path / "u.yaml", REPLAY.replace("hello there", json.dumps(text)))
    mirror = write(tmp_path / "s" / "u.jsonl", compile_sources(load_sources([source]))[source])
    (scenario,) = load_compiled(mirror)
    assert scenario.turns[0].request["items"][0]["text"] == text
    assert main(["scenarios", "check", str(source), "--out", str(mirror.parent)]) == 0
