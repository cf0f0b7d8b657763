"""The pytest plugin: a scenario suite as test cases for a user's own packer.

Each test runs pytest in-process (pytester) in a temporary folder holding the
user's packer module, against a real compiled suite or a small YAML source."""

from __future__ import annotations

import subprocess
import sys

import pytest

# Imported here so that pytester's in-process runs find the harness loaded
# (it drops modules first imported during a run).
import packproof.evals.pytest.verdict  # noqa: F401
from packproof.evals.scenarios.format import load_compiled
from tests.evals.run.test_faults import wait_groups_gone
from tests.evals.run.test_process import FORKER
from tests.paths import ROOT

pytest_plugins = ["pytester"]

SCENARIOS = ROOT / "scenarios"

PACKERS = """
import packproof


def wrap(request):
    return packproof.pack(request).to_dict()


def untraced(request):
    pack = packproof.pack(request).to_dict()
    del pack["trace"]
    return pack


def chronological(request):
    return packproof.pack({**request, "strategy": "chronological"}).to_dict()


def _pack(request, items):
    entries = [
        {
            "recordRef": it["id"], "layer": "L1", "type": it["kind"],
            "importance": it["importance"], "trust": it["trust"], "text": it["text"],
            "citations": {"recordRef": it["id"]},
        }
        for it in items
    ]
    meta = {
        "ts": request["ts"], "query": request["prompt"] or "", "scope": request["scope"],
        "budgetTokens": request["budget_tokens"], "maxItems": len(request["items"]),
    }
    return {
        "schema": "openclaw-mem.context-pack.v1", "meta": meta, "bundle_text": "",
        "items": entries, "notes": {"how_to_use": []},
    }


def all_but_newest(request):
    return _pack(request, request["items"][:-1])


def newest_only(request):
    return _pack(request, request["items"][-1:])


def raises(request):
    raise RuntimeError("my packer broke")


def not_a_pack(request):
    return {"schema": "openclaw-mem.context-pack.v1"}


def a_result(request):
    return packproof.pack(request)


def stranger(request):
    return _pack(request, [{**request["items"][0], "id": "zz"}])


def twice(request):
    return _pack(request, request["items"][-1:] * 2)


def trace_stranger(request):
    pack = packproof.pack(request).to_dict()
    pack["trace"]["candidates"][0]["id"] = "zz"
    return pack


def trace_only(request):
    pack = packproof.pack(request).to_dict()
    pack["items"], pack["bundle_text"] = [], ""  # packs nothing; the trace says otherwise
    return pack


def trace_hides(request):
    pack = packproof.pack({**request, "budget_tokens": 1}).to_dict()
    full = packproof.pack(request).to_dict()
    pack["items"] = full["items"]  # packs more than its trace decides packed
    return pack


not_callable = 3
"""

# The scenarios page's example, with a fresh tail and a "*" expectation.
VAULT = """\
schema: packproof.scenarios.v1
scenarios:
  - id: vault-code
    why: The code is said once, early; a pack that keeps it holds the answer.
    request:
      budget_tokens: 20
      prompt: what is the vault code
      fresh_tail: {count: 1}
      items:
        - [m1, user, the vault code is 4417]
        - [m2, assistant, noted]
        - [m3, user, what is the vault code]
    relevant: [m1]
    expect:
      "*": {must_include: [m3]}
"""


SUITES = ("conversations", "trust", "bm25-relevance", "cache-aware")


@pytest.fixture
def user(pytester: pytest.Pytester) -> pytest.Pytester:
    """A user's folder: their packers (``packers.py``), a YAML suite and copies
    of four golden suites with their sources (``scenarios/compiled/NAME.jsonl``)."""
    pytester.makepyfile(packers=PACKERS)
    pytester.makefile(".yaml", vault=VAULT)
    (pytester.path / "scenarios" / "compiled").mkdir(parents=True)
    for name in SUITES:
        for part in (f"{name}.yaml", f"compiled/{name}.jsonl"):
            (pytester.path / "scenarios" / part).write_bytes((SCENARIOS / part).read_bytes())
    return pytester


def run(pytester: pytest.Pytester, suite: str, packer: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "-p",
        "no:cacheprovider",
        # the outer run imported packproof already: nothing to rewrite, nothing to warn about
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        "--packproof-suite",
        suite,
        "--packproof-packer",
        packer,
        *args,
    )


def compiled(name: str) -> str:
    return f"scenarios/compiled/{name}.jsonl"


def turns(suite: str) -> int:
    """The cases a suite should give: one per turn of each scenario."""
    return sum(len(s.turns) for s in load_compiled(SCENARIOS.parent / suite))


def test_a_packer_wrapping_packproof_passes_every_case_one_per_turn(user: pytest.Pytester) -> None:
    suite = compiled("conversations")
    result = run(user, suite, "packers:wrap", "-v")
    result.assert_outcomes(passed=turns(suite))
    assert turns(suite) == 15  # five conversations of three turns: one case each
    result.stdout.fnmatch_lines(["*conversations.jsonl::conv-topic-shift-*#0 PASSED*"])


def shows(result: pytest.RunResult, *lines: str) -> None:
    """``lines`` appear in order in the output (``*`` a wildcard, ``[`` literal)."""
    result.stdout.fnmatch_lines([line.replace("[", "[[]") for line in lines])


def test_a_bad_packer_fails_with_the_why_what_was_unmet_and_the_ids_diff(
    user: pytest.Pytester,
) -> None:
    suite = compiled("trust")
    result = run(user, suite, "packers:all_but_newest")
    # every case fails but the one whose newest item is quarantined (and dropped)
    result.assert_outcomes(failed=turns(suite) - 1, passed=1)
    shows(
        result,
        "*_ trust-quarantined-top-match-excluded _*",
        "unmet:      must_exclude packed: ['q1']",
        "unmet:      budget_violations: evictable items use 24 tokens, 8 left after the fresh *",
        "unmet:      quarantined_included: quarantined items packed under trust_policy "
        "exclude_quarantined: ['q1']",
        "unmet:      tail_lost: fresh tail not packed: ['m3']",
        "why:        The quarantined q1 is the best match for the prompt*",
        'at:         scenarios/trust.yaml:17 (expectations "*")',
        "selected:   k0 q1 k2",
        "missing:    - m3  fresh tail",
        "unexpected: + q1  must_exclude, quarantined",
    )


def test_a_yaml_source_is_a_suite_and_its_cases_point_at_their_line(user: pytest.Pytester) -> None:
    run(user, "vault.yaml", "packers:wrap").assert_outcomes(passed=1)
    result = run(user, "vault.yaml", "packers:all_but_newest")
    result.assert_outcomes(failed=1)
    shows(
        result,
        "unmet:      must_include not packed: ['m3']",
        "unmet:      tail_lost: fresh tail not packed: ['m3']",
        "why:        The code is said once, early; a pack that keeps it holds the answer.",
        'at:         vault.yaml:3 (expectations "*")',
        "selected:   m1 m2",
        "missing:    - m3  fresh tail, must_include",
        "FAILED vault.yaml::vault-code - *",
    )


def test_min_recall_fails_a_case_whose_gold_evidence_is_not_packed(user: pytest.Pytester) -> None:
    run(user, "vault.yaml", "packers:newest_only").assert_outcomes(passed=1)
    result = run(user, "vault.yaml", "packers:newest_only", "--packproof-min-recall", "1")
    result.assert_outcomes(failed=1)
    shows(
        result,
        "unmet:      evidence recall 0 < --packproof-min-recall 1",
        "missing:    - m1  gold evidence",
    )


def test_a_packer_that_raises_shows_its_own_traceback(user: pytest.Pytester) -> None:
    result = run(user, "vault.yaml", "packers:raises")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "why:        The code is said once*",
            "the packer raised:",
            '>       raise RuntimeError("my packer broke")',
            "E       RuntimeError: my packer broke",
        ]
    )
    assert "evals/pytest/plugin.py" not in result.stdout.str()  # the plugin's own frames are cut


@pytest.mark.parametrize(
    ("packer", "message"),
    [
        ("not_a_pack", "failed: * answer is not a ContextPack v1: /: 'meta' is a required*"),
        ("a_result", "failed: * returned a PackResult, not its ContextPack v1 dict*"),
        ("stranger", "failed: * answer packs ids the request does not have: ['zz']"),
        ("twice", "failed: * answer packs ids more than once: ['m3']"),
        ("trace_stranger", "failed: * answer has a trace naming ids the request does not have*"),
        (
            "trace_only",
            "failed: * answer has a trace that contradicts its items: it decides packed ids "
            "that are not among its items: ['m1', 'm2', 'm3']",
        ),
        (
            "trace_hides",
            "failed: * answer has a trace that contradicts its items: it does not decide packed "
            "ids that are among its items: *",
        ),
    ],
)
def test_an_invalid_pack_fails_the_case_saying_why(
    user: pytest.Pytester, packer: str, message: str
) -> None:
    result = run(user, "vault.yaml", f"packers:{packer}")
    result.assert_outcomes(failed=1)
    shows(result, message)


def test_mode_and_reasons_are_held_only_to_a_pack_with_packproof_trace(
    user: pytest.Pytester,
) -> None:
    # trust.jsonl's "*" expectations name trace reasons (trust_quarantined_excluded,
    # ...), which a pack without packproof's trace cannot show: they are not checked.
    suite = compiled("trust")
    run(user, suite, "packers:untraced").assert_outcomes(passed=turns(suite))


def test_reasons_are_read_from_the_packs_own_trace(user: pytest.Pytester) -> None:
    # cache-aware.jsonl expects dropped_from_previous_pack, which only the trace says
    suite = compiled("cache-aware")
    run(user, suite, "packers:wrap", "--packproof-expect", "bm25").assert_outcomes(
        passed=turns(suite)
    )


def test_expect_holds_the_packer_to_one_strategys_expectations_too(
    user: pytest.Pytester,
) -> None:
    suite = compiled("bm25-relevance")  # every scenario has bm25 expectations
    # --packproof-expect bm25 asks for bm25 in each request, so packproof's own pack is bm25's
    run(user, suite, "packers:wrap", "--packproof-expect", "bm25").assert_outcomes(
        passed=turns(suite)
    )
    held = run(user, suite, "packers:chronological", "--packproof-expect", "bm25")
    assert held.parseoutcomes()["failed"] > 0
    held.stdout.fnmatch_lines(['at:  * (expectations "*" and bm25)'])
    run(user, suite, "packers:chronological").assert_outcomes(passed=turns(suite))


def test_a_command_speaking_the_external_protocol_is_a_packer(user: pytest.Pytester) -> None:
    result = run(user, "vault.yaml", f"cmd:{sys.executable} -m packproof serve")
    result.assert_outcomes(passed=1)


def test_a_suite_also_named_as_a_path_is_collected_once(user: pytest.Pytester) -> None:
    suite = compiled("trust")
    result = user.runpytest(
        str(suite), "--packproof-suite", str(suite), "--packproof-packer", "packers:wrap"
    )
    result.assert_outcomes(passed=turns(suite))


def test_cases_are_selected_with_k_like_any_test(user: pytest.Pytester) -> None:
    suite = compiled("trust")
    result = run(user, suite, "packers:wrap", "-k", "tail and not policy")
    result.assert_outcomes(passed=2)  # ...-tail-message-excluded, ...-skipped-by-tail-walk


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--packproof-packer", "packers"], "ERROR: --packproof-packer packers: expected MODULE:*"),
        (["--packproof-packer", "nosuch:pack"], "*cannot import nosuch: ModuleNotFoundError*"),
        (["--packproof-packer", "packers:nope"], "*module packers has no attribute nope"),
        (["--packproof-packer", "packers:not_callable"], "*not_callable is not callable"),
        (["--packproof-packer", "cmd:"], "ERROR: --packproof-packer cmd:: malformed packer*"),
        (["--packproof-packer", "cmd:/no/such/packer"], "*cannot start '/no/such/packer'*"),
        (["--packproof-packer", "packers:wrap", "--packproof-expect", "bm26"], "*not a strategy*"),
        (["--packproof-packer", "packers:wrap", "--packproof-strategy", "bm25(k9=1)"], "*k9*"),
        ([], "ERROR: --packproof-suite needs --packproof-packer MODULE:CALLABLE"),
        (
            ["--packproof-packer", "packers:wrap", "--packproof-min-recall", "nan"],
            "ERROR: --packproof-min-recall nan: expected a number in ?0, 1? *",  # ? for [ and ]
        ),
        (
            ["--packproof-packer", "packers:wrap", "--packproof-min-recall", "-1"],
            "ERROR: --packproof-min-recall -1: expected a number in ?0, 1? *",  # ? for [ and ]
        ),
        (
            ["--packproof-packer", "packers:wrap", "--packproof-min-recall", "1.5"],
            "ERROR: --packproof-min-recall 1.5: expected a number in ?0, 1? *",  # ? for [ and ]
        ),
        (
            ["--packproof-packer", "packers:wrap", "--packproof-timeout", "nan"],
            "ERROR: --packproof-timeout: not a timeout (expected seconds in (0, 86400?, found nan)",
        ),
        (["--packproof-packer", "packers:wrap", "--packproof-timeout", "0"], "*not a timeout*"),
        (["--packproof-packer", "packers:wrap", "--packproof-timeout", "inf"], "*not a timeout*"),
    ],
)
def test_a_bad_option_is_a_one_line_usage_error(
    user: pytest.Pytester, args: list[str], message: str
) -> None:
    result = user.runpytest("--packproof-suite", "vault.yaml", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str()


def test_a_bad_suite_and_options_without_a_suite_are_usage_errors(user: pytest.Pytester) -> None:
    result = user.runpytest(
        "--packproof-suite", "missing.jsonl", "--packproof-packer", "packers:wrap"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --packproof-suite missing.jsonl: *cannot read*"])
    for option in (["--packproof-packer", "packers:wrap"], ["--packproof-min-recall", "0.5"]):
        result = user.runpytest(*option)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["ERROR: --packproof-packer, *need --packproof-suite PATH"])


def test_a_command_packer_ends_with_the_session_and_all_it_started(
    user: pytest.Pytester,
) -> None:
    script = user.path / "forker.py"
    script.write_text(FORKER)
    marks = user.path / "marks"
    marks.mkdir()
    command = f"cmd:{sys.executable} {script} {marks} fast"
    run(user, "vault.yaml", command).assert_outcomes(passed=1)
    started = {int(p.name.split("-")[1]) for p in [*marks.glob("group-*"), *marks.glob("daemon-*")]}
    assert len(started) >= 2, "the packer never ran"
    # a helper it forked too, and a daemon that left its process group
    assert wait_groups_gone(started) == set()


def test_without_a_suite_the_plugin_adds_nothing(user: pytest.Pytester) -> None:
    user.makepyfile(test_mine="def test_mine():\n    pass\n")
    result = user.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "packproof:" not in result.stdout.str()  # no report header, no suite plugin


def test_the_plugin_module_imports_nothing_of_the_harness() -> None:
    code = (
        "import sys, packproof.evals.pytest.plugin; "
        "print(sorted(m for m in sys.modules if m.startswith('packproof.evals.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['packproof.evals.pytest', 'packproof.evals.pytest.plugin']"
