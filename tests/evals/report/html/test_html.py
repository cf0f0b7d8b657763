"""report.html and the plots: one self-contained page where markup in the data is
shown as text and never run, with three decodable PNG plots; checked on the raw
HTML and, when chromium is installed, in a real headless browser."""

from __future__ import annotations

import base64
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from packproof.evals.report.renderers import RENDERERS
from packproof.evals.run.evaluate import evaluate
from packproof.evals.scenarios.compile import compile_sources, load_sources, write_compiled
from tests.evals.report.html.browser import chromium, headless

PLOTS = ("recall_vs_budget.png", "recall_vs_stability.png", "latency.png")
SCRIPT = "<script>document.title='PWNED'</script>"
IMG = "<img src=x onerror=\"document.title='PWNED'\">"
EVIL_ID = "<i>evil</i>"
# As html.escape writes them into the page source ...
SCRIPT_ESCAPED = "&lt;script&gt;document.title=&#x27;PWNED&#x27;&lt;/script&gt;"
IMG_ESCAPED = "&lt;img src=x onerror=&quot;document.title=&#x27;PWNED&#x27;&quot;&gt;"
# ... and as a browser serialises the same text nodes (quotes left alone).
SCRIPT_IN_DOM = "&lt;script&gt;document.title='PWNED'&lt;/script&gt;"
IMG_IN_DOM = "&lt;img src=x onerror=\"document.title='PWNED'\"&gt;"

SCENARIOS = {
    "schema": "packproof.scenarios.v1",
    "defaults": {"request": {"fresh_tail": {"count": 1}}},
    "scenarios": [
        {
            "id": "markup-in-item-text",
            "why": "Item texts, ids and prompts hold <b>markup</b> & scripts: shown, never run.",
            "tags": ["xss"],
            "request": {
                "budget_tokens": 24,
                "prompt": f"{SCRIPT} deploy branch?",
                "items": [
                    ["x1", "assistant", 10, f"{SCRIPT} deploy notes"],
                    [EVIL_ID, "assistant", 10, f"{IMG} deploy branch is release"],
                    ["n1", "assistant", 10, "Lunch order closes at noon."],
                    ["q", "user", 2, "deploy branch?"],
                ],
            },
            "relevant": [EVIL_ID],
            # deliberately wrong, so the failures section lists a message naming EVIL_ID
            "expect": {"bm25": {"selected": ["q"]}},
        },
        {
            "id": "two-turns",
            "why": "A conversation, so prefix stability has a value.",
            "request": {
                "budget_tokens": 22,
                "items": [
                    ["db", "assistant", 10, "Database password rotates every Monday."],
                    ["css", "assistant", 10, "Card CSS switched to min-height."],
                    ["lun", "assistant", 10, "Lunch order closes at noon."],
                ],
            },
            "turns": [
                {
                    "items": [["q0", "user", 2, "database password?"]],
                    "prompt": "database password?",
                    "relevant": ["db"],
                },
                {
                    "items": [["q1", "user", 2, "card css?"]],
                    "prompt": "card css?",
                    "relevant": ["css"],
                },
            ],
        },
    ],
}


def build(root: Path) -> Path:
    """Compile the scenarios above, run a small grid and return the run directory."""
    source = root / "scenarios" / "markup.yaml"
    source.parent.mkdir(parents=True)
    source.write_text(json.dumps(SCENARIOS))  # JSON is YAML
    (compiled,) = write_compiled(compile_sources(load_sources([source])))
    (root / "evals").mkdir()
    config = root / "evals" / "cfg.yaml"
    config.write_text(
        json.dumps(
            {
                "schema": "packproof.eval.v1",
                "name": "html",
                "suites": [str(compiled)],
                "strategies": ["chronological", "bm25", "hybrid"],
                "budgets": ["scenario", 8, 16, 32],
                "bootstrap": {"resamples": 200},
            }
        )
    )
    return evaluate(config, out_root=root / "reports", jobs=1, executor="serial", resume=True)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("html"))


class Page(HTMLParser):
    """Tags, attributes and text of a page; fails on a mis-nested end tag."""

    VOID = frozenset({"meta", "img", "br", "hr", "link", "input", "wbr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.title = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self.stack and self.stack[-1] == "title":
            self.title += data


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    assert page.stack == [], f"unclosed elements: {page.stack}"
    return page


def decode_png(data: bytes) -> tuple[int, int]:
    from PIL import Image

    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    with Image.open(io.BytesIO(data)) as im:
        im.load()
        return im.size


def test_markup_in_the_data_is_text_and_the_page_is_self_contained(run_dir: Path) -> None:
    assert {"report.html", *PLOTS} <= set(RENDERERS)
    raw = (run_dir / "report.html").read_text("utf-8")
    # the data's markup, escaped, and never raw: the page has no script at all
    assert SCRIPT_ESCAPED in raw and IMG_ESCAPED in raw
    assert "&lt;i&gt;evil&lt;/i&gt;" in raw and "&lt;b&gt;markup&lt;/b&gt; &amp; scripts" in raw
    assert "<script" not in raw.lower() and "<img src=x" not in raw and EVIL_ID not in raw
    page = parse(raw)
    assert page.title == "FAILED · packproof eval: html"
    assert not any(name.startswith("on") for _, attrs in page.tags for name in attrs)
    # offline: nothing is fetched (only data: images, no links, scripts or frames)
    assert not {t for t, _ in page.tags} & {"script", "link", "iframe", "object", "embed"}
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", raw)
    text = "".join(page.text)
    assert SCRIPT in text and IMG in text  # what a reader sees
    # the failures section names the failing cell and its (escaped) message
    assert "Failures: 1" in text and "markup-in-item-text#0|bm25(" in text
    assert f"selected ['x1', '{EVIL_ID}', 'q'], expected ['q']" in text
    # the scenarios section: the prompt, and packed ids with their texts
    assert f"{SCRIPT} deploy branch?" in text and "Lunch order closes at noon." in text
    assert "two-turns" in text and "Turn 2 of 2 (#1)" in text
    # the three plots with data, embedded, decodable, and the same bytes as the
    # PNG files; no replay, so no frontier.png, written or embedded
    assert not (run_dir / "frontier.png").exists()
    images = [attrs["src"] or "" for tag, attrs in page.tags if tag == "img"]
    assert len(images) == 3
    assert all(src.startswith("data:image/png;base64,") for src in images)
    embedded = [base64.b64decode(src.split(",", 1)[1], validate=True) for src in images]
    assert embedded == [(run_dir / name).read_bytes() for name in PLOTS]
    for data in embedded:
        width, height = decode_png(data)
        assert width > 400 and height > 200


def test_the_page_leads_with_failed_and_marks_the_failing_scenario(run_dir: Path) -> None:
    raw = (run_dir / "report.html").read_text("utf-8")
    body = raw.split("<body>", 1)[1]
    # the first thing on the page: the word, then where it failed, linked
    head = body[: body.index('<p class="lead">')]
    assert body.index('<span class="badge failed">FAILED</span>') < body.index("packproof eval")
    assert "<strong>FAILED</strong>: 1 failing cell: 1 missed expectations." in head
    assert (
        '<li>✗ missed expectations in 1 scenario: <a href="#sc-markup-in-item-text">'
        "<code>markup/markup-in-item-text</code></a> under " in head
    )
    assert "</span> (turn #0), at own budget</li>" in head
    # the drill-down marks the failing scenario (and only it) with its class
    scenarios = body[body.index('<section id="scenarios">') :]
    assert "Scenarios: 2 <span" in scenarios and "(✗ 1 failing)" in scenarios
    (marked,) = re.findall(r'<details class="scenario failed" id="sc-([^"]+)">', scenarios)
    assert marked == "markup-in-item-text"
    assert '<details class="scenario" id="sc-two-turns">' in scenarios
    summary = scenarios[scenarios.index('id="sc-markup-in-item-text"') :]
    assert summary.index("✗ FAILED") < summary.index("<code>markup-in-item-text</code>")
    assert '<span class="classes">missed expectations</span>' in summary
    assert '<span class="fail">✗</span> Request' in summary  # its failing turn
    # the failures section lists it as a failing scenario, badge and link
    failures = body[body.index('<section id="failures">') : body.index('<section id="scenarios">')]
    assert "<h3>Failing scenarios: 1</h3>" in failures
    assert '<span class="badge failed">✗ FAILED</span>' in failures


def test_summary_md_leads_with_failed_and_lists_the_failing_scenario(run_dir: Path) -> None:
    lines = (run_dir / "summary.md").read_text("utf-8").splitlines()
    assert lines[0] == "# FAILED · packproof eval: html"
    assert lines[2] == "**FAILED**: 1 failing cell: 1 missed expectations."
    assert lines[4] == (
        "- ✗ missed expectations in 1 scenario: `markup/markup-in-item-text` under `bm25` "
        "(turn #0), at own budget"
    )
    assert (
        "| ✗ FAILED | `markup/markup-in-item-text` | `bm25` | own budget | missed expectations "
        "| #0 |" in lines
    )
    assert lines.index("## Verdict") > 4


def test_plots_decode_with_matplotlib(run_dir: Path) -> None:
    import matplotlib.image

    for name in PLOTS:
        pixels = matplotlib.image.imread(run_dir / name)
        assert pixels.ndim == 3 and pixels.shape[0] > 200
        assert len({tuple(p) for p in pixels.reshape(-1, pixels.shape[2])[::7]}) > 20, name


def test_report_html_is_byte_deterministic(run_dir: Path) -> None:
    before = {n: (run_dir / n).read_bytes() for n in ("report.html", *PLOTS)}
    # same records (resumed from results.jsonl, latency included): same bytes
    config = run_dir.parents[2] / "evals" / "cfg.yaml"  # <root>/reports/<name>/<run id>
    again = evaluate(config, out_root=run_dir.parents[1], jobs=1, executor="serial", resume=True)
    assert again == run_dir
    assert {n: (run_dir / n).read_bytes() for n in before} == before


def test_in_a_headless_browser_nothing_runs_and_the_page_renders(
    run_dir: Path, tmp_path: Path
) -> None:
    browser = chromium()
    url = (run_dir / "report.html").resolve().as_uri()

    out = headless(browser, tmp_path / "profile-dom", "--dump-dom", url)
    dom = out.stdout
    assert out.returncode == 0 and "</html>" in dom, out.stderr[-2000:]
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert title is not None and title.group(1) == "FAILED · packproof eval: html"
    assert "PWNED" not in title.group(1)
    assert SCRIPT_IN_DOM in dom and IMG_IN_DOM in dom and "&lt;i&gt;evil&lt;/i&gt;" in dom
    assert "<script" not in dom.lower() and "<img src=x" not in dom
    assert len(re.findall(r'<img src="data:image/png;base64,', dom)) == 3
    assert len(re.findall(r"<img\b", dom)) == 3

    shot = tmp_path / "shot.png"
    out = headless(
        browser,
        tmp_path / "profile-shot",
        f"--screenshot={shot}",
        "--window-size=1280,2000",
        "--hide-scrollbars",
        url,
    )
    assert out.returncode == 0 and shot.exists(), out.stderr[-2000:]
    from PIL import Image

    with Image.open(shot) as im:
        rgb = im.convert("RGB")
        assert rgb.size == (1280, 2000)
        colours = rgb.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 200, "the screenshot is (nearly) blank"
