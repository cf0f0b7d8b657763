"""report.html is legible at 1280 and 1920 pixels: laid out by headless
Chromium, no table is wider than its box, no cell's content overflows it and
the page never scrolls sideways. The run prices replays, so the verdict names a
cost and a cheapest spec within 90% of the best, and its specs have long labels
with no space in them (``bm25+cache(low_water=0.5,recall_share=0.3,...)``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from packproof.evals.run.evaluate import evaluate
from packproof.evals.scenarios.compile import compile_sources, load_sources, write_compiled
from tests.evals.report.html.browser import measure

WIDTHS = (1280, 1920)
STRATEGIES = [
    "chronological",
    "bm25",
    "bm25+cache(low_water=0.4,recall_share=0.3,placement=first)",
    "bm25+cache(low_water=0.5,recall_share=0.3,recall_depth=40)",
    "hybrid+cache(low_water=0.4,recall_share=0.3)",
]
TOPICS = ["zebra paddock", "release branch", "database password", "card css", "lunch order"]


def conversation(name: str, shift: int) -> dict[str, Any]:
    """Ten timed steps of about 120 tokens, then two probes about early steps."""
    turns: list[dict[str, Any]] = []
    for i in range(10):
        topic = TOPICS[(i + shift) % len(TOPICS)]
        role = "user" if i % 2 == 0 else "assistant"
        turns.append({"t": 30 * i, "items": [[f"{name}{i}", role, 120, f"{topic} note {i}"]]})
    turns += [
        {"t": 400, "probe": True, "prompt": f"what about the {TOPICS[shift]}?"},
        {"t": 410, "probe": True, "prompt": f"and the {TOPICS[shift + 1]}?"},
    ]
    turns[-2]["relevant"] = [f"{name}0"]
    turns[-1]["relevant"] = [f"{name}1"]
    return {
        "id": f"talk-{name}",
        "why": "A replayed conversation, priced under two cache profiles.",
        "request": {"budget_tokens": 600, "fresh_tail": {"count": 1}, "items": []},
        "turns": turns,
    }


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("widths")
    source = root / "scenarios" / "talks.yaml"
    source.parent.mkdir(parents=True)
    scenarios = [conversation("a", 0), conversation("b", 2)]
    source.write_text(json.dumps({"schema": "packproof.scenarios.v1", "scenarios": scenarios}))
    (compiled,) = write_compiled(compile_sources(load_sources([source])))
    config = root / "cfg.yaml"
    config.write_text(
        json.dumps(
            {
                "schema": "packproof.eval.v1",
                "name": "widths",
                "suites": [str(compiled)],
                "strategies": STRATEGIES,
                "budgets": [400, 800],
                "bootstrap": {"resamples": 200},
                "cache": {"profiles": ["anthropic", "openai"], "static_prefix_tokens": [0, 2000]},
            }
        )
    )
    run = evaluate(config, out_root=root / "reports", jobs=1, executor="serial", resume=False)
    return run / "report.html"


@pytest.mark.parametrize("width", WIDTHS)
def test_no_table_is_clipped_and_the_page_never_scrolls_sideways(
    page: Path, width: int, tmp_path: Path
) -> None:
    raw = page.read_text("utf-8")
    assert "cheapest within 90% of the best" in raw and 'id="cache"' in raw
    laid = measure(page, width, tmp_path)
    assert laid["window"] == width
    assert laid["page"] <= width
    assert len(laid["tables"]) > 10
    assert [t for t in laid["tables"] if t["width"] > t["room"]] == []
    assert laid["cells"] == []


def test_the_measure_sees_a_table_wider_than_its_box(tmp_path: Path) -> None:
    wide = "<td>" + "x" * 400 + "</td>"
    page = tmp_path / "wide.html"
    page.write_text(
        '<!DOCTYPE html><html><body><div style="width: 300px; overflow-x: auto">'
        f"<table><tr>{wide}</tr></table></div>"
        '<div style="width: 300px"><table style="table-layout: fixed; width: 300px">'
        f"<tr>{wide}</tr></table></div></body></html>"
    )
    laid = measure(page, 1280, tmp_path)
    first, second = laid["tables"]
    assert first["width"] > first["room"] == 300 and first["scrolls"]
    assert second["width"] == second["room"] == 300 and not second["scrolls"]
    (cell,) = laid["cells"]
    assert cell["width"] > cell["room"]
