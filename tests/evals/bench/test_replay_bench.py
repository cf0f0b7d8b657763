"""The replay bench's long chat: each spec's replay timed in a fresh process
(as a pool's worker runs its task), the specs run in turn, each figure the best
of its runs and every run written beside it; the reports of a run timed in a
fresh process as the eval writes them."""

from __future__ import annotations

from pathlib import Path

from packproof.evals.bench.replay import CHITCHAT_REPEATS, measure_chitchat
from packproof.evals.bench.reports import reports_alone
from tests.evals.run.test_replay import _run


def test_the_long_replay_is_the_best_of_its_runs_each_in_a_fresh_process() -> None:
    report = measure_chitchat(40)
    assert report is not None
    runs = report["runs_seconds"]
    assert list(runs) == report["specs"]
    assert all(len(seconds) == CHITCHAT_REPEATS for seconds in runs.values())
    assert all(v > 0 for seconds in runs.values() for v in seconds)
    assert report["seconds"] == {spec: min(seconds) for spec, seconds in runs.items()}
    requests = report["steps"] + report["probes"]
    rates = {spec: requests / v for spec, v in report["seconds"].items()}
    assert report["steps_per_second"] == rates
    assert [(t["target"], t["measured"]) for t in report["targets"]] == [
        (f"40-message replay, {spec}", rate) for spec, rate in rates.items()
    ]


def test_the_reports_are_timed_in_a_fresh_process_writing_what_the_eval_wrote(
    tmp_path: Path,
) -> None:
    run_dir = _run(tmp_path)  # an eval of a replay, priced under two profiles
    seconds = reports_alone(tmp_path / "cfg.yaml", run_dir, tmp_path / "again", jobs=1)
    assert seconds > 0
    for name in ("metrics.csv", "summary.md", "junit.xml"):
        assert (tmp_path / "again" / name).read_bytes() == (run_dir / name).read_bytes(), name
