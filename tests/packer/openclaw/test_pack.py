"""openclaw-mem's pack through packproof's pipeline: hand-computed cases for the
rules the steps' own tests do not reach, read from the pack and its receipts."""

from __future__ import annotations

from typing import Any

from packproof.packer import pack
from packproof.packer.explain import explain_table
from packproof.packer.result import PackResult
from packproof.packer.schema import validate

CLOCK = "2026-07-19T12:00:00+00:00"


def record(n: int, text: str = "", **fields: Any) -> dict[str, Any]:
    """Observation ``n`` as the importer writes it."""
    return {
        "id": f"obs:{n}",
        "ordinal": n,
        "kind": "memory",
        "text": text or f"record {n}",
        **fields,
    }


def tail(k: int, last: int, text: str) -> dict[str, Any]:
    return {"id": f"tail:{k}", "ordinal": last + k, "kind": "message", "text": text}


def run(
    items: list[dict[str, Any]],
    budget: int = 100,
    retrieval: dict[str, list[str]] | None = None,
    **params: Any,
) -> PackResult:
    extra: dict[str, Any] = {}
    for key in ("max_items", "trust_policy", "prompt"):
        if key in params:
            extra[key] = params.pop(key)
    request: dict[str, Any] = {
        "items": items,
        "budget_tokens": budget,
        "token_counter": "chars4",
        "ts": CLOCK,
        "fresh_tail": {"count": sum(it["id"].startswith("tail:") for it in items)},
        "strategy": {"name": "openclaw-mem", "params": params},
        **extra,
    }
    if retrieval is not None:
        request["retrieval"] = retrieval
    return pack(request)


def receipts(result: PackResult) -> dict[str, Any]:
    extension: dict[str, Any] = result.to_dict()["trace"]["extensions"]["openclaw_mem"]
    return extension


def why(result: PackResult) -> dict[str, list[str]]:
    return {c["id"]: c["reason"] for c in receipts(result)["candidates"]}


def packed(result: PackResult) -> list[str]:
    return [it["recordRef"] for it in result.to_dict()["items"]]


def test_the_bundle_keeps_line_breaks_inside_texts_and_tail_lines_come_last() -> None:
    items = [
        record(1, "one\rtwo"),
        record(2, "para\u2028end"),
        tail(1, 2, "recent"),
    ]
    result = run(items, retrieval={"fts": ["obs:2", "obs:1"]}, tail_budget_tokens=5)
    out = result.to_dict()
    assert out["bundle_text"] == "- [obs:2] para\u2028end\n- [obs:1] one\rtwo\n- [tail:1] recent"
    assert packed(result) == ["obs:2", "obs:1", "tail:1"]
    assert result.selected_ids == ["obs:1", "obs:2", "tail:1"]  # ordinal order
    assert [it["layer"] for it in out["items"]] == ["L1", "L1", "L0"]
    assert validate("pack", out) == []


def test_ids_that_are_not_items_take_part_in_fusion_and_the_cut_then_drop() -> None:
    """limit 1: candidate_limit 9. obs:99 is no item: it takes fused rank 2 and
    the cut keeps nine ids, so obs:10 (fused tenth) is cut before the ids are checked."""
    items = [*(record(n) for n in range(1, 9)), record(10)]
    fts = ["obs:1", "obs:99", *(f"obs:{n}" for n in range(2, 9)), "obs:10"]
    result = run(items, retrieval={"fts": fts}, max_items=1)
    assert [c["id"] for c in receipts(result)["candidates"]] == [f"obs:{n}" for n in range(1, 9)]
    assert result.to_dict()["trace"]["candidates"][8]["decision"]["reason"] == ["not_retrieved"]


def test_a_pulled_in_card_is_unknown_bypasses_trust_and_sorts_by_the_relevance_key() -> None:
    """obs:50 is a fresh card over obs:1 and obs:2 that no lane returned. It is
    preferred and read without its detail: importance and trust unknown, no
    final score, no trust decision (its own trust is quarantined), and its
    relevance key (0, 1, 2, ...) sorts after the retrieved card obs:40 whose
    composite key is (0, 1, -final, ...)."""
    items = [
        record(1, trust="trusted"),
        record(2),
        record(3),
        record(40, synthesis={"sources": ["obs:77"], "fresh": False}),
        record(
            50,
            trust="quarantined",
            importance="must_remember",
            synthesis={"sources": ["obs:1", "obs:2"]},
        ),
    ]
    retrieval = {"fts": ["obs:1", "obs:2", "obs:3", "obs:40"]}
    result = run(items, retrieval=retrieval, trust_policy="exclude_quarantined")
    got = receipts(result)
    candidates = {c["id"]: c for c in got["candidates"]}
    assert [c["id"] for c in got["candidates"]] == ["obs:40", "obs:50", "obs:3"]
    card = candidates["obs:50"]
    assert (card["importance"], card["trust"], card["scores"]["rrf"]) == ("unknown", "unknown", 0.0)
    assert "final_score" not in card and "final_score" in candidates["obs:40"]
    assert card["reason"] == ["within_item_limit", "within_budget"]  # no trust reason
    assert candidates["obs:3"]["reason"][0] == "trust_unknown_fail_open"
    assert got["policy"]["graph_preferred_card_refs"] == ["obs:50"]
    assert got["policy"]["graph_covered_raw_refs"] == ["obs:1", "obs:2"]
    assert [d["recordRef"] for d in got["trust_policy"]["decisions"]] == [
        "obs:1",
        "obs:2",
        "obs:3",
        "obs:40",
    ]
    trace = {c["id"]: c["decision"]["reason"] for c in result.to_dict()["trace"]["candidates"]}
    assert trace["obs:1"] == trace["obs:2"] == ["covered_by_synthesis"]


def test_a_quarantined_record_is_excluded_with_its_reason_twice() -> None:
    items = [record(1, trust="quarantined"), record(2, trust="untrusted")]
    result = run(items, retrieval={"fts": ["obs:1", "obs:2"]}, trust_policy="exclude_quarantined")
    assert why(result) == {
        "obs:2": ["trust_allowed", "within_item_limit", "within_budget"],
        "obs:1": ["trust_quarantined_excluded", "trust_quarantined_excluded"],
    }
    trace = {c["id"]: c["decision"]["reason"] for c in result.to_dict()["trace"]["candidates"]}
    assert trace["obs:1"] == ["trust_quarantined_excluded"]  # packproof lists each token once
    assert trace["obs:2"] == ["within_budget", "trust_allowed", "within_item_limit"]


def test_records_openclaw_mem_never_lists_get_packproofs_own_reasons() -> None:
    items = [
        record(1),
        record(2, lifecycle="soft-archived"),
        record(3, supersedes=["obs:1"]),
        record(4),
        record(5, synthesis={"sources": ["obs:6", "obs:7"]}),
        record(6),
        record(7),
    ]
    fts = ["obs:1", "obs:2", "obs:3", "obs:6", "obs:7"]
    result = run(items, retrieval={"fts": fts})
    trace = {c["id"]: c["decision"] for c in result.to_dict()["trace"]["candidates"]}
    assert {ref: d["reason"][0] for ref, d in trace.items()} == {
        "obs:1": "superseded",
        "obs:2": "archived",
        "obs:3": "within_budget",
        "obs:4": "not_retrieved",
        "obs:5": "within_budget",
        "obs:6": "covered_by_synthesis",
        "obs:7": "covered_by_synthesis",
    }
    # included with --include-archived, and then its gate makes its final score 0
    archived = run(items, retrieval={"fts": fts}, include_archived="on")
    listed = {c["id"]: c for c in receipts(archived)["candidates"]}
    assert listed["obs:2"]["final_score"] == 0.0


def test_tail_slots_are_reserved_for_lines_that_cannot_fit() -> None:
    """POLICY.md 15.2: limit 2 and two tail lines reserve both slots, although the
    second line cannot fit the 3-token tail budget; no memory slot is left."""
    items = [record(1, "a"), tail(1, 1, "x"), tail(2, 1, "y" * 40)]
    result = run(items, retrieval={"fts": ["obs:1"]}, max_items=2, tail_budget_tokens=3)
    assert why(result) == {
        "obs:1": ["max_items_reached"],
        "tail:1": ["protected_tail", "within_item_limit", "within_tail_budget"],
        "tail:2": ["protected_tail", "tail_budget_tokens_exceeded"],
    }
    policy = receipts(result)["policy"]
    assert (policy["primary_item_limit"], policy["tail_reserved_slots"]) == (0, 2)
    assert receipts(result)["tail"] == {
        "requestedCount": 2,
        "includedCount": 1,
        "budgetTokens": 3,
        "usedTokens": 1,
    }
    assert (result.remaining_tokens, result.evictable_slots, result.tail_tokens) == (97, 0, 1)


def test_tail_max_items_cuts_older_lines_and_zero_keeps_them_all() -> None:
    items = [record(1), *(tail(k, 1, f"line {k}") for k in range(1, 4))]
    cut = run(items, retrieval={"fts": []}, tail_max_items=2, tail_budget_tokens=50)
    assert [c["id"] for c in receipts(cut)["candidates"]] == ["tail:2", "tail:3"]
    trace = {c["id"]: c["decision"]["reason"] for c in cut.to_dict()["trace"]["candidates"]}
    assert trace["tail:1"] == ["beyond_tail_max_items"]
    every = run(items, retrieval={"fts": []}, tail_max_items=0, tail_budget_tokens=50)
    assert packed(every) == ["tail:1", "tail:2", "tail:3"]


def test_without_retrieval_the_lexical_lane_is_bm25() -> None:
    items = [record(1, "deploy the service"), record(2, "lunch"), record(3, "deploy again")]
    result = run(items, prompt="deploy")
    got = receipts(result)["candidates"]
    assert {c["id"] for c in got} == {"obs:1", "obs:3"}
    assert all(c["scores"]["fts"] == 1.0 and c["scores"]["semantic"] == 0.0 for c in got)
    assert result.to_dict()["trace"]["query_terms"] == ["deploy"]
    assert run(items).to_dict()["bundle_text"] == ""  # no prompt, no lane, no memory


def test_the_relevance_profile_orders_by_importance_and_has_no_final_score() -> None:
    items = [record(1, importance="ignore"), record(2, importance="must_remember")]
    result = run(items, retrieval={"fts": ["obs:1", "obs:2"]}, profile="relevance")
    got = receipts(result)
    assert [c["id"] for c in got["candidates"]] == ["obs:2", "obs:1"]
    assert all("final_score" not in c for c in got["candidates"])
    assert got["scoring_profile"] == "relevance"


def test_an_empty_text_counts_zero_tokens_and_is_never_packed() -> None:
    items = [record(1), {**record(2), "text": ""}]
    result = run(items, retrieval={"fts": ["obs:2", "obs:1"]})
    assert [(c["id"], c["tokens"], c["reason"]) for c in receipts(result)["candidates"]] == [
        ("obs:2", 0, ["missing_summary"]),
        ("obs:1", 2, ["within_item_limit", "within_budget"]),
    ]


def test_quota_hits_are_finalised_and_counts_cover_every_listed_candidate() -> None:
    items = [
        record(1, record_kind="event"),
        record(2, record_kind="event"),
        record(3, record_kind="preference", text="x" * 400),
    ]
    result = run(items, retrieval={"fts": ["obs:1", "obs:2", "obs:3"]}, max_items=3, budget=20)
    got = receipts(result)
    assert [c["id"] for c in got["candidates"]] == ["obs:3", "obs:1", "obs:2"]
    assert got["quota_hits"] == [{"kind": "event", "action": "capped", "refs": ["obs:2"]}]
    assert got["counts"] == {"included": 1, "excluded": 2}
    off = receipts(run(items, retrieval={"fts": ["obs:1"]}, quotas="off"))
    assert "quota_hits" not in off and "trust_policy" not in off and "tail" not in off


def test_the_pack_renders_explains_and_traces_at_every_level() -> None:
    items = [record(1, "deploy"), record(2, "deploy now"), tail(1, 2, "and now?")]
    result = run(items, prompt="deploy", tail_budget_tokens=10)
    table = explain_table(result)
    assert "kept (tail)" in table and "not_retrieved" not in table
    light = result.to_dict(trace="decisions")
    assert validate("pack", light) == []
    assert "openclaw_mem" in light["trace"]["extensions"]
    assert "trace" not in result.to_dict(trace="none")
    assert result.to_json() == result.to_json()  # canonical, repeatable
