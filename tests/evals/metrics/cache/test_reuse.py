"""Reading a prompt without the runs of its chain's last prompt that it repeats
(reuse.py) changes nothing but speed: prompts that drop the oldest segments,
replace or insert a few in the middle, change the first one, or repeat the last
one whole, good or bad, give the same output, error and exit code as the strict
walk alone; and the runs are found where they are there to find."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from packproof.cli import main
from packproof.evals.metrics.cache import files, reuse
from packproof.evals.metrics.cache.prompts import CODE_BASE
from packproof.evals.metrics.cache.reuse import Last, split
from packproof.packer.jsonio import dumpb, dumps


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code_ = main(argv)
    captured = capsys.readouterr()
    return code_, captured.out, captured.err


def edited_trace(rng: random.Random, lines: int) -> list[dict[str, Any]]:
    """Two interleaved chains whose prompts change from one step to the next as
    conversations and buffers do: items appended, the oldest dropped, one or a
    few replaced or inserted in the middle, the first changed, a recalled item
    placed again, the same prompt again; probes, breakpoints, static prefixes."""
    state = {c: {"t": 0.0, "items": [], "made": 0, "seen": []} for c in ("a", "b")}
    out: list[dict[str, Any]] = []
    for _ in range(lines):
        name = rng.choice(list(state))
        chain: dict[str, Any] = state[name]
        items: list[list[Any]] = chain["items"]

        def item(c: dict[str, Any] = chain, n: str = name) -> list[Any]:
            c["made"] += 1
            c["seen"].append([f"{n}-{c['made']}", rng.randint(0, 90)])
            return c["seen"][-1]

        edit = rng.randrange(8)
        if edit == 0 or len(items) < 4:
            items += [item() for _ in range(rng.randint(1, 3))]
        elif edit == 1:  # the oldest dropped, one or two appended
            del items[: rng.randint(1, 3)]
            items += [item() for _ in range(rng.randint(0, 2))]
        elif edit == 2:  # one to six replaced or inserted in the middle
            at = rng.randrange(1, len(items))
            items[at : at + rng.randint(0, 1)] = [item() for _ in range(rng.randint(1, 6))]
        elif edit == 3:  # a recalled item placed again
            items.insert(rng.randrange(len(items)), list(rng.choice(chain["seen"])))
        elif edit == 4:  # the first one changed
            items[0] = item()
        elif edit == 5 and len(items) > 6:  # a run from the middle removed
            at = rng.randrange(1, len(items) - 3)
            del items[at : at + 2]
        chain["t"] = round(chain["t"] + rng.choice([0, 1, 5.5, 301]), 1)
        record: dict[str, Any] = {
            "chain": name,
            "t": chain["t"],
            "segments": [["system", 500], *items] if rng.random() < 0.8 else list(items),
        }
        if rng.random() < 0.3:
            record["static_segments"] = 1
        if rng.random() < 0.1:
            record["probe"] = True
        if rng.random() < 0.1:
            record["breakpoints"] = [len(record["segments"])]
        out.append(record)
    return out


def write(tmp_path: Path, lines: list[Any]) -> str:
    path = tmp_path / "trace.jsonl"
    path.write_text("".join((x if isinstance(x, str) else dumps(x)) + "\n" for x in lines))
    return str(path)


def both(
    path: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    """The command's result, asserted the same as the strict walk's alone."""
    results = []
    for name in ("anthropic", "openai"):
        argv = ["cache", "simulate", path, "--profile", name]
        quick = run(argv, capsys)
        with monkeypatch.context() as patched:
            patched.setattr(files, "quick_step", lambda record, before=0: None)
            assert run(argv, capsys) == quick
        results.append(quick)
    return results[0]


def test_edited_prompts_are_read_as_the_strict_walk_reads_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = edited_trace(random.Random(5), 600)
    pieces: list[Any] = []
    extend = files._extend

    def counted(*args: Any) -> Any:
        step = extend(*args)
        pieces.append(args[-1] if step is not None else "whole")
        return step

    monkeypatch.setattr(files, "_extend", counted)
    code_, out, err = both(write(tmp_path, lines), capsys, monkeypatch)
    assert (code_, err) == (0, "") and len(out.splitlines()) == len(lines) + 2
    spliced = [p for p in pieces if isinstance(p, tuple)]
    assert sum(p[1] != b"" for p in spliced) > 20  # new segments between the runs
    assert sum(p[1] == b"" for p in spliced) > 20  # the oldest dropped
    assert any(p[0] == 0 for p in spliced)  # the first segment changed


def splice_cases() -> dict[str, str]:
    """A bad (or odd but good) third line, whose prompt repeats runs of the second."""
    return {
        "good": '["a",1],["x",5],["c",3],["d",4]',
        "dropped": '["c",3],["d",4],["e",5]',
        "inserted": '["a",1],["b",2],["x",5],["y",6],["c",3],["d",4]',
        "first-changed": '["z",1],["b",2],["c",3],["d",4]',
        "too-many-between": '["a",1],["p",1],["q",1],["r",1],["s",1],["u",1],["c",3]',
        "space-between": '["a",1], ["x",5] ,["c",3],["d",4]',
        "two-commas": '["a",1],,["c",3],["d",4]',
        "comma-and-none": '["a",1],["x",5],["c",3],["d",4],',
        "another-count-between": '["a",1],["x",5],["b",9],["c",3],["d",4]',
        "another-count-after": '["a",1],["x",5],["c",3],["d",4],["x",6]',
        "repeated-between": '["a",1],["x",5],["x",6],["c",3],["d",4]',
        "bad-count-between": '["a",1],["x",-5],["c",3],["d",4]',
        "float-count-between": '["a",1],["x",5.0],["c",3],["d",4]',
        "id-not-a-string-between": '["a",1],[7,5],["c",3],["d",4]',
        "three-items-between": '["a",1],["x",5,6],["c",3],["d",4]',
        "object-between": '["a",1],{"x":5,"y":6},["c",3],["d",4]',
        "null-between": '["a",1],null,["c",3],["d",4]',
        "nested-between": '["a",1],[["x",5]],["c",3],["d",4]',
        "quote-between": '["a",1],["x\\"",5],["c",3],["d",4]',
        "bracket-in-an-id": '["a",1],["x]",5],["c",3],["d",4]',
        "id-ending-with-comma-bracket": '["a",1],["x,[",5],["c",3],["d",4]',
        "past-the-static-prefix": '["a",1],["x",5],["c",3],["d",4]","static_segments":9,"z":"',
        "breakpoint-past-the-end": '["a",1],["x",5]],"breakpoints":[7],"q":[["c",3]',
        "unclosed": '["a",1],["x",5],["c",3],["d",4]]',
    }


@pytest.mark.parametrize("case", sorted(splice_cases()))
def test_a_prompt_read_without_its_runs_gives_what_reading_it_whole_gives(
    case: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reuse, "_SPLICED", 1)  # (short prompts are read whole)
    first = '{"chain":"c","segments":[["a",1],["b",2],["c",3]],"t":1}'
    second = '{"chain":"c","segments":[["a",1],["b",2],["c",3],["d",4]],"t":2}'
    third = '{"chain":"c","segments":[' + splice_cases()[case] + '],"t":3}'
    if case == "unclosed":
        third = third[:-3]
    code_, out, err = both(write(tmp_path, [first, second, third]), capsys, monkeypatch)
    if code_:
        assert code_ == 2 and err.count("\n") == 1 and "line 3" in err
    else:
        assert json.loads(out.splitlines()[2])["segments"] == json.loads(third)["segments"]


def test_the_runs_are_found_where_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reuse, "_SPLICED", 1)
    segments = [["s", 9], *[[f"i{k}", k] for k in range(40)]]
    text = dumpb(segments)
    last = Last(text, "".join(chr(0) + chr(k) for k in range(41)), b"", 0)
    lasts = {"c": last}

    def line(segs: list[Any]) -> bytes:
        return dumpb({"chain": "c", "t": 1, "segments": segs})

    dropped = split(line([segments[0], *segments[5:], ["new", 1]]), lasts)
    assert dropped is not None and dropped[3] == (1, b"", 5, 41)
    assert dropped[2] == b'{"chain":"c","segments":[["new",1]],"t":1}'
    replaced = [*segments[:20], ["x", 1], ["y", 2], *segments[21:]]
    middle = split(line(replaced), lasts)
    assert middle is not None and middle[3] == (20, b'["x",1],["y",2]', 21, 41)
    assert middle[2] == b'{"chain":"c","segments":[],"t":1}'
    extended = split(line([*segments, ["z", 3]]), lasts)
    assert extended is not None and extended[3] is None
    assert split(line([["q", 1], ["r", 1], *segments[2:]]), lasts) is not None
    far = [*segments[:10], *[[f"n{k}", 1] for k in range(5)], *segments[10:]]
    assert split(line(far), lasts) is None  # more new segments than are looked past
    monkeypatch.setattr(reuse, "_SPLICED", 64)
    assert split(line(replaced), lasts) is None  # a short prompt: read whole
    odd = Last(dumpb([["a,[", 1], ["b", 2], ["c", 3]]), "\0\0\0\1\0\2", b"", 0)
    assert odd.segment_starts() == odd.segment_starts() and not len(odd.segment_starts())
    monkeypatch.setattr(reuse, "_SPLICED", 1)
    assert split(line([["a,[", 1], ["c", 3]]), {"c": odd}) is None


@pytest.mark.parametrize("case", ["good", "another-count", "id-not-a-string", "past-one-char"])
def test_many_new_ids_in_a_line_are_numbered_and_checked_as_one_at_a_time(
    case: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Ids new to the chain, many in a line and some twice, are numbered at once
    # (lines.encode) and their counts recorded from their first places.
    rng = random.Random(case)
    start = CODE_BASE - 20 if case == "past-one-char" else 0
    first = [[f"s{k}", 1 + k % 5] for k in range(start)] or [["s", 3]]
    lines: list[Any] = [{"chain": "c", "t": 0, "segments": first}]
    for step in range(1, 6):
        fresh = [[f"n{step}-{k}", rng.randint(0, 9)] for k in range(30)]
        again = [list(rng.choice(fresh)) for _ in range(5)]
        segments = [*first[-3:], *fresh, *again]
        rng.shuffle(segments)
        lines.append({"chain": "c", "t": step, "segments": segments})
    bad = lines[3]["segments"]
    if case == "another-count":  # a new id's second place with another count
        twice = next(s for s in bad if bad.count(s) > 1)
        bad[len(bad) - 1 - bad[::-1].index(twice)] = [twice[0], twice[1] + 1]
    elif case == "id-not-a-string":
        bad[17] = [17, 3]
    code_, out, err = both(write(tmp_path, lines), capsys, monkeypatch)
    if case in ("good", "past-one-char"):
        assert (code_, err) == (0, "") and len(out.splitlines()) == len(lines) + 1
    else:
        assert code_ == 2 and "line 4 /segments/" in err
