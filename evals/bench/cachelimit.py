"""The physical limit of the cache-aware target (docs/metrics.md, "The physical
limit"): the cheapest cost found at which every probe's pack holds that probe's
evidence, per conversation, priced under a profile from a replay run's
scenarios; and where a run's scenario files are (:func:`find_suites`)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from packproof.evals.metrics.cache.model import Profile, Step, price_chain
from packproof.evals.run.replay import QUESTION_ID, STATIC_ID
from packproof.evals.run.runner import parsed_turns
from packproof.evals.scenarios.format import Scenario
from packproof.packer.tokens import count_tokens

__all__ = ["TERMS", "find_suites", "physical_limit"]

TERMS: Final = ("write", "read", "uncached")


def _limit_chains(scenario: Scenario, static: int) -> dict[str, list[Step]]:
    """The two chains :func:`physical_limit` prices for one conversation."""
    head = [(STATIC_ID, static)] if static else []
    s = len(head)
    turns = scenario.turns
    requests = [req for _, req, _ in parsed_turns(scenario, range(len(turns)))]
    evidence_of = [set(t.relevant) if t.probe else set() for t in turns]
    on_demand: list[Step] = []
    carried: list[Step] = []
    seen: set[str] = set()
    kept: list[tuple[str, int]] = []  # the last conversation step's evidence block
    for k, (turn, req) in enumerate(zip(turns, requests, strict=True)):
        items = list(zip(req.items.ids, (int(n) for n in req.items.tokens), strict=True))
        t = float(turn.t or 0.0)
        if turn.probe:
            question = [(QUESTION_ID, int(count_tokens([req.prompt or ""], req.token_counter)[0]))]
            own = [it for it in items if it[0] in evidence_of[k]]
            on_demand.append(Step(t, [*head, *own, *question], s, True, [1] if s else []))
            marks = sorted({m for m in (s, s + len(kept)) if m > 0})
            carried.append(Step(t, [*head, *kept, *question], s, True, marks))
            continue
        new = [it for it in items if it[0] not in seen]
        seen.update(ref for ref, _ in new)
        # the evidence of the probes still to come, in arrival order
        wanted = set().union(*evidence_of[k + 1 :]) if k + 1 < len(turns) else set()
        kept = [it for it in items if it[0] in wanted]
        fresh = [it for it in new if it[0] not in wanted]
        on_demand.append(Step(t, [*head, *new], s, False, [1] if s else []))
        marks = sorted({m for m in (s, s + len(kept)) if m > 0})
        carried.append(Step(t, [*head, *kept, *fresh], s, False, marks))
    return {"evidence on demand": on_demand, "evidence carried": carried}


def physical_limit(
    scenarios: Sequence[Scenario], profile: Profile, static: int
) -> dict[str, Any] | None:
    """The cheapest cost found at which every probe's pack holds that probe's
    evidence, per conversation (mean), with its cost terms (docs/metrics.md,
    "The physical limit"). Two chains are priced per conversation, each step
    sending the static prefix and the items new at that step:

    - **evidence on demand**: a probe sends the static prefix, its own evidence
      and its question, with a breakpoint after the static prefix only;
    - **evidence carried**: each step also sends, after the static prefix and
      before its new items, the evidence of the probes still to come (in
      arrival order), with breakpoints after the static prefix and after that
      evidence; a probe sends the last step's evidence, then its question.

    The limit of a conversation is the cheaper of the two; it needs no budget
    (a budget can only make holding the evidence dearer)."""
    rows = []
    for sc in scenarios:
        if not sc.replay or not any(t.probe for t in sc.turns):
            continue
        priced = {}
        for design, steps in _limit_chains(sc, static).items():
            costs = price_chain(steps, profile)
            priced[design] = {
                "cost": sum(c.cost for c in costs),
                "write": profile.write * sum(c.written for c in costs),
                "read": profile.read * sum(c.cached for c in costs),
                "uncached": float(sum(c.uncached for c in costs)),
            }
        design = min(priced, key=lambda d: priced[d]["cost"])
        rows.append((design, priced))
    if not rows:
        return None
    n = len(rows)

    def mean(design: str | None, key: str) -> float:
        return sum(p[design or d][key] for d, p in rows) / n

    return {
        "conversations": n,
        "input_cost": mean(None, "cost"),
        **{term: mean(None, term) for term in TERMS},
        "designs": {d: mean(d, "cost") for d in rows[0][1]},
        "cheaper_design": {d: sum(1 for x, _ in rows if x == d) for d in rows[0][1]},
    }


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def find_suites(run_dir: Path, summary: Mapping[str, Any]) -> list[Path]:
    """The run's suites, by the names and sha256 its manifest gives, looked for
    in the run folder, ``reports/imports`` beside the run's output root, and
    ``reports/imports`` under the working directory."""
    found = []
    for suite in summary.get("manifest", {}).get("suites", []):
        places = (run_dir, run_dir.parent.parent / "imports", Path("reports/imports"))
        for place in places:
            path = place / suite["file"]
            if path.is_file() and _sha256(path) == suite["sha256"]:
                found.append(path)
                break
    return found
