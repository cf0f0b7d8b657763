"""A suite of an eval config: a compiled mirror (``scenarios/compiled/x.jsonl``)
or a YAML scenario file itself (``scenarios/x.yaml``), compiled in memory.

A compiled mirror beside its source (``scenarios/x.yaml`` for
``scenarios/compiled/x.jsonl``) must be what that source compiles to: one
older than its source is refused with one line naming the scenarios that
changed, before any cell runs, so a run never measures scenarios that are no
longer the ones a reviewer reads. (The check compares contents, not file
times, which a git checkout does not keep.)
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Final

from packproof.evals.scenarios.compile import compile_sources, load_sources, stale_detail
from packproof.evals.scenarios.format import Scenario, parse_compiled, read_compiled
from packproof.packer.errors import InputError

__all__ = ["SOURCE_SUFFIXES", "load_suite", "source_of"]

SOURCE_SUFFIXES: Final = (".yaml", ".yml")


def source_of(mirror: Path) -> Path | None:
    """The YAML source a compiled mirror was compiled from, if it is beside it."""
    if mirror.parent.name != "compiled":
        return None
    for suffix in SOURCE_SUFFIXES:
        source = mirror.parent.parent / f"{mirror.stem}{suffix}"
        if source.is_file():
            return source
    return None


def _stamp(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except OSError:
        return (0, 0)
    return (stat.st_mtime_ns, stat.st_size)


def load_suite(path: Path) -> list[Scenario]:
    """The scenarios of one suite (see the module docstring); loaded once per
    process while its files are unchanged (the runner asks more than once)."""
    source = path if path.suffix in SOURCE_SUFFIXES else source_of(path)
    return list(_load(path, _stamp(path), _stamp(source) if source else None))


@lru_cache(maxsize=64)
def _load(
    path: Path, stamp: tuple[int, int], source_stamp: tuple[int, int] | None
) -> tuple[Scenario, ...]:
    if path.suffix in SOURCE_SUFFIXES:
        text = compile_sources(load_sources([path]))[path]
        return tuple(parse_compiled(text, path))
    current = read_compiled(path)  # read once: checked, then compared with its source
    scenarios = parse_compiled(current, path)
    source = source_of(path)
    if source is not None:
        text = compile_sources(load_sources([source]))[source]
        if current != text:
            raise InputError(
                "",
                f"compiled mirror older than its source {source} "
                f"({stale_detail(current, text, most=3)}): run `packproof scenarios compile`, "
                "or give the YAML file as the suite",
                source=str(path),
            )
    return tuple(scenarios)
