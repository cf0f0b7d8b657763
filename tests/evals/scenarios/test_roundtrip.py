"""Compile round trip: YAML -> JSONL -> loaded scenario equals the source after
normalisation, and compiling is byte-stable."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from packproof.evals.scenarios.compile import compile_sources, load_sources, write_compiled
from packproof.evals.scenarios.format import load_compiled
from packproof.packer.jsonio import dumps
from packproof.packer.request import parse_request, request_to_json

TEXT = st.lists(st.sampled_from(["alpha", "beta", "数据库", "😀", "naïve", "x"]), max_size=5).map(
    " ".join
)
ROLE = st.sampled_from(["user", "assistant", "tool", "system"])


@st.composite
def item(draw: st.DrawFn, ident: str) -> Any:
    if draw(st.booleans()):  # compact form
        if draw(st.booleans()):
            return [ident, draw(ROLE), draw(TEXT)]
        return [ident, draw(ROLE), draw(st.none() | st.integers(0, 20)), draw(TEXT)]
    full: dict[str, Any] = {"id": ident, "text": draw(TEXT)}
    for key, values in (
        ("kind", st.sampled_from(["message", "summary", "memory"])),
        ("trust", st.sampled_from(["trusted", "unknown", "quarantined"])),
        ("tokens", st.integers(0, 20)),
        ("anchored", st.booleans()),
        ("mentions", st.integers(0, 4)),
        ("category", st.sampled_from(["a", "b"])),
        # a memory store's record fields (packer/records.py)
        ("ts", st.none() | st.sampled_from(["2026-07-19T00:00:00Z", "yesterday"])),
        ("record_kind", st.none() | st.sampled_from(["event", "Decision"])),
        ("lifecycle", st.sampled_from(["active", "stale", "soft-archived"])),
        ("used_count", st.integers(0, 9)),
        ("importance_score", st.none() | st.sampled_from([0.0, 0.5, 0.85, 1])),
        ("supersedes", st.lists(st.sampled_from(["i0", "gone"]), max_size=2)),
        ("synthesis", st.none() | st.fixed_dictionaries({"sources": st.just(["i0", "x"])})),
    ):
        if draw(st.booleans()):
            full[key] = draw(values)
    return full


@st.composite
def scenario_file(draw: st.DrawFn) -> dict[str, Any]:
    scenarios = []
    for s in range(draw(st.integers(1, 3))):
        n = draw(st.integers(0, 6))
        items = [draw(item(f"i{k}")) for k in range(n)]
        sc: dict[str, Any] = {
            "id": f"rt-{s}",
            "why": "A generated scenario for the compile round trip.",
            "tags": ["generated"],
            "request": {
                "budget_tokens": draw(st.integers(1, 50)),
                "items": items,
                "fresh_tail": {"count": draw(st.integers(0, 3))},
                "token_counter": draw(st.sampled_from(["lcm", "chars4"])),
            },
        }
        if draw(st.booleans()):
            sc["request"]["retrieval"] = {"fts": ["i0", "gone"][: draw(st.integers(0, 2))]}
        if draw(st.booleans()) or not n:
            sc["request"]["prompt"] = draw(st.none() | TEXT)
            sc["expect"] = {"*": {"mode": "full-fit"}} if draw(st.booleans()) else {}
            if n:
                sc["relevant"] = [f"i{draw(st.integers(0, n - 1))}"]
        else:
            sc["turns"] = [
                {
                    "prompt": draw(TEXT),
                    "items": [draw(item(f"t{t}-{k}")) for k in range(draw(st.integers(0, 2)))],
                }
                for t in range(draw(st.integers(1, 3)))
            ]
        scenarios.append(sc)
    out: dict[str, Any] = {"schema": "packproof.scenarios.v1", "scenarios": scenarios}
    if draw(st.booleans()):
        out["defaults"] = {"item": {"importance": "nice_to_have"}}
    return out


@given(source=scenario_file())
def test_yaml_to_jsonl_and_back(source: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "generated.yaml"
        path.write_text(yaml.safe_dump(source, allow_unicode=True, sort_keys=False), "utf-8")
        loaded = load_sources([path])
        texts = compile_sources(loaded)
        assert compile_sources(load_sources([path])) == texts  # byte-stable
        (target,) = write_compiled(texts)
        back = load_compiled(target)
        assert back == loaded[path]  # the loaded mirror equals the normalised source
        for sc in back:
            assert sc.line >= 1 and sc.file == "generated.yaml"
            for turn in sc.turns:
                again = request_to_json(parse_request(turn.request), with_strategy=False)
                assert dumps(again) == dumps(turn.request)  # normalisation is a fixed point
        assert [sc.id for sc in back] == [s["id"] for s in source["scenarios"]]
