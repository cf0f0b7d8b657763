"""The eval config (``packproof.eval.v1``): suites, strategy specs, budgets,
statistics settings; validated against ``evals/schemas/eval-config.v1.json``, with
errors naming the file, line and field."""

from __future__ import annotations

import glob
import hashlib
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from packproof.evals.metrics.cache.files import load_profiles
from packproof.evals.metrics.cache.model import Profile
from packproof.evals.metrics.cache.profiles import profiles_from
from packproof.evals.run.packers import NamedPacker, named_packer
from packproof.evals.scenarios.yamlsafe import LineMap, load_yaml
from packproof.evals.schemafiles import best_error, validator, violation
from packproof.packer.errors import InputError, pointer
from packproof.packer.jsonio import dumps
from packproof.packer.packspec import PackSpec, parse_pack_spec

__all__ = ["SCENARIO_BUDGET", "EvalConfig", "config_from", "load_config"]

SCENARIO_BUDGET: Final = "scenario"  # a budget entry: each scenario's own budget
_NAME_MAX: Final = 100  # characters of a run's name (the schema's maxLength)


@dataclass(frozen=True)
class EvalConfig:
    name: str
    suites: tuple[Path, ...]
    specs: tuple[str, ...]  # canonical spec strings, in config order
    budgets: tuple[int | str, ...]
    baseline: str
    resamples: int
    confidence: float
    seed: int
    source: Path
    token_counter: str | None = None
    breakdown_tags: tuple[str, ...] = ()
    # Replays are priced under each of these profiles (in config order) with
    # each static prefix size in front of the pack.
    cache_profiles: Mapping[str, Profile] = field(default_factory=dict)
    static_prefix_tokens: tuple[int, ...] = (0,)
    # Pairs of specs (canonical) the report compares cell by cell, beside the
    # default pairs (each spec against the baseline and against the best spec).
    compare: tuple[tuple[str, str], ...] = ()
    # Named packers (a team's own, docs/external-packers.md) by their spec,
    # which is their name; every other spec is one of packproof's strategies.
    packers: Mapping[str, NamedPacker] = field(default_factory=dict)
    # Only the scenarios with one of these tags (or patterns) run; () runs all.
    tags: tuple[str, ...] = ()
    sha256: str = ""  # of the config's file (or, from Python, of its canonical JSON)

    def strategy(self, spec: str) -> PackSpec:
        """A built-in spec's strategy (a named packer's request strategy)."""
        return parse_pack_spec(self.packers[spec].strategy if spec in self.packers else spec)

    def label(self, spec: str) -> str:
        """What every report calls ``spec``: a named packer's name, else the
        spec without its default-valued parameters."""
        return _label(spec, self.packers)

    @property
    def labels(self) -> dict[str, str]:
        return {s: self.label(s) for s in self.specs}

    def find(self, ref: str) -> str | None:
        """The spec ``ref`` names (:func:`find_spec`), or None."""
        return find_spec(ref, self.specs, self.packers)


def load_config(path: Path) -> EvalConfig:
    """A validated eval config; errors name the file, line and field."""
    data, lines = load_yaml(path)
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise InputError("", f"cannot read file: {exc.strerror}", source=str(path)) from None
    return _config(data, lines, path, digest)


def config_from(data: Mapping[str, Any], folder: Path) -> EvalConfig:
    """An eval config given as a mapping (from Python: :func:`packproof.evaluate`);
    suites are found from ``folder``; errors name the JSON pointer."""
    if not isinstance(data, Mapping):
        raise InputError(
            "", "not an eval config", expected="a mapping", found=data, source="config"
        )
    body = {"schema": "packproof.eval.v1", **data}
    digest = hashlib.sha256(dumps(body).encode("utf-8")).hexdigest()
    return _config(body, _Pointers("config"), folder / "<config>", digest)


class _Pointers(LineMap):
    """A mapping has no lines: its errors name the JSON pointer only."""

    def error(self, where: str, message: str, **detail: Any) -> InputError:
        return InputError(where or "/", message, source=self.source, **detail)


def _nonfinite(value: Any, where: str = "") -> tuple[str, float] | None:
    """The first NaN or infinity in ``value`` and its pointer: YAML's ``.nan`` and
    ``.inf`` are numbers to JSON Schema, and NaN passes every bound it sets."""
    if isinstance(value, float) and not math.isfinite(value):
        return where or "/", value
    if isinstance(value, dict | list):
        pairs = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in pairs:
            found = _nonfinite(item, where + pointer(key))
            if found is not None:
                return found
    return None


def _config(data: Any, lines: LineMap, path: Path, digest: str) -> EvalConfig:
    err = best_error(validator("eval-config.v1.json").iter_errors(data))
    if err is not None:
        where = "".join(f"/{p}" for p in err.absolute_path)
        message, detail = violation(err, yaml=True)
        raise lines.error(where, f"schema violation: {message}", **detail)
    # A suite pattern is relative to the config's folder, and only to it: a pattern
    # that matches nothing there is refused, never looked for in the folder above or
    # the working folder (where another project's suites would run in its place).
    base = path.resolve().parent
    suites: list[Path] = []
    for i, pattern in enumerate(data["suites"]):
        found = sorted(glob.glob(str(base / pattern)))
        if not found:
            raise lines.error(
                f"/suites/{i}",
                f"no scenario file matches {pattern!r} in {str(base)!r} (suites are "
                "relative to the config's folder"
                + (
                    "; compile them: packproof scenarios compile)" if "compiled" in pattern else ")"
                ),
            )
        suites.extend(_tidy(Path(p)) for p in found)
    stems: dict[str, Path] = {}
    for suite in dict.fromkeys(suites):  # a suite's stem names its cells: it must be unique
        if suite.stem in stems:
            raise lines.error(
                "/suites",
                f"two suites named {suite.stem!r} ({stems[suite.stem]} and {suite}): their "
                "cells would collide; rename one",
            )
        stems[suite.stem] = suite
    specs: list[str] = []
    packers: dict[str, NamedPacker] = {}
    for i, text in enumerate(data["strategies"]):
        try:
            if isinstance(text, dict):  # a named packer: its name is its spec
                at = lines.error(f"/strategies/{i}", "")  # where a start failure points
                named = named_packer(text, f"/strategies/{i}", (at.source, at.where))
                spec = named.name
                packers[spec] = named
            else:
                spec = parse_pack_spec(text, f"/strategies/{i}").spec_string()
        except InputError as exc:
            # the line is the entry's; the message names the parameter within it
            inner = exc.where.removeprefix(f"/strategies/{i}").lstrip("/")
            message = f"{inner}: {exc.message}" if inner not in ("", "name") else exc.message
            raise lines.error(
                f"/strategies/{i}", message, expected=exc.expected, found=exc.found
            ) from None
        if spec in specs:
            raise lines.error(f"/strategies/{i}", f"duplicate strategy spec {spec}")
        label = _label(spec, packers)
        if label in (_label(s, packers) for s in specs):
            raise lines.error(f"/strategies/{i}", f"two strategies labelled {label!r}")
        specs.append(spec)
    baseline = specs[0]
    if "baseline_strategy" in data:
        baseline = _resolve(data["baseline_strategy"], specs, packers, lines, "/baseline_strategy")
    compare = tuple(
        (
            _resolve(a, specs, packers, lines, f"/compare/{i}/0"),
            _resolve(b, specs, packers, lines, f"/compare/{i}/1"),
        )
        for i, (a, b) in enumerate(data.get("compare", []))
    )
    for i, (a, b) in enumerate(compare):
        if a == b:
            raise lines.error(f"/compare/{i}", f"compares {a} with itself")
    nonfinite = _nonfinite(data)  # (after the strategies: a packer names its own)
    if nonfinite is not None:
        where, value = nonfinite
        raise lines.error(where, "not a finite number", expected="a number", found=value)
    boot = data.get("bootstrap", {})
    cache = data.get("cache", {})
    return EvalConfig(
        name=_name(data, path, lines),
        suites=tuple(dict.fromkeys(suites)),
        specs=tuple(specs),
        budgets=tuple(_whole(b) for b in data.get("budgets", [SCENARIO_BUDGET])),
        baseline=baseline,
        resamples=_whole(boot.get("resamples", 2000)),
        confidence=float(boot.get("confidence", 0.95)),
        seed=_whole(data.get("seed", 0)),
        source=path,
        token_counter=data.get("token_counter"),
        breakdown_tags=tuple(data.get("breakdown_tags", [])),
        cache_profiles=_cache_profiles(cache, lines),
        static_prefix_tokens=tuple(_whole(n) for n in cache.get("static_prefix_tokens", [0])),
        compare=compare,
        packers=packers,
        sha256=digest,
    )


def _tidy(path: Path) -> Path:
    """``path`` without ``..`` and ``.`` parts (``evals/../scenarios/x.jsonl`` is
    ``scenarios/x.jsonl``, one suite however it is reached), unless that is not
    the same file (a ``..`` after a symbolic link)."""
    tidy = Path(os.path.normpath(path))
    return tidy if tidy.exists() and os.path.samefile(tidy, path) else path


def _name(data: Mapping[str, Any], path: Path, lines: LineMap) -> str:
    """The run's name: ``name``, else the config file's stem, which must then
    fit the schema's bound too (it names the run's folder)."""
    if "name" in data:
        return str(data["name"])
    if len(path.stem) > _NAME_MAX:
        raise lines.error(
            "/",
            "the config file's name is too long to name its runs: give the config a name",
            expected=f"a name of at most {_NAME_MAX} characters",
            found=path.stem,
        )
    return path.stem


def _whole(value: Any) -> Any:
    """An integer the schema accepted as one: JSON Schema's "integer" takes
    ``2000.0`` too, which numpy, array('q') and the cells' budget labels do not."""
    return int(value) if isinstance(value, float) else value


def _label(spec: str, packers: Mapping[str, NamedPacker]) -> str:
    return spec if spec in packers else parse_pack_spec(spec).label()


def _resolve(
    ref: str, specs: list[str], packers: Mapping[str, NamedPacker], lines: LineMap, where: str
) -> str:
    """The strategy ``baseline_strategy`` or a ``compare`` entry names
    (:func:`find_spec`), or an error naming the line."""
    spec = find_spec(ref, specs, packers)
    if spec is None:
        raise lines.error(
            where,
            "not one of the configured strategies",
            expected=" | ".join(_label(s, packers) for s in specs),
            found=ref,
        )
    return spec


def find_spec(ref: str, specs: Sequence[str], packers: Mapping[str, NamedPacker]) -> str | None:
    """The configured spec ``ref`` names: by its label (a named packer by its
    name), as written, or in its canonical form; None if none."""
    by_label = {_label(s, packers): s for s in specs}
    if ref in by_label:
        return by_label[ref]
    try:
        spec = parse_pack_spec(ref).spec_string()
    except InputError:
        return None
    return spec if spec in specs else None


def _cache_profiles(cache: Mapping[str, Any], lines: LineMap) -> dict[str, Profile]:
    """The profiles a replay is priced under: the shipped ones with the config's
    own added (or replacing), narrowed to ``profiles`` when it is given."""
    known = load_profiles()
    if "custom_profiles" in cache:
        known.update(profiles_from(cache["custom_profiles"], lines, "/cache/custom_profiles"))
    names = cache.get("profiles", list(known))
    for i, name in enumerate(names):
        if name not in known:
            raise lines.error(
                f"/cache/profiles/{i}",
                "unknown cache profile",
                expected="one of " + ", ".join(sorted(known)),
                found=name,
            )
    return {name: known[name] for name in names}
