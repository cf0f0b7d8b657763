"""Safe YAML: a timestamp written plainly stays the text it is written as (no
packproof field is a date), an explicit ``!!timestamp`` is still refused, and
PyYAML's own SafeLoader is left as it was."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
import yaml

from packproof.evals.scenarios.yamlsafe import load_yaml
from packproof.packer.errors import InputError


def loaded(tmp_path: Path, text: str) -> object:
    path = tmp_path / "f.yaml"
    path.write_text(text, "utf-8")
    return load_yaml(path)[0]


@pytest.mark.parametrize(
    "written",
    ["2026-11-01", "2026-11-01 10:30:00", "2001-12-14t21:59:43.10-05:00", "2026-1-5 1:02:03"],
)
def test_a_plain_timestamp_is_the_text_it_is_written_as(tmp_path: Path, written: str) -> None:
    assert loaded(tmp_path, f"date: {written}\nlist: [{written}]\n") == {
        "date": written,
        "list": [written],
    }


def test_a_timestamp_as_a_key_is_a_string_key(tmp_path: Path) -> None:
    assert loaded(tmp_path, "2026-11-01: launch\n") == {"2026-11-01": "launch"}


def test_numbers_and_booleans_still_resolve(tmp_path: Path) -> None:
    text = "a: 1\nb: 1.5\nc: true\nd: null\ne: 2026\nf: '2026-11-01'\n"
    assert loaded(tmp_path, text) == {
        "a": 1,
        "b": 1.5,
        "c": True,
        "d": None,
        "e": 2026,
        "f": "2026-11-01",
    }


def test_an_explicit_timestamp_tag_is_refused_with_its_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"line 2 /b: unsupported YAML type"):
        loaded(tmp_path, "a: 1\nb: !!timestamp 2026-11-01\n")


def test_pyyamls_own_safe_loader_still_makes_dates() -> None:
    assert yaml.safe_load("d: 2026-11-01") == {"d": datetime.date(2026, 11, 1)}
