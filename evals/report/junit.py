"""``junit.xml``: the scenario expectations as JUnit test cases, for CI test views.

Rules:

- One ``<testcase>`` per scenario expectation: a (scenario, turn, strategy) cell
  at the scenario's own budget (``budget == "scenario"``) whose
  ``metrics.expectation_pass`` is not ``None``. Budget sweeps measure, they do
  not judge, so they are test cases only when they fail on their own: a cell
  whose packer failed or that broke a hard invariant (failures.py), named with
  ``@<budget>``. The failed cases are exactly the failing cells that summary.md
  counts and ``packproof eval`` exits 1 on.
- One ``<testsuite>`` per suite file (the record's ``suite``), in record order,
  inside one ``<testsuites>`` root; each carries its ``tests`` and ``failures``
  counts (``errors`` and ``skipped`` are always 0).
- ``classname`` is the suite; ``name`` is ``<scenario id>[#turn][<label>]``: the
  ``#turn`` only for a conversation (more than one turn), the strategy's label
  (its spec when the summary has no label for it) in brackets.
- A failing case has a ``<failure>`` whose ``message`` is the failure lines
  joined by ``"; "``, whose text is one per line, and whose ``type`` is
  ``packer``, ``invariant`` or ``expectation``.
- The bytes are deterministic: record order, no timestamps, no host names, no
  durations (``time`` is omitted). ElementTree escapes markup; characters XML 1.0
  cannot carry at all (most C0 controls) are written as ``\\uXXXX``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any, Final

from packproof.evals.report.failures import cell_problems
from packproof.evals.report.model import ReportContext
from packproof.evals.run.config import SCENARIO_BUDGET

__all__ = ["render_junit"]

_TYPES: Final = {
    "cell_failures": "packer",
    "hard_invariants": "invariant",
    "expectations": "expectation",
}
# Characters not allowed anywhere in an XML 1.0 document.
_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """``text`` with every character XML 1.0 forbids written as ``\\uXXXX``."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _is_case(record: Mapping[str, Any]) -> bool:
    judged = record["metrics"].get("expectation_pass") is not None
    return (str(record["budget"]) == SCENARIO_BUDGET and judged) or bool(cell_problems(record))


def _case_name(record: Mapping[str, Any], ctx: ReportContext, labels: Mapping[str, str]) -> str:
    scenario = ctx.scenarios.get(record["scenario"])
    turns = len(scenario.turns) if scenario is not None else 1
    turn = f"#{record['turn']}" if turns > 1 or record["turn"] else ""
    label = labels.get(record["spec"], record["spec"])
    budget = "" if str(record["budget"]) == SCENARIO_BUDGET else f"@{record['budget']}"
    return f"{record['scenario']}{turn}[{label}]{budget}"


def _testcase(
    record: Mapping[str, Any], ctx: ReportContext, labels: Mapping[str, str]
) -> tuple[ET.Element, bool]:
    attrs = {
        "classname": _xml_text(record["suite"]),
        "name": _xml_text(_case_name(record, ctx, labels)),
    }
    scenario = ctx.scenarios.get(record["scenario"])
    if scenario is not None:
        attrs["file"] = _xml_text(scenario.file)
        attrs["line"] = str(scenario.line)
    case = ET.Element("testcase", attrs)
    problems = cell_problems(record)
    if problems:
        lines = [line for kind in problems.values() for line in kind]
        kind = next(iter(problems))  # cell_failures, else hard_invariants, else expectations
        failure = ET.SubElement(
            case, "failure", {"message": _xml_text("; ".join(lines)), "type": _TYPES[kind]}
        )
        failure.text = _xml_text("\n".join(lines))
    return case, bool(problems)


def render_junit(ctx: ReportContext) -> str:
    """The JUnit XML report of every scenario expectation (see the module rules)."""
    labels = {s["spec"]: s["label"] for s in ctx.summary.get("strategies", [])}
    suites: dict[str, list[tuple[ET.Element, bool]]] = {}
    for record in ctx.records:
        if _is_case(record):
            suites.setdefault(record["suite"], []).append(_testcase(record, ctx, labels))
    name = str(ctx.summary.get("manifest", {}).get("name", "packproof"))
    total = sum(len(cases) for cases in suites.values())
    failed = sum(f for cases in suites.values() for _, f in cases)
    root = ET.Element(
        "testsuites",
        {
            "name": _xml_text(f"packproof eval: {name}"),
            "tests": str(total),
            "failures": str(failed),
            "errors": "0",
        },
    )
    for suite, cases in suites.items():
        element = ET.SubElement(
            root,
            "testsuite",
            {
                "name": _xml_text(suite),
                "tests": str(len(cases)),
                "failures": str(sum(f for _, f in cases)),
                "errors": "0",
                "skipped": "0",
            },
        )
        element.extend(case for case, _ in cases)
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode", short_empty_elements=True)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
