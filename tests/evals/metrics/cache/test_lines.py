"""The quick line checks of ``packproof cache simulate`` (lines.py) change nothing
but speed: every trace, good or bad, gives the same output, error and exit code
with them as through the strict walk alone; a trace read, checked and priced a
batch at a time equals the model's reference path (``price_chain``) step by step,
probes, breakpoints, static prefixes and interleaved chains included; and the
ids' codes, read back as numbers to check token counts, hold past one character."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from packproof.cli import main
from packproof.evals.metrics.cache import files
from packproof.evals.metrics.cache.files import BATCH_LINES, load_profiles
from packproof.evals.metrics.cache.model import Step, price_chain
from packproof.evals.metrics.cache.prompts import CODE_BASE, code
from packproof.packer.jsonio import dumps

PROFILES = load_profiles()


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code_ = main(argv)
    captured = capsys.readouterr()
    return code_, captured.out, captured.err


def good_trace(rng: random.Random, lines: int, chains: int = 3) -> list[dict[str, Any]]:
    """Interleaved chains that grow, drop and recall items, with static prefixes,
    probes, the caller's breakpoints, integer and float times, long gaps."""
    state = {f"c{i}": {"t": 0.0, "items": [], "made": 0} for i in range(chains)}
    out: list[dict[str, Any]] = []
    for _ in range(lines):
        name = rng.choice(list(state))
        chain: dict[str, Any] = state[name]
        chain["t"] = round(chain["t"] + rng.choice([0, 1, 5.5, 299, 300, 301, 3601]), 1)
        if rng.random() < 0.7 or not chain["items"]:
            chain["made"] += 1
            item = [f"{name}-{chain['made']}", rng.choice([0, 1, 2, 40, 700, 1500])]
            chain["items"].insert(rng.randrange(len(chain["items"]) + 1), item)
        if rng.random() < 0.15 and len(chain["items"]) > 2:
            del chain["items"][rng.randrange(len(chain["items"]))]
        segments = [["system", 1100], *chain["items"]]
        record: dict[str, Any] = {"chain": name, "t": chain["t"], "segments": segments}
        if rng.random() < 0.6:
            record["static_segments"] = rng.randint(0, 2)
        if rng.random() < 0.2:
            record["probe"] = rng.random() < 0.8
        if rng.random() < 0.2:
            k = rng.randint(0, min(3, len(segments)))
            record["breakpoints"] = rng.sample(range(1, len(segments) + 1), k)
        if rng.random() < 0.2 and chain["t"] == int(chain["t"]):
            record["t"] = int(chain["t"])
        out.append(record)
    return out


def text(record: Any, compact: bool = True) -> str:
    """A line as ``dumps`` writes it (whose prompts reuse.py reads without their
    chain's last one), or as ``json.dumps`` does by default (read whole)."""
    return dumps(record) if compact else json.dumps(record)


def write(tmp_path: Path, lines: list[Any], compact: bool = True) -> str:
    path = tmp_path / "trace.jsonl"
    path.write_text("".join((x if isinstance(x, str) else text(x, compact)) + "\n" for x in lines))
    return str(path)


@pytest.mark.parametrize("name", ["anthropic", "openai", "anthropic-pessimistic"])
def test_a_trace_priced_a_batch_at_a_time_equals_the_model_step_by_step(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prof = PROFILES[name]
    lines = good_trace(random.Random(7), BATCH_LINES + 300)
    code_, out, err = run(["cache", "simulate", write(tmp_path, lines), "--profile", name], capsys)
    assert (code_, err) == (0, "")
    got = out.splitlines()[: len(lines)]
    chains: dict[str, list[int]] = {}
    for k, record in enumerate(lines):
        chains.setdefault(record["chain"], []).append(k)
    expected: list[str] = [""] * len(lines)
    for indices in chains.values():
        marks = [
            lines[k].get("breakpoints") if prof.mode == "breakpoints" else None for k in indices
        ]
        steps = [
            Step(
                lines[k]["t"],
                [tuple(s) for s in lines[k]["segments"]],
                lines[k].get("static_segments", 0),
                lines[k].get("probe", False),
                mark,
            )
            for k, mark in zip(indices, marks, strict=True)
        ]
        for k, cost in zip(indices, price_chain(steps, prof), strict=True):
            fields = {
                "cached": cost.cached,
                "written": cost.written,
                "uncached": cost.uncached,
                "cost": cost.cost,
                "prefix_break": cost.prefix_break,
            }
            expected[k] = dumps(lines[k] | fields)
    assert got == expected


def mutations() -> dict[str, Any]:
    """A bad (or odd but good) line, as a change to a good line's record or text."""

    def seg(value: Any) -> Any:
        return lambda r: r["segments"].append(value)

    def key(name: str, value: Any) -> Any:
        return lambda r: r.__setitem__(name, value)

    def edit(old: str, new: str) -> Any:
        return lambda line: line.replace(old, new, 1)

    def last(old: str, new: str) -> Any:
        return lambda line: new.join(line.rsplit(old, 1))

    return {
        "bool-count": seg(["x", True]),
        "false-count": seg(["x", False]),
        "float-count": seg(["x", 1.0]),
        "negative-count": seg(["x", -1]),
        "string-count": seg(["x", "3"]),
        "int-id": seg([1, 3]),
        "bool-id": seg([True, 3]),
        "list-id": seg([["a"], 3]),
        "three-items": seg(["x", 3, 4]),
        "one-item": seg(["x"]),
        "string-segment": seg("ab"),
        "object-segment": seg({"a": 1, "b": 2}),
        "null-segment": seg(None),
        "count-past-63-bits": seg(["x", 2**63]),
        "count-past-64-bits": seg(["x", 2**70]),
        "sum-past-63-bits": lambda r: r["segments"].extend([["b1", 2**62], ["b2", 2**62]]),
        "another-count": seg(["system", 5]),
        "two-counts-in-a-line": lambda r: r["segments"].extend([["d", 5], ["d", 6]]),
        "one-id-twice": lambda r: r["segments"].extend([["d", 5], ["d", 5]]),
        "odd-id": seg(['a"b\\c]],"true', 7]),
        "no-segments": key("segments", []),
        "bool-time": key("t", True),
        "string-time": key("t", "1"),
        "early-time": key("t", -5),
        "int-chain": key("chain", 3),
        "int-probe": key("probe", 1),
        "static-past": key("static_segments", 99),
        "bool-static": key("static_segments", True),
        "zero-breakpoint": key("breakpoints", [0]),
        "repeated-breakpoints": key("breakpoints", [1, 1, 1]),
        "five-breakpoints": key("breakpoints", [1, 2, 3, 4, 5]),
        "bool-breakpoint": key("breakpoints", [True]),
        "unknown-key": key("extra", 1),
        "tiny-time": key("t", 5e-05),
        "long-time": key("t", 0.1234567891234),
        "repeated-key": edit('"t":', '"t":1,"t":'),
        "spaces": edit('"segments":[', '"segments" : [ '),
        "time-past-64-bits-spaced": edit('"t":', '"t" : 18446744073709551616, "x":'),
        "truncated": lambda line: line[:-3],
        "lone-surrogate": edit('"chain"', '"chain":"\\ud800","y"'),
        "count-past-64-bits-text": edit("1100", "18446744073709551616"),
        "minus-zero": edit("1100", "-0"),
        "exponent-count": edit("1100", "1.1e3"),
        "escaped-id": edit('"system"', '"syst\\u0065m"'),
        "colon-in-id": edit('"system"', '"sys:tem"'),
        "trailing-comma": last("]]", "],]"),
        "space-in-the-new-segments": last("],[", "], ["),
        "a-number-among-the-segments": last("],[", "],1,["),
        "nested-segment": last("]]", "]]]]"),
        "segments-twice": edit('"segments":', '"segments":[["z",1]],"segments":'),
        "escaped-quote-in-chain": edit('"chain":"', '"chain":"q\\"'),
        "a-key-after-the-segments": last("]]", ']],"probe":true'),
    }


MUTATIONS = mutations()


@pytest.mark.parametrize("compact", [True, False], ids=["dumps", "json.dumps"])
@pytest.mark.parametrize("case", ["none", *sorted(MUTATIONS)])
def test_the_quick_checks_change_no_output_and_no_error(
    case: str,
    compact: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The quick checks and reading a prompt without its chain's last one (both
    # off when quick_step refuses every line) against the strict walk alone.
    rng = random.Random(case)
    lines: list[Any] = good_trace(rng, 40)
    where = rng.randrange(1, len(lines))
    change = MUTATIONS.get(case, lambda record: None)
    try:  # a change to the record, or else to the line's text
        change(lines[where])
    except (TypeError, AttributeError):
        lines[where] = change(text(lines[where], compact))
    path = write(tmp_path, lines, compact)
    for name in ("anthropic", "openai"):
        argv = ["cache", "simulate", path, "--profile", name]
        quick = run(argv, capsys)
        with monkeypatch.context() as patched:
            patched.setattr(files, "quick_step", lambda record: None)
            strict = run(argv, capsys)
        assert quick == strict
        if quick[0]:  # refused: one line naming the line
            assert quick[0] == 2 and quick[2].count("\n") == 1 and f"line {where + 1}" in quick[2]


def test_codes_are_two_characters_below_the_surrogates_and_distinct() -> None:
    numbers = [0, 1, CODE_BASE - 1, CODE_BASE, CODE_BASE + 1, CODE_BASE**2 - 1]
    codes = [code(n) for n in numbers]
    assert all(len(c) == 2 and max(map(ord, c)) < 0xD800 for c in codes)
    assert len(set(codes)) == len(codes) and codes == sorted(codes)
    with pytest.raises(ValueError, match="3 billion"):
        code(CODE_BASE**2)


def test_a_chain_of_more_ids_than_one_code_character_checks_and_prices_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    many = CODE_BASE + 500  # ids numbered past the first character's range
    first = [[f"s{k}", 1 + k % 7] for k in range(many)]
    lines = [
        {"chain": "c", "t": 0, "segments": first},
        {"chain": "c", "t": 1, "segments": [*first, ["new", 3]], "probe": True},
        {"chain": "c", "t": 2, "segments": [*first[: many - 10], ["late", 9]]},
    ]
    argv = ["cache", "simulate", write(tmp_path, lines), "--profile", "anthropic"]
    code_, out, err = run(argv, capsys)
    assert (code_, err) == (0, "")
    steps = [
        Step(r["t"], [tuple(s) for s in r["segments"]], 0, r.get("probe", False)) for r in lines
    ]
    rows = [json.loads(line) for line in out.splitlines()[:3]]
    assert [(r["cached"], r["written"], r["uncached"]) for r in rows] == [
        (c.cached, c.written, c.uncached) for c in price_chain(steps, PROFILES["anthropic"])
    ]
    bad = many - 3  # an id numbered past CODE_BASE given another count
    lines[2]["segments"] = [*first[:bad], [first[bad][0], 1000]]
    code_, out, err = run([*argv[:2], write(tmp_path, lines), *argv[3:]], capsys)
    assert code_ == 2 and out == "" and f"line 3 /segments/{bad}/1" in err
    assert f"{first[bad][1]}, its count before" in err


def test_a_time_past_64_bits_after_spaced_keys_is_read_as_the_strict_reader_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = '{"chain" : "c", "t" : 18446744073709551616, "segments" : [["a", 2000]]}'
    code_, out, err = run(
        ["cache", "simulate", write(tmp_path, [line]), "--profile", "openai"], capsys
    )
    assert (code_, err) == (0, "") and '"t":18446744073709551616,' in out


def test_prompts_that_extend_their_chains_last_are_read_without_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = good_trace(random.Random(11), 300)
    path = write(tmp_path, lines)
    argv = ["cache", "simulate", path, "--profile", "anthropic"]
    extend, short = files._extend, []

    def counted(*args: Any) -> Any:
        step = extend(*args)
        short.append(step is not None)
        return step

    monkeypatch.setattr(files, "_extend", counted)
    read_short = run(argv, capsys)
    monkeypatch.setattr(files, "quick_step", lambda record, before=0: None)
    assert read_short == run(argv, capsys) and read_short[0] == 0
    assert sum(short) > 50  # (grown at the end, the same, or probed prompts)
