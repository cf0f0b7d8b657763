"""The journal's compact replay records: a step's pack stored as what changed
from its chain's step before, the cache figures once per chain in columns, and
every record read back as the runner made it (in the journal's canonical
JSON, as a whole record is stored); a compact line that does
not resolve is one clear error naming its line."""

from __future__ import annotations

import copy
import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from packproof.evals.report.model import order_records
from packproof.evals.report.replay import build_replay
from packproof.evals.report.stats import mean_ci
from packproof.evals.run import journal
from packproof.evals.run.compact import CACHE_ROW
from packproof.evals.run.config import load_config
from packproof.evals.run.journal import Batch, gzip_member, read_results
from packproof.evals.run.packs import PACK_ROW, selected_ids
from packproof.evals.run.runner import run_task, tasks
from packproof.packer import InputError
from packproof.packer.jsonio import dumps
from tests.evals.run.test_cacheaware_eval import BM25, CHRONO, _config
from tests.journal import journal_lines

# plain and cache-aware chains, priced under a profile that takes a caller's
# breakpoints (placements) and one that does not, with and without a static prefix
SPECS = ["chronological", "bm25", CHRONO, BM25]
EXTRA = "  static_prefix_tokens: [0, 2000]\n"


def _records(tmp: Path) -> list[list[dict[str, Any]]]:
    """Each task's records, as the runner makes them."""
    path = _config(tmp, SPECS, EXTRA)
    path.write_text(
        path.read_text().replace("profiles: [anthropic]", "profiles: [anthropic, openai]")
    )
    config = load_config(path)
    profiles = tuple(config.cache_profiles.items())
    return [
        run_task(
            t,
            config.specs,
            config.budgets,
            profiles=profiles,
            static_prefix_tokens=config.static_prefix_tokens,
        )
        for t in tasks(config)
    ]


def _journal(tmp: Path, batches: list[list[dict[str, Any]]]) -> Path:
    path = tmp / "results.jsonl.gz"
    with path.open("wb") as sink:
        for batch in batches:
            Batch.of(copy.deepcopy(batch)).write(sink, set())
    return path


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in journal_lines(path)]


def test_records_read_back_exactly_as_the_runner_made_them(tmp_path: Path) -> None:
    batches = _records(tmp_path)
    path = _journal(tmp_path, batches)
    made = [r for batch in batches for r in batch]
    assert any("cache_placements" in r for r in made) and any(r["probe"] for r in made)
    back = read_results(path)
    assert [dumps(r) for r in back] == [dumps(r) for r in made]


def test_figures_kept_in_columns_are_journaled_as_whole_records_are(tmp_path: Path) -> None:
    # the workers' records carry their chain's figures as columns (CACHE_ROW):
    # the journal's bytes are those of the same records made whole
    path = _config(tmp_path, SPECS, EXTRA)
    config = load_config(path)
    profiles = tuple(config.cache_profiles.items())
    for task in tasks(config):
        rows = run_task(
            task,
            config.specs,
            config.budgets,
            profiles=profiles,
            static_prefix_tokens=config.static_prefix_tokens,
            whole=False,
        )
        whole = copy.deepcopy(rows)
        chains: dict[int, tuple[Any, list[dict[str, Any]]]] = {}
        for r in whole:
            if CACHE_ROW in r:
                figures, i = r.pop(CACHE_ROW)
                chains.setdefault(id(figures), (figures, []))[1].append(r)
                assert i == len(chains[id(figures)][1]) - 1
        assert chains
        for figures, records in chains.values():
            figures.spread(records)
        assert all("cache" in r for _, records in chains.values() for r in records)
        assert Batch.of(rows).member == Batch.of(whole).member


def test_a_journal_line_is_the_canonical_json_of_its_record(tmp_path: Path) -> None:
    # Batch.of leaves the fields that hold no float unwalked: each line is still
    # what the canonical encoder writes of the record (floats rounded and marked)
    for batch in _records(tmp_path):
        for r in batch:  # floats orjson would write otherwise than json does
            r["metrics"]["tail_retention"] = 1.5e-05
            r["latency_ms"] = 0.1234567891234
        lines = zlib.decompress(Batch.of(copy.deepcopy(batch)).member, 31).splitlines()
        encoded = journal.encode(copy.deepcopy(batch))
        assert lines == [dumps(obj).encode() for _, obj, _ in encoded]
        assert b"1.5e-05" in lines[0] and b"0.123456789," in lines[0]


def test_a_pack_is_stored_as_what_changed_and_figures_once_per_chain(tmp_path: Path) -> None:
    batches = _records(tmp_path)
    lines = _lines(_journal(tmp_path, batches))
    cells = [x for x in lines if "columns" not in x]
    assert all("segments" not in x and "cache" not in x and "pack_delta" in x for x in cells)
    chains = {(r["spec"], str(r["budget"])) for batch in batches for r in batch}
    columns = [x for x in lines if "columns" in x]
    assert len(columns) == len(chains)
    # a chronological chain under a 1,000-token budget keeps its prefix step to step
    # until it overflows: then its step stores only what it appended
    made = {r["key"]: r for batch in batches for r in batch}
    for x in cells:
        delta, whole = x["pack_delta"], made[x["key"]]["segments"]
        if "after" in delta:
            assert delta["keep"] > 0 and whole[delta["keep"] :] == delta["add"]
        else:
            assert delta["add"] == whole
    assert any("after" in x["pack_delta"] for x in cells)
    # the selected ids are named by the pack: its ids, or (a cache-aware pack's
    # own order) their positions in it
    assert all("selected" not in x for x in cells)
    forms = {type(x["pack_delta"]["selected"]) for x in cells}
    assert forms == {str, list}
    for x in cells:
        ids = [s[0] for s in made[x["key"]]["segments"]]
        selected = x["pack_delta"]["selected"]
        got = ids if selected == "pack" else [ids[i] for i in selected]
        assert got == made[x["key"]]["selected"]
    col = columns[0]["columns"]
    turns = col["turns"]
    anthropic = col["cache"]["anthropic"]["2000"]
    assert set(anthropic) == {"cached", "written", "uncached", "cost"}
    assert all(len(v) == len(turns) for v in anthropic.values())


def _edited(tmp: Path, edit: Any) -> Path:
    lines = _lines(_journal(tmp, _records(tmp)))
    edit(lines)
    path = tmp / "edited.jsonl.gz"
    path.write_bytes(gzip_member(json.dumps(x).encode() + b"\n" for x in lines))
    return path


def _whole(line: dict[str, Any], segments: Any) -> None:
    """A record stored whole (as a plain journal does), with these segments."""
    del line["pack_delta"]
    line["segments"] = segments


def _first_delta(lines: list[dict[str, Any]]) -> dict[str, Any]:
    return next(x for x in lines if "after" in x.get("pack_delta", {}))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda lines: _first_delta(lines)["pack_delta"].update(after=99),
            r"line \d+: pack_delta is relative to turn 99 of its chain, but the chain's step "
            r"before it in the file is turn \d",
        ),
        (
            lambda lines: _first_delta(lines)["pack_delta"].update(keep=10_000),
            r"line \d+: pack_delta keep must be 0\.\.\d+, found 10000",
        ),
        (
            lambda lines: _first_delta(lines)["pack_delta"].update(selected=[-1]),
            r'line \d+: pack_delta selected must be "pack" or positions in its pack of \d+ '
            r"segments, found \[-1\]",
        ),
        (
            lambda lines: _first_delta(lines).update(pack_delta=[1]),
            r"line \d+: pack_delta is not",
        ),
        (
            lambda lines: _whole(_first_delta(lines), "x"),
            r"line \d+: segments must be a list, found str",
        ),
        (
            lambda lines: _first_delta(lines)["pack_delta"].update(selected=[10_000]),
            r'line \d+: pack_delta selected must be "pack" or positions in its pack of \d+ '
            r"segments, found \[10000\]",
        ),
        (
            lambda lines: next(x for x in lines if "columns" in x)["columns"]["cache"]["anthropic"][
                "0"
            ]["cost"].pop(),
            r"line \d+: columns cache/anthropic/0: cached, written, uncached, cost must each "
            r"hold \d+ values, one per turn",
        ),
        (
            lambda lines: next(x for x in lines if "columns" in x).update(key="s/other|x|1#cache"),
            r"line \d+: the columns of 's/other\|x\|1#cache' name turns the file has no record of",
        ),
        (
            lambda lines: lines.remove(
                next(x for x in lines if "after" not in x.get("pack_delta", {"after": 0}))
            ),
            r"line \d+: pack_delta is relative to turn",
        ),
    ],
)
@pytest.mark.parametrize("whole", [True, False])
def test_a_compact_line_that_does_not_resolve_is_one_clear_error(
    tmp_path: Path, edit: Any, message: str, whole: bool
) -> None:
    path = _edited(tmp_path, edit)
    with pytest.raises(InputError, match=message):
        read_results(path, whole=whole)


def test_a_journal_that_stores_selected_whole_reads_the_same(tmp_path: Path) -> None:
    # as journals were written before the pack named the selected ids
    path = _journal(tmp_path, _records(tmp_path))
    lines = _lines(path)
    made = {r["key"]: r for r in read_results(path)}
    for x in lines:
        if "pack_delta" in x:
            del x["pack_delta"]["selected"]
            x["selected"] = made[x["key"]]["selected"]
    path.write_bytes(gzip_member(dumps(x).encode() + b"\n" for x in lines))
    assert [dumps(r) for r in read_results(path)] == [dumps(r) for r in made.values()]


def test_a_torn_batch_is_dropped_and_truncated_away(tmp_path: Path) -> None:
    batches = _records(tmp_path)
    first = Batch.of(copy.deepcopy(batches[0])).member
    second = Batch.of(copy.deepcopy(batches[1])).member
    path = tmp_path / "results.jsonl.gz"
    path.write_bytes(first + second[: len(second) // 2])  # a crash mid-write
    assert len(read_results(path)) == len(batches[0])
    assert path.read_bytes() == first


def test_a_resumed_batch_writes_only_what_the_journal_lacks(tmp_path: Path) -> None:
    batches = _records(tmp_path)
    full = Batch.of(copy.deepcopy(batches[0]))
    lines = zlib.decompress(full.member, 31).splitlines(keepends=True)
    half = len(batches[0]) // 2  # the records of a batch cut short, its columns not reached
    finished = set(full.keys[:half])
    path = tmp_path / "results.jsonl.gz"
    with path.open("wb") as sink:
        sink.write(gzip_member(lines[:half]))
        sink.flush()
        reader = journal.open_journal(path)  # a resume's reader follows what it appends
        written, text = Batch.of(copy.deepcopy(batches[0])).write(sink, finished)
        reader.feed(text)
    assert written == len(batches[0]) - half and text == b"".join(lines[half:])
    back = read_results(path)
    assert [dumps(r) for r in back] == [dumps(r) for r in batches[0]]
    followed, keys = reader.finish()
    assert [dumps(r) for r in followed] == [dumps(r) for r in back]
    assert keys == journal.read_journal(path)[1]


@pytest.mark.parametrize("whole", [True, False])
def test_a_reader_fed_each_batch_as_written_reads_what_the_file_holds(
    tmp_path: Path, whole: bool
) -> None:
    batches = _records(tmp_path)
    path = tmp_path / "results.jsonl.gz"
    reader = journal.Reader(path, whole=whole)
    with path.open("wb") as sink:
        for batch in batches:
            reader.feed(Batch.of(copy.deepcopy(batch)).write(sink, set())[1])
    followed, keys = reader.finish()
    back, file_keys = journal.read_journal(path, whole=whole)
    assert keys == file_keys and len(followed) == len(back) == sum(map(len, batches))
    if whole:
        assert [dumps(r) for r in followed] == [dumps(r) for r in back]
    else:  # figures and packs stay in their chains' columns and rows: the same values
        rows = (CACHE_ROW, PACK_ROW)
        for a, b in zip(followed, back, strict=True):
            assert {k: v for k, v in a.items() if k not in rows} == {
                k: v for k, v in b.items() if k not in rows
            }
            assert (CACHE_ROW in a) == (CACHE_ROW in b) and (PACK_ROW in a) == (PACK_ROW in b)
            if CACHE_ROW in a:
                assert a[CACHE_ROW][1] == b[CACHE_ROW][1]
                assert a[CACHE_ROW][0].columns == b[CACHE_ROW][0].columns
            if PACK_ROW in a:
                assert a[PACK_ROW][0].rows == b[PACK_ROW][0].rows


def _first_packs_whole(lines: list[dict[str, Any]]) -> None:
    """Each chain's packs that are not deltas stored whole in their records."""
    for line in lines:
        delta = line.get("pack_delta")
        if delta is None or "after" in delta:
            continue
        ids = [s[0] for s in delta["add"]]
        selected = delta.get("selected")
        if selected is not None:
            line["selected"] = ids if selected == "pack" else [ids[i] for i in selected]
        _whole(line, delta["add"])


@pytest.mark.parametrize("stored", ["compact", "first packs whole"])
def test_packs_left_as_rows_are_the_whole_records_packs(tmp_path: Path, stored: str) -> None:
    # what the reports read (whole=False): each replay record's pack as its
    # chain's row, made whole only when asked, one record or every one
    path = _journal(tmp_path, _records(tmp_path))
    if stored != "compact":
        path = _edited(tmp_path, _first_packs_whole)
    whole = read_results(path)
    rows = read_results(path, whole=False)
    assert not any("segments" in r for r in rows if PACK_ROW in r)
    assert sum(PACK_ROW in r or "segments" in r for r in rows) == sum(
        "segments" in r for r in whole
    )
    assert any(PACK_ROW in r for r in rows)
    for a, b in zip(rows, whole, strict=True):
        assert selected_ids(a) == b.get("selected")
        if PACK_ROW in a:
            packs, row = a[PACK_ROW]
            assert packs.segments(row) == b["segments"]
    reader = journal.open_journal(path, whole=False)  # asked whole at the end
    assert [dumps(r) for r in reader.finish(True)[0]] == [dumps(r) for r in whole]
    # written again (as a journal of records read so), the same lines
    again = tmp_path / "again.jsonl.gz"
    with again.open("wb") as sink:
        Batch.of(read_results(path, whole=False)).write(sink, set())
    assert [dumps(r) for r in read_results(again)] == [dumps(r) for r in whole]


def test_a_report_sums_the_columns_as_it_sums_whole_records(tmp_path: Path) -> None:
    """The report's replay statistics from records read without their figures made
    whole (each points into its chain's columns) equal those from whole records."""
    path = _journal(tmp_path, _records(tmp_path))
    config = load_config(tmp_path / "cfg.yaml")
    whole, columns = read_results(path), read_results(path, whole=False)
    assert not any("cache" in r for r in columns) and any(CACHE_ROW in r for r in columns)

    def replay(records: list[dict[str, Any]]) -> str:
        out = build_replay(
            order_records(records, config.specs, config.budgets),
            specs=config.specs,
            labels=config.labels,
            budgets=config.budgets,
            profiles=config.cache_profiles,
            static_prefix_tokens=config.static_prefix_tokens,
            stats=lambda values: mean_ci(values, 200, 0.95, 0),
        )
        assert out is not None and out["groups"]
        return dumps(out)

    assert replay(columns) == replay(whole)


def test_members_fed_a_few_bytes_at_a_time_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batches = _records(tmp_path)
    path = _journal(tmp_path, batches)
    whole = [dumps(r) for r in read_results(path)]
    monkeypatch.setattr(journal, "_CHUNK", 7)  # members span many chunks
    assert [dumps(r) for r in read_results(path)] == whole
    data = path.read_bytes()
    path.write_bytes(data[:-3])  # the last member torn
    assert len(read_results(path)) == len(whole) - len(batches[-1])
