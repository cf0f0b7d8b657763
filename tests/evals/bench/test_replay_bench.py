"""The replay bench's long chat: each spec's replay timed in a fresh process
(as a pool's worker runs its task), the specs run in turn, each figure the best
of its runs and every run written beside it."""

from __future__ import annotations

from packproof.evals.bench.replay import CHITCHAT_REPEATS, measure_chitchat


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
