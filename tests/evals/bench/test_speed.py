"""The speed summary: every benchmark's targets (figure, floor, ratio, met)
collected in `make bench` order into speed.md and between the README's markers,
nothing else of the README touched; a README without the markers is one line,
exit 2, and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from packproof.evals.bench.speed import BEGIN, END, main
from tests.paths import ROOT

README = f"# Tool\n\nintro\n\n### Speed\n\n{BEGIN}\nold figures\n{END}\n\n## After\n"


def _bench(folder: Path) -> None:
    folder.mkdir()
    (folder / "pack.json").write_text(
        json.dumps(
            {
                "targets": [
                    {
                        "target": "bm25 pack <= 1.5 x tokenize",
                        "measured": 0.75,
                        "floor": 1.5,
                        "ratio": 0.5,
                        "at_most": True,
                        "met": True,
                    }
                ]
            }
        )
    )
    (folder / "replay.json").write_text(
        json.dumps(
            {
                "chitchat": {
                    "targets": [
                        {
                            "target": "10000-message replay, bm25",
                            "measured": 250.0,
                            "floor": 1000.0,
                            "ratio": 0.25,
                            "unit": "steps/s",
                            "at_most": False,
                            "met": False,
                        }
                    ]
                },
                "locomo_grid": None,
            }
        )
    )


def test_every_target_lands_between_the_readme_markers(tmp_path: Path) -> None:
    _bench(tmp_path / "bench")
    readme = tmp_path / "README.md"
    readme.write_text(README)
    assert main(["--bench", str(tmp_path / "bench"), "--readme", str(readme)]) == 0
    text = readme.read_text()
    assert text.startswith("# Tool\n\nintro\n\n### Speed\n\n" + BEGIN + "\n")
    assert text.endswith(END + "\n\n## After\n") and "old figures" not in text
    assert "| the packer | bm25 pack <= 1.5 x tokenize | 0.75 | <= 1.5 | 0.50 | yes |" in text
    assert (
        "| replays | 10000-message replay, bm25 | 250 steps/s | >= 1,000 steps/s | 0.25 | **no** |"
        in text
    )
    assert "<details><summary>1 of 2 targets met</summary>" in text
    assert "Not run: eval.json, cache.json." in text
    section = text[text.index(BEGIN) + len(BEGIN) + 1 : text.index(END)]
    assert (tmp_path / "bench" / "speed.md").read_text() == "# Speed\n\n" + section


def test_a_readme_without_the_markers_is_one_line_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _bench(tmp_path / "bench")
    readme = tmp_path / "README.md"
    readme.write_text("# Tool\n")
    assert main(["--bench", str(tmp_path / "bench"), "--readme", str(readme)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the speed markers are missing" in err[0]
    assert readme.read_text() == "# Tool\n" and not (tmp_path / "bench" / "speed.md").exists()


def test_the_readme_has_one_speed_section() -> None:
    text = (ROOT / "README.md").read_text("utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1 and text.index(BEGIN) < text.index(END)
