"""A pytest plugin: a scenario suite as test cases for your own packer.

    pytest --packproof-suite scenarios/compiled/trust.jsonl --packproof-packer mypacker:pack

It is registered through the ``pytest11`` entry point, so every pytest run where
packproof is installed loads it: without ``--packproof-suite`` it only adds its
options, and it imports nothing of the harness. With it, each turn of each
scenario is one test item (``SUITE::SCENARIO``, ``#TURN`` for a conversation's
turns), judged as ``packproof eval --packer`` judges an external pack
(docs/external-packers.md): packproof's definitions of the fresh tail, anchors and
budget, the hard invariants, and the ``"*"`` expectations (plus one strategy's,
with ``--packproof-expect``). A failing case shows the scenario's ``why``, what was
unmet and the selected, missing and unexpected ids (docs/pytest-plugin.md).
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

# Types only: the harness is imported when --packproof-suite is given, not before.
if TYPE_CHECKING:
    from packproof.evals.pytest.verdict import Packer, Verdict
    from packproof.evals.scenarios.format import Scenario

__all__ = ["CaseFailed", "ScenarioCase", "Settings", "SuiteFile"]

ALL: Final = "*"  # the expectations every packer is held to
DEFAULT_TIMEOUT_S: Final = 10.0  # a cmd: packer's seconds per request
MARKER: Final = "packproof"
# The frame that calls a MODULE:CALLABLE packer: a traceback is shown from the next one.
PACKER_CALL: Final = "call_packer"


@dataclass(frozen=True)
class Settings:
    """The options, checked once at configure time."""

    suites: Mapping[Path, Sequence[Scenario]]
    packer: Packer
    packer_spec: str
    request_fields: Mapping[str, Any]  # the strategy (and cache options) put in each request
    expect: str = ALL
    min_recall: float | None = None
    on_path: tuple[str, ...] = ()  # entries this plugin put on sys.path


SETTINGS: Final = pytest.StashKey[Settings]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("packproof", "packproof scenario suites as test cases")
    group.addoption(
        "--packproof-suite",
        action="append",
        default=[],
        metavar="PATH",
        help="a scenario suite to run as test cases: compiled JSONL or a YAML source (repeatable)",
    )
    group.addoption(
        "--packproof-packer",
        metavar="MODULE:CALLABLE",
        help="the packer under test: a callable taking a packproof.request.v1 dict and "
        "returning a ContextPack v1 dict, or cmd:COMMAND (`packproof docs external-packers`)",
    )
    group.addoption(
        "--packproof-strategy",
        metavar="SPEC",
        help="the strategy put in each request (default: the one --packproof-expect names, "
        "else the request default, chronological)",
    )
    group.addoption(
        "--packproof-expect",
        default=ALL,
        metavar="SPEC",
        help='whose named expectations apply besides "*": a strategy name, or a spec such as '
        '"openclaw-mem(profile=relevance)" for the expectations keyed by it (default: "*" only)',
    )
    group.addoption(
        "--packproof-min-recall",
        type=float,
        metavar="X",
        help="fail a case whose evidence recall (gold ids packed / gold ids) is below X, "
        "a number in [0, 1]",
    )
    group.addoption(
        "--packproof-timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help="per-request timeout of a cmd: packer, in (0, 86400] (default 10)",
    )


def pytest_configure(config: pytest.Config) -> None:
    opt = config.option
    if not opt.packproof_suite:
        if (
            opt.packproof_packer
            or opt.packproof_strategy
            or opt.packproof_expect != ALL
            or opt.packproof_min_recall is not None
            or opt.packproof_timeout != DEFAULT_TIMEOUT_S
        ):
            raise pytest.UsageError(
                "--packproof-packer, --packproof-strategy, --packproof-expect, "
                "--packproof-min-recall and --packproof-timeout need --packproof-suite PATH"
            )
        return
    config.stash[SETTINGS] = _settings(config)
    config.addinivalue_line("markers", f"{MARKER}: a case of a packproof scenario suite")
    config.pluginmanager.register(SuitePlugin(config), "packproof-suites")


def _settings(config: pytest.Config) -> Settings:
    """The checked options; a bad one is a one-line usage error."""
    from packproof.evals.run.external import check_timeout
    from packproof.evals.scenarios.compile import load_sources
    from packproof.evals.scenarios.format import load_compiled
    from packproof.packer.errors import InputError
    from packproof.packer.packspec import parse_pack_spec
    from packproof.packer.strategies import REGISTRY, build_strategy, parse_spec

    opt = config.option
    here = config.invocation_params.dir
    suites: dict[Path, Sequence[Scenario]] = {}
    for raw in opt.packproof_suite:
        path = (here / raw).resolve()
        try:
            yaml = path.suffix in (".yaml", ".yml")
            suites[path] = load_sources([path])[path] if yaml else load_compiled(path)
        except InputError as exc:
            raise pytest.UsageError(f"--packproof-suite {raw}: {exc}") from None
    expect = opt.packproof_expect
    named = None
    if expect != ALL:  # a strategy, or a spec: held to what is keyed by its label
        try:
            named = build_strategy(*parse_spec(expect, "--packproof-expect"), "--packproof-expect")
        except InputError:
            known = ", ".join([repr(ALL), *sorted(REGISTRY)])
            message = (
                f"--packproof-expect {expect}: not a strategy or a spec of one (one of {known})"
            )
            raise pytest.UsageError(message) from None
        expect = named.label()
    fields: dict[str, Any] = {}
    if opt.packproof_strategy is not None:
        try:
            fields = parse_pack_spec(opt.packproof_strategy).request_fields()
        except InputError as exc:
            message = f"--packproof-strategy {opt.packproof_strategy}: {exc}"
            raise pytest.UsageError(message) from None
    elif named is not None:  # a packer held to bm25's expectations is asked for bm25
        fields = {"strategy": named.spec()}
    min_recall = opt.packproof_min_recall
    if min_recall is not None and not 0 <= min_recall <= 1:  # NaN fails this too
        raise pytest.UsageError(
            f"--packproof-min-recall {min_recall:g}: expected a number in [0, 1] "
            "(a share of the gold evidence)"
        )
    try:
        timeout = check_timeout(opt.packproof_timeout, "--packproof-timeout")
    except InputError as exc:
        raise pytest.UsageError(str(exc)) from None
    if not opt.packproof_packer:
        raise pytest.UsageError("--packproof-suite needs --packproof-packer MODULE:CALLABLE")
    # The packer's module is imported from the rootdir (and the invocation
    # directory), as pytest imports a conftest.py there.
    added = tuple(d for d in dict.fromkeys([str(config.rootpath), str(here)]) if d not in sys.path)
    sys.path[:0] = added
    packer = _packer(opt.packproof_packer, timeout)
    return Settings(suites, packer, opt.packproof_packer, fields, expect, min_recall, added)


def _packer(spec: str, timeout: float) -> Packer:
    """``MODULE:CALLABLE`` (a dotted attribute path is fine) or ``cmd:COMMAND``."""
    if spec.startswith("cmd:"):
        from packproof.evals.run.external import external_packer, parse_packer
        from packproof.packer.errors import InputError

        try:
            process = external_packer(parse_packer(spec), timeout)
        except InputError as exc:
            expected = f" (expected {exc.expected})" if exc.expected else ""
            raise pytest.UsageError(f"--packproof-packer {spec}: {exc.message}{expected}") from None

        def call(request: dict[str, Any]) -> tuple[str | None, Any]:
            failure, answer = process.call(request)
            if failure is None:
                return None, answer
            return f"the packer command failed: {failure}: {answer}", None

        return call
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name.strip() or not attr.strip():
        raise pytest.UsageError(
            f"--packproof-packer {spec}: expected MODULE:CALLABLE or cmd:COMMAND"
        )
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # the user's module: any error is reported, in one line
        raise pytest.UsageError(
            f"--packproof-packer {spec}: cannot import {module_name}: {type(exc).__name__}: {exc}"
        ) from None
    try:
        fn = functools.reduce(getattr, attr.split("."), module)
    except AttributeError:
        raise pytest.UsageError(
            f"--packproof-packer {spec}: module {module_name} has no attribute {attr}"
        ) from None
    if not callable(fn):
        raise pytest.UsageError(f"--packproof-packer {spec}: {attr} is not callable")

    def call_packer(request: dict[str, Any]) -> tuple[str | None, Any]:
        return None, fn(request)

    return call_packer


class SuitePlugin:
    """The hooks that work only with ``--packproof-suite``: registered then, not before."""

    def __init__(self, config: pytest.Config) -> None:
        self.settings = config.stash[SETTINGS]
        self.collected: set[Path] = set()

    def pytest_report_header(self) -> str:
        s = self.settings
        cases = sum(len(sc.turns) for scs in s.suites.values() for sc in scs)
        strategy = s.request_fields.get("strategy", {}).get("name", "chronological")
        return (
            f"packproof: packer {s.packer_spec}, strategy {strategy}, "
            f"expectations {_expectations(s.expect)}, {len(s.suites)} suite(s), {cases} case(s)"
        )

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> SuiteFile | None:
        """A suite named as a path too (or found under one) is collected there, once."""
        path = file_path.resolve()
        if path in self.settings.suites and path not in self.collected:
            self.collected.add(path)
            return SuiteFile.from_parent(parent, path=file_path)
        return None

    @pytest.hookimpl(tryfirst=True)  # before -k, -m and --deselect select items
    def pytest_collection_modifyitems(
        self, session: pytest.Session, items: list[pytest.Item]
    ) -> None:
        for path in self.settings.suites:
            if path not in self.collected:
                self.collected.add(path)
                items.extend(session.genitems(SuiteFile.from_parent(session, path=path)))

    def pytest_unconfigure(self) -> None:
        from packproof.evals.run.external import close_packers

        close_packers()  # a cmd: packer, with whatever it started, ends with the session
        for entry in self.settings.on_path:
            if entry in sys.path:
                sys.path.remove(entry)


def _expectations(name: str) -> str:
    return '"*"' if name == ALL else f'"*" and {name}'


class SuiteFile(pytest.File):
    """A scenario suite: one item per turn of each scenario."""

    def collect(self) -> Iterator[ScenarioCase]:
        for scenario in self.config.stash[SETTINGS].suites[self.path.resolve()]:
            for k in range(len(scenario.turns)):
                name = scenario.id if len(scenario.turns) == 1 else f"{scenario.id}#{k}"
                yield ScenarioCase.from_parent(self, name=name, scenario=scenario, turn=k)


class CaseFailed(Exception):
    """A case's verdict, when it fails (the item shows it, not a traceback)."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__("\n".join(verdict.failures))
        self.verdict = verdict


class ScenarioCase(pytest.Item):
    """One turn of one scenario, packed by the packer under test and judged."""

    def __init__(self, *, scenario: Scenario, turn: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.turn = turn
        self.add_marker(MARKER)
        # -k matches a scenario's tags and its turn's
        self.extra_keyword_matches.update([*scenario.tags, *scenario.turns[turn].tags])

    def runtest(self) -> None:
        from packproof.evals.pytest.verdict import judge

        s = self.config.stash[SETTINGS]
        verdict = judge(
            self.scenario.turns[self.turn],
            s.packer,
            request_fields=s.request_fields,
            expect=s.expect,
            min_recall=s.min_recall,
        )
        if verdict.failures:
            raise CaseFailed(verdict)

    def source(self) -> tuple[Path, int | None]:
        """The scenario's YAML file and line, when it can be found; else the suite."""
        if self.path.suffix not in (".yaml", ".yml"):  # compiled: the source sits above
            for folder in (self.path.parent.parent, self.path.parent):
                if (folder / self.scenario.file).is_file():
                    return folder / self.scenario.file, self.scenario.line
            return self.path, None
        return self.path, self.scenario.line

    def reportinfo(self) -> tuple[Path, int | None, str]:
        path, line = self.source()
        # The domain heads a failure's section. A suite's file name would not do:
        # pytest's verbose line reads a dotted domain that ends the node id as a
        # Python path (trust.jsonl::x -> trust::jsonl::x).
        return path, None if line is None else line - 1, self.name

    def header(self) -> list[str]:
        """The scenario's why and where, and whose expectations apply."""
        path, line = self.source()
        at = self.config.invocation_params.dir
        shown = path.relative_to(at) if path.is_relative_to(at) else path
        expect = _expectations(self.config.stash[SETTINGS].expect)
        where = f"{shown}:{line}" if line is not None else str(shown)
        return [f"why:        {self.scenario.why}", f"at:         {where} (expectations {expect})"]

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        """What was unmet first (pytest's short summary shows the first line),
        then the scenario's why and where, then the ids; or, when the packer
        raised, the why and where and then its traceback."""
        if isinstance(excinfo.value, CaseFailed):
            return excinfo.value.verdict.render(self.header())
        header = "\n".join(self.header())
        tb = excinfo.traceback
        calls = [
            i
            for i, entry in enumerate(tb)
            if entry.name == PACKER_CALL and str(entry.path) == __file__
        ]
        if not calls or calls[-1] + 1 == len(tb):  # raised here, not in the packer
            return f"{header}\npackproof failed judging this case:\n{super().repr_failure(excinfo)}"
        # The packer raised: its traceback from the packer's own frames on (past
        # pytest's and this plugin's), unless --fulltrace asks for every frame.
        if not self.config.getoption("fulltrace", False):
            excinfo.traceback = tb[calls[-1] + 1 :]
        return f"{header}\nthe packer raised:\n{super().repr_failure(excinfo, style)}"
