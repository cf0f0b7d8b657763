"""The label-free evidence signal measured: ``python -m packproof.evals.bench.evidence_signal
[--locomo PATH] [--sessions DIR] [--seed N] [--sample N] [--empty N]``
(:mod:`packproof.evals.scenarios.evidence_signal`; docs/evidence-signal.md).

**LoCoMo.** Every question with a gold answer and labelled evidence is one step:
its answer text is the response, every dialogue turn of its conversation an
earlier item (as :func:`~packproof.evals.scenarios.importers.locomo.import_locomo`
maps them: id = ``dia_id``, a photo's caption appended). Printed: micro precision,
recall and F1 of the signal's items against the labelled ones (hits summed over
questions), recall averaged over questions (0 where the signal finds nothing),
how often it finds nothing, and the same recall for a random pick of as many
items per question (``random.Random(seed)``), per rule: the default (paths,
identifiers, numbers) and the one with rare plain words.

**Claude Code sessions.** Each ``*.jsonl`` under DIR (sub-agents included) is one
conversation. Its ``user`` and ``assistant`` records are the items, one per record
(id = its ``uuid``), text = its blocks' text: ``text``, ``thinking``, a ``tool_use``'s
input values (not its keys: ``file_path`` is in every call), a ``tool_result``'s
content. A step is one API call (the records sharing a ``requestId``); its
response is its ``text`` blocks and ``tool_use`` inputs, its earlier items the
records before its first one. Printed per session: steps, steps with evidence,
mean evidence items per step, seconds.

**The hand-check sample**: with ``--sample N`` (and ``--empty N``), N (step,
evidence item) pairs and N steps without evidence, drawn with ``--seed``, each
with its session, lines and short excerpts, for a person to judge.

Data is read where it lies and never written anywhere; an absent file or folder
is skipped with its reason (exit 0).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, NamedTuple

from packproof.evals.scenarios.evidence_signal import (
    DEFAULT_RULE,
    EvidenceIndex,
    Match,
    SignalRule,
)
from packproof.evals.scenarios.importers.claude_code.signal import (
    answered_calls,
    item_text,
    response_text,
)

__all__ = [
    "LOCOMO",
    "RULES",
    "SESSIONS",
    "LocomoFigures",
    "Step",
    "locomo_figures",
    "main",
    "session_steps",
]

_SHARED: Final = Path(__file__).resolve().parents[3] / "shared" / "data"  # beside the project
LOCOMO: Final = _SHARED / "locomo" / "locomo_dev.json"
SESSIONS: Final = _SHARED / "claude-code" / "sessions"
RULES: Final = {"default": DEFAULT_RULE, "with-words": SignalRule(words=True)}
SEED: Final = 29  # issue 29
EXCERPT: Final = 90  # characters of an excerpt (the docs' table keeps them under 100)


class LocomoFigures(NamedTuple):
    questions: int  # with an answer and labelled evidence
    labelled: int  # labelled evidence ids, summed over questions
    found: int  # signal evidence ids, summed
    hits: int  # signal ids that are labelled
    empty: int  # questions where the signal finds nothing
    mean_recall: float  # per question, 0 where nothing is found
    random_hits: int  # hits of the random pick of the same size
    random_mean_recall: float

    @property
    def precision(self) -> float:
        return self.hits / self.found if self.found else 0.0

    @property
    def recall(self) -> float:
        return self.hits / self.labelled if self.labelled else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def locomo_figures(
    path: Path, rule: SignalRule = DEFAULT_RULE, seed: int = SEED
) -> tuple[LocomoFigures, dict[str, LocomoFigures]]:
    """The signal against LoCoMo's labelled evidence (module docstring): over
    all questions, and per category tag."""
    from packproof.evals.scenarios.importers.locomo import CATEGORY_TAG, import_locomo

    scenarios, _ = import_locomo(path)
    rng = random.Random(seed)
    rows: dict[str, list[tuple[int, int, int, float, int, float]]] = {}
    for scenario in scenarios:
        items = scenario.turns[0].request["items"]  # every question sees the whole conversation
        ids = [item["id"] for item in items]
        index = EvidenceIndex(rule)
        index.extend((item["id"], item["text"]) for item in items)
        for turn in scenario.turns:
            if not turn.answers or not turn.relevant:
                continue
            found = index.evidence(turn.answers[0])
            gold = set(turn.relevant)
            hits = len(gold.intersection(found))
            picked = rng.sample(ids, len(found))
            random_hits = len(gold.intersection(picked))
            tag = next(t[len(CATEGORY_TAG) :] for t in turn.tags if t.startswith(CATEGORY_TAG))
            share, random_share = hits / len(gold), random_hits / len(gold)
            row = (len(gold), len(found), hits, share, random_hits, random_share)
            rows.setdefault(tag, []).append(row)
    every = [row for tag_rows in rows.values() for row in tag_rows]
    by_tag = {tag: _figures(tag_rows) for tag, tag_rows in sorted(rows.items())}
    return _figures(every), by_tag


def _figures(rows: Sequence[tuple[int, int, int, float, int, float]]) -> LocomoFigures:
    n = len(rows)
    return LocomoFigures(
        questions=n,
        labelled=sum(r[0] for r in rows),
        found=sum(r[1] for r in rows),
        hits=sum(r[2] for r in rows),
        empty=sum(r[1] == 0 for r in rows),
        mean_recall=sum(r[3] for r in rows) / n if n else 0.0,
        random_hits=sum(r[4] for r in rows),
        random_mean_recall=sum(r[5] for r in rows) / n if n else 0.0,
    )


# ------------------------------------------------------------------ Claude Code sessions


class Step(NamedTuple):
    """One API call of a session: its first record (``FILE:LINE``), its
    response, the evidence the signal finds for it, and how many items came
    before."""

    line: str
    response: str
    matches: list[Match]
    earlier: int


def _records(paths: Sequence[Path]) -> list[tuple[str, dict[str, Any]]]:
    """The user and assistant records of ``paths``, one after the other, each
    named ``FILE:LINE``."""
    out = []
    for path in paths:
        with path.open(encoding="utf-8") as lines:
            for n, line in enumerate(lines, 1):
                record = json.loads(line) if line.strip() else None
                if (
                    isinstance(record, dict)
                    and record.get("type") in ("user", "assistant")
                    and isinstance(record.get("message"), dict)
                ):
                    out.append((f"{path.name}:{n}", record))
    return out


def session_steps(
    path: Path | Sequence[Path], rule: SignalRule = DEFAULT_RULE
) -> tuple[list[Step], dict[str, str]]:
    """Every step of the session in ``path`` with its evidence (module
    docstring), and every item's text by id (``FILE:LINE``). Several paths are
    read as one conversation (the speed check)."""
    records = _records([path] if isinstance(path, Path) else path)
    calls = answered_calls(record["message"].get("content") for _, record in records)
    call: dict[int, str] = {}  # record position -> its call's key
    responses: dict[str, list[str]] = {}
    for k, (n, record) in enumerate(records):
        if record["type"] == "assistant":
            key = str(record.get("requestId") or record["message"].get("id") or n)
            call[k] = key
            responses.setdefault(key, []).append(response_text([record["message"].get("content")]))
    index = EvidenceIndex(rule)
    items: dict[str, str] = {}
    steps: list[Step] = []
    asked: set[str] = set()
    for k, (n, record) in enumerate(records):
        if k in call and call[k] not in asked:  # the call's first record: the step
            asked.add(call[k])
            response = "\n".join(t for t in responses[call[k]] if t)
            steps.append(Step(n, response, index.matches(response), len(index)))
        text = item_text(record["message"].get("content"), calls)
        index.add(n, text)
        items[n] = text
    return steps, items


def _excerpt(text: str, token: str | None = None) -> str:
    """About :data:`EXCERPT` characters of ``text`` on one line, around ``token``."""
    flat = " ".join(text.split())
    at = flat.find(token) if token else -1
    start = max(0, at - EXCERPT // 3) if at >= 0 else 0
    piece = flat[start : start + EXCERPT]
    # a table cell in a code span: a pipe escaped (GFM), a backquote swapped
    return ("…" if start else "") + piece.replace("`", "'").replace("|", "\\|")


def _sessions_report(folder: Path, seed: int, sample: int, empty: int) -> None:
    files = sorted(folder.rglob("*.jsonl"))
    print(f"\n## Claude Code sessions ({folder}): {len(files)} files, rule {DEFAULT_RULE}")
    print("| session | steps | with evidence | share | mean items/step | seconds |")
    print("|---|---:|---:|---:|---:|---:|")
    pairs: list[tuple[str, Step, Match, str]] = []
    nothing: list[tuple[str, Step]] = []
    totals: Counter[str] = Counter()
    for path in files:
        name = str(path.relative_to(folder))
        start = time.perf_counter()
        steps, items = session_steps(path)
        seconds = time.perf_counter() - start
        with_evidence = sum(bool(s.matches) for s in steps)
        count = sum(len(s.matches) for s in steps)
        share = with_evidence / len(steps) if steps else 0.0
        mean = count / len(steps) if steps else 0.0
        cells = f"{len(steps)} | {with_evidence} | {share:.1%} | {mean:.2f} | {seconds:.2f}"
        print(f"| {name} | {cells} |")
        totals.update(steps=len(steps), with_evidence=with_evidence, count=count)
        pairs += [(name, s, m, items[m.item_id]) for s in steps for m in s.matches]
        nothing += [(name, s) for s in steps if not s.matches and s.earlier]
    n = totals["steps"] or 1
    start = time.perf_counter()
    steps, items = session_steps(files)  # every file as one conversation: the speed check
    seconds = time.perf_counter() - start
    print(
        f"| all | {totals['steps']} | {totals['with_evidence']} | "
        f"{totals['with_evidence'] / n:.1%} | {totals['count'] / n:.2f} | |"
    )
    print(
        f"\nAll files read as one conversation: {len(items)} items, {len(steps)} steps, "
        f"{seconds:.2f} s"
    )
    rng = random.Random(seed)
    if sample:
        print(f"\n### {sample} (step, evidence item) pairs, seed {seed}")
        print("| # | session | step line | item line | tokens | response | item |")
        print("|---|---|---:|---:|---|---|---|")
        chosen = sorted(rng.sample(range(len(pairs)), min(sample, len(pairs))))
        for i, c in enumerate(chosen, 1):
            name, step, match, text = pairs[c]
            line = match.item_id.rpartition(":")[2]
            token = match.tokens[0]
            shown = ", ".join(match.tokens[:3]) + (" …" if len(match.tokens) > 3 else "")
            print(
                f"| {i} | {name} | {step.line.rpartition(':')[2]} | {line} | `{_excerpt(shown)}` "
                f"| `{_excerpt(step.response, token)}` | `{_excerpt(text, token)}` |"
            )
    if empty:
        print(f"\n### {empty} steps without evidence, seed {seed}")
        print("| # | session | step line | response |")
        print("|---|---|---:|---|")
        chosen = sorted(rng.sample(range(len(nothing)), min(empty, len(nothing))))
        for i, c in enumerate(chosen, 1):
            name, step = nothing[c]
            line = step.line.rpartition(":")[2]
            print(f"| {i} | {name} | {line} | `{_excerpt(step.response)}` |")


def _locomo_report(path: Path, seed: int) -> None:
    from packproof.evals.scenarios.importers.locomo import import_locomo

    _, counts = import_locomo(path)
    print(f"\n## LoCoMo ({path}), seed {seed}")
    print(
        f"{counts['questions']} questions, {counts['without_evidence']} without labelled "
        "evidence; a question counts when it has a gold answer and labelled evidence\n"
    )
    print(
        "| rule | category | questions | labelled | found | hits | P | R | F1 | mean R | "
        "nothing found | random hits | random mean R |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    timings = []
    for name, rule in RULES.items():
        start = time.perf_counter()
        overall, by_tag = locomo_figures(path, rule, seed)
        for tag, f in [("all", overall), *by_tag.items()]:
            print(
                f"| {name} | {tag} | {f.questions} | {f.labelled} | {f.found} | {f.hits} | "
                f"{f.precision:.3f} | {f.recall:.3f} | {f.f1:.3f} | {f.mean_recall:.3f} | "
                f"{f.empty / (f.questions or 1):.1%} | {f.random_hits} | "
                f"{f.random_mean_recall:.3f} |"
            )
        timings.append(f"{name} {time.perf_counter() - start:.1f} s")
    print(f"\nSeconds, import included: {', '.join(timings)}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m packproof.evals.bench.evidence_signal",
        description="The label-free evidence signal on LoCoMo and Claude Code sessions.",
    )
    parser.add_argument("--locomo", type=Path, default=LOCOMO, help=f"default: {LOCOMO}")
    parser.add_argument("--sessions", type=Path, default=SESSIONS, help=f"default: {SESSIONS}")
    parser.add_argument("--seed", type=int, default=SEED, help=f"default: {SEED}")
    parser.add_argument("--sample", type=int, default=0, help="pairs to draw for a hand check")
    parser.add_argument("--empty", type=int, default=0, help="steps without evidence to draw")
    args = parser.parse_args(argv)
    if args.locomo.is_file():
        _locomo_report(args.locomo, args.seed)
    else:
        print(f"LoCoMo skipped: no file at {args.locomo}", file=sys.stderr)
    if args.sessions.is_dir():
        _sessions_report(args.sessions, args.seed, args.sample, args.empty)
    else:
        print(f"Claude Code sessions skipped: no folder at {args.sessions}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
