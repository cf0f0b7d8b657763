"""The eval runner: cross suites x strategy specs x budgets into cells.

A cell (one turn of one scenario, one spec, one budget) is a pure function of
its inputs returning a record. Work is shipped per (scenario, turn): its request
is parsed once and packed under every spec and budget from the same item table,
so tokenisation and term statistics are paid once and an extra strategy costs
only its scoring (a cache-aware variant of one already there, only its fill;
how a config is cut into tasks: tasks.py). Records stream to the journal as
tasks finish (journal.py): an interrupted run resumes with nothing lost. Reports
sort records by cell key: they do not depend on the executor or the finishing
order."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packproof.evals.metrics.answers import Answers
from packproof.evals.metrics.cache.model import Profile
from packproof.evals.metrics.cell import Citations, cell_metrics
from packproof.evals.run.chains import cache_state
from packproof.evals.run.config import SCENARIO_BUDGET, EvalConfig
from packproof.evals.run.executors import Map, executor_map
from packproof.evals.run.external import close_packers
from packproof.evals.run.journal import (
    LEGACY_RESULTS,
    RESULTS,
    Batch,
    Reader,
    journal_path,
    open_journal,
)
from packproof.evals.run.judge import failed_cell, judged, traced
from packproof.evals.run.packers import Configured, NamedPacker, start_packers
from packproof.evals.run.prefixes import longest_items, pack_pairs, prefix_of, shared_table
from packproof.evals.run.replay import BREAKPOINTS, PACK, Chains, finish, previous_pack
from packproof.evals.run.tasks import Task, cell_key, tasks
from packproof.evals.scenarios.format import (
    Scenario,
    expectation_failures,
    expectation_key,
    kept_reasons,
)
from packproof.packer.model import Items
from packproof.packer.pipeline import Ranked, cyclic_gc_paused, decide, rank, replaced, reserve
from packproof.packer.request import Request, parse_items, parse_request, request_to_json
from packproof.packer.strategies import StrategyBase

__all__ = ["Task", "TaskRunner", "parsed_turns", "run_cells", "run_task", "tasks"]


def _without_tokens(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in it.items() if k != "tokens"} for it in items]


def parsed_turns(
    scenario: Scenario, turns: Sequence[int], token_counter: str | None = None
) -> Iterator[tuple[int, Request, bool]]:
    """Each turn's parsed request, and whether its items were recounted with
    ``token_counter``. A conversation in the compact form (every turn sees a
    prefix of one item list) has that list parsed and counted once, and each
    turn takes its prefix of the table, sharing its term statistics; parsing
    each turn alone gives equal requests (tested). So do a scenario's turns
    built in memory whose lists are prefixes of one (:mod:`.prefixes`)."""
    shared, derived = scenario.shared_items, False
    if shared is None and len(turns) > 1:
        shared, derived = longest_items(scenario, turns), True
    # Per (counter, recounted): the shared list parsed once, or None (see shared_table).
    tables: dict[tuple[str, bool], Items | None] = {}
    for k in turns:
        request = scenario.turns[k].request
        recounted = token_counter is not None and token_counter != request["token_counter"]
        if recounted:
            request = {**request, "token_counter": token_counter}
        counter = request["token_counter"]
        items = None
        if shared is not None:
            if (counter, recounted) not in tables:
                listed = _without_tokens(shared) if recounted else shared
                table = shared_table(scenario, listed, counter, derived, parse_items)
                tables[counter, recounted] = table
            table = tables[counter, recounted]
            own = scenario.turns[k].request["items"]
            if table is not None and (not derived or prefix_of(own, shared)):
                upto = len(own)
                items = table if upto == len(table) else table.window(0, upto)
        if items is None and recounted:
            request["items"] = _without_tokens(request["items"])
        where = f"scenario {scenario.id} turn {k} ({scenario.file})"
        yield k, parse_request(request, items=items, source=where), recounted


def run_task(
    task: Task,
    specs: Sequence[str],
    budgets: Sequence[int | str],
    packer: Sequence[str] | None = None,
    timeout: float = 10.0,
    token_counter: str | None = None,
    profiles: Sequence[tuple[str, Profile]] = (),
    static_prefix_tokens: Sequence[int] = (0,),
    packers: Mapping[str, NamedPacker] | None = None,
    whole: bool = True,
) -> list[dict[str, Any]]:
    """Every cell of a task's turns, as records (pure: same inputs, same records,
    apart from ``latency_ms``). With ``packer`` (an external command), every
    spec's packs come from that program, and a spec in ``packers`` (a named
    packer) has its packs from its own; either way they are judged by the same
    metrics. With ``token_counter``, every item is recounted with that counter.
    A replay's steps are priced under ``profiles`` with each static prefix size
    (:func:`packproof.evals.run.replay.finish`, which ``whole`` is passed)."""
    records: list[dict[str, Any]] = []
    strategies = [Configured.of(s, packers or {}, packer, timeout) for s in (task.specs or specs)]
    first = task.turns[0]
    # A task that does not start its scenario packs the turn before its first
    # too, for the prefix stability of its first turn (its records are dropped).
    turns = (first - 1, *task.turns) if first > 0 else task.turns
    before: list[dict[str, Any]] = []
    chains: Chains | None = {} if task.scenario.replay else None
    citations = Citations()  # one verdict per item of the task's table
    with cyclic_gc_paused():  # no cycles: no rescans of a long replay's records
        for k, base, recounted in parsed_turns(task.scenario, turns, token_counter):
            done = _run_turn(task, k, base, recounted, strategies, budgets, chains, citations)
            (records if k >= first else before).extend(done)
        previous = {(r["spec"], str(r["budget"])): r[PACK] for r in before if r["status"] == "ok"}
        finish(task.scenario, records, dict(profiles), static_prefix_tokens, previous, whole)
    return records


def _run_turn(
    task: Task,
    k: int,
    base: Request,
    recounted: bool,
    specs: Sequence[Configured],
    budgets: Sequence[int | str],
    chains: Chains | None = None,
    citations: Citations | None = None,
) -> list[dict[str, Any]]:
    turn = task.scenario.turns[k]
    records = []
    # Work is done at the level it depends on: the reservation (tail, anchors,
    # candidates), pack entries and the answers' ceiling once per turn; the ranking
    # once per strategy (a spec packed plain and cache-aware ranks alike), its
    # metrics once per spec; the oracle once per budget; the fill per cell.
    start = time.perf_counter()
    reserved = reserve(base)
    reserve_seconds = time.perf_counter() - start
    citations, answers = citations or Citations(), Answers(turn.answers, base.items)
    oracles: dict[str, float | None] = {}
    rankings: dict[StrategyBase, tuple[Ranked, float]] = {}  # per strategy: ranking, time
    with cyclic_gc_paused():
        for configured in specs:
            spec, name, strategy = configured.spec, configured.name, configured.strategy
            if strategy not in rankings:
                start = time.perf_counter()
                ranked = rank(replaced(base, strategy=strategy), reserved)
                rankings[strategy] = ranked, time.perf_counter() - start
            ranked, rank_seconds = rankings[strategy]
            ranked_metrics: dict[str, float | None] = {}
            # A strategy's named expectations were written for its defaults, and a
            # spec-keyed one for that parameterisation; "*" ones hold for all.
            key = (
                name
                if configured.is_default
                else expectation_key(strategy, cache_aware=configured.cache is not None)
            )
            for budget in budgets:
                tokens = base.budget_tokens if budget == SCENARIO_BUDGET else int(budget)
                chain = (spec, str(budget))
                # the spec's cache options win over the scenario's
                cache = base.cache_aware if configured.cache is None else configured.cache
                changes: dict[str, Any] = {"strategy": strategy, "budget_tokens": tokens}
                if cache is not None:
                    changes["cache_aware"] = cache
                    if chains is not None:  # a replay step's previous pack: its chain's last
                        changes["previous_pack"] = previous_pack(chains, chain, base.items, turn.t)
                req = replaced(base, **changes)
                record: dict[str, Any] = {
                    "key": cell_key(task.suite, task.scenario.id, k, spec, budget),
                    "suite": task.suite,
                    "scenario": task.scenario.id,
                    "turn": k,
                    "tags": [*task.scenario.tags, *turn.tags],
                    "strategy": name,
                    "spec": spec,
                    "budget": budget,
                    "budget_tokens": tokens,
                    "status": "ok",
                }
                # A cell's latency is what packing its request costs: the turn's
                # reservation and the spec's ranking (each measured once, shared by
                # the cells that use them) plus this cell's own fill.
                start = time.perf_counter()
                result = decide(req, reserved, ranked)
                latency = reserve_seconds + rank_seconds + time.perf_counter() - start
                pack_items, traced_here, external = None, True, None
                pack = pack_pairs(base.items, result.order)
                if configured.external is not None:
                    start = time.perf_counter()
                    failure, answer = configured.external.call(request_to_json(req))
                    latency = time.perf_counter() - start
                    if failure is not None:
                        records.append(failed_cell(record, failure, answer, latency))
                        continue
                    result, traced_here = judged(result, answer), traced(answer)
                    external = answer
                    pack_items = answer["items"]
                    position = base.items.position
                    pack = [
                        (it["recordRef"], int(base.items.tokens[position[it["recordRef"]]]))
                        for it in pack_items
                    ]
                # Expectations are written for the scenario's own budget and token
                # counts; a sweep (of budgets or counters) measures, it does not judge.
                judged_here = budget == SCENARIO_BUDGET and not recounted
                applies = turn.expectations(key) if judged_here else []
                failures = expectation_failures(turn, key, result) if applies else None
                known = dict(ranked_metrics)
                if str(budget) in oracles:
                    known["oracle_recall"] = oracles[str(budget)]
                metrics = cell_metrics(
                    result,
                    turn.relevant,
                    failures,
                    applies,
                    pack_items=pack_items,
                    known=known,
                    citations=citations,
                    answers=answers,
                )
                oracles.setdefault(str(budget), metrics["oracle_recall"])
                if configured.external is None:  # an external pack's order may change
                    ranked_metrics = {"ndcg@10": metrics["ndcg@10"], "mrr": metrics["mrr"]}
                state = cache_state(req, result, pack, external, turn.t)
                if chains is not None and not turn.probe:
                    chains[chain] = state.link
                if result.cache is not None:  # what the cache-aware assembly did
                    record["cache_action"] = result.cache.action
                    record["recall_tokens"] = result.cache.recall_tokens
                records.append(
                    {
                        **record,
                        "mode": result.mode,
                        "selected": result.selected_ids,
                        "failures": failures or [],
                        # the trace's reasons the report shows (from a trace only)
                        "reasons": kept_reasons(turn, result) if traced_here else {},
                        "metrics": metrics,
                        "latency_ms": round(latency * 1000, 3),
                        PACK: pack,
                        BREAKPOINTS: state.breakpoints,
                    }
                )
    return records


def run_cells(
    config: EvalConfig,
    out_dir: Path,
    *,
    jobs: int = 1,
    executor: str = "process",
    resume: bool = False,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    packer: Sequence[str] | None = None,
    timeout: float = 10.0,
    whole: bool = True,
) -> list[dict[str, Any]]:
    """Run every cell not yet in the run's journal (``out_dir/results.jsonl.gz``);
    return all records, read from its lines as written (``whole``: see ``read_journal``).
    The executor is set up (a Dask scheduler reached) and every packer command
    started before the run directory is touched, so a failure there never costs
    earlier results. The packers this process started are ended when the cells
    are done, however they end. ``progress(done, total)`` counts cells of the
    grid: called once before any task, then as each task's records are written."""
    start_packers(config.packers, packer, timeout, executor, jobs)
    fn = TaskRunner(
        config.specs,
        config.budgets,
        tuple(packer) if packer else None,
        timeout,
        config.token_counter,
        tuple(config.cache_profiles.items()),
        config.static_prefix_tokens,
        tuple(config.packers.items()),
    )
    try:
        with executor_map(jobs, executor, scheduler) as execute:
            return _run_into(config, out_dir, execute, fn, resume, progress, whole)
    finally:
        close_packers()


def _run_into(
    config: EvalConfig,
    out_dir: Path,
    execute: Map,
    fn: TaskRunner,
    resume: bool,
    progress: Callable[[int, int], None] | None,
    whole: bool = True,
) -> list[dict[str, Any]]:
    out_dir.mkdir(parents=True, exist_ok=True)
    results = journal_path(out_dir) if resume else out_dir / RESULTS
    every = tasks(config)
    grid = {
        cell_key(t.suite, t.scenario.id, k, s, b)
        for t in every
        for k in t.turns
        for s in t.specs or config.specs
        for b in config.budgets
    }
    reader = open_journal(results, grid, whole) if resume else Reader(results, whole=whole)
    finished = set(reader.lines)
    if not resume:
        for old in (results, out_dir / LEGACY_RESULTS):
            old.unlink(missing_ok=True)
    work = [
        t
        for t in every
        if any(
            cell_key(t.suite, t.scenario.id, k, s, b) not in finished
            for k in t.turns
            for s in t.specs or config.specs
            for b in config.budgets
        )
    ]
    # Most cells first (a replay is one task per group of specs): no worker starts
    # a long one last.
    work.sort(key=lambda t: len(t.turns) * len(t.specs or config.specs), reverse=True)
    written = len(reader.records)  # progress counts cells of the grid, a resume's kept too
    progress = progress or (lambda done, total: None)
    progress(written, len(grid))
    plain = results.name == LEGACY_RESULTS  # resuming a run that wrote plain lines
    with results.open("ab") as sink:
        for batch in execute(fn, work):
            cells, text = batch.write(sink, finished, plain)
            written += cells
            progress(written, len(grid))
            reader.feed(text)
    return reader.finish()[0]  # the file's lines (it follows the file): as a whole run's


@dataclass(frozen=True)
class TaskRunner:
    """A picklable ``run_task`` with the grid bound (process pools pickle it)."""

    specs: tuple[str, ...]
    budgets: tuple[int | str, ...]
    packer: tuple[str, ...] | None = None
    timeout: float = 10.0
    token_counter: str | None = None
    profiles: tuple[tuple[str, Profile], ...] = ()
    static_prefix_tokens: tuple[int, ...] = (0,)
    packers: tuple[tuple[str, NamedPacker], ...] = ()

    def __call__(self, task: Task) -> Batch:
        """The task's records as the journal stores them, made here (as objects, a
        replay's run to hundreds of megabytes); the collector paused until they are gone."""
        with cyclic_gc_paused():  # records hold no cycles: resumed, it would scan each
            batch = Batch.of(
                run_task(
                    task,
                    self.specs,
                    self.budgets,
                    self.packer,
                    self.timeout,
                    self.token_counter,
                    self.profiles,
                    self.static_prefix_tokens,
                    dict(self.packers),
                    whole=False,
                )
            )
        return batch
