"""Every command the README and docs/ show, as shown.

- A ``sh`` block is run, line by line, by bash in a sandbox, with the installed
  package's commands first on PATH. The sandbox is named by a marker before the
  block, ``<!-- run: CONTEXT; exit: CODES -->`` (default: ``project``, exit 0):
  ``empty`` (an empty folder), ``project`` (``packproof init`` and ``scenarios
  compile`` done), ``suites`` (a copy of this repository's ``scenarios/``).
  Blocks of the same document marked ``<!-- file: NAME -->`` (or the older
  ``<!-- example: NAME -->``) are written into the sandbox first, and a YAML
  block marked ``<!-- merge: FILE -->`` updates FILE's keys. A line may exit
  with one of CODES and nothing else: never a usage error or a crash.
- ``pip install`` lines are not run (the packages are installed: ``make
  installed`` installs the wheel): the extras they name must exist. ``make``
  lines are dry-run (``make -n``): running ``make test`` from a test would
  recurse.
- Every other line that starts with ``packproof`` (a synopsis, or a transcript's
  ``$ packproof ...``) names a command that exists, with options it has;
  ``pytest --packproof-...`` options are the plugin's; ``python -m MODULE``
  modules exist.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest
import yaml

from packproof.cli import build_parser
from tests.paths import ROOT

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BIN = Path(sys.executable).parent
_BLOCK = re.compile(r"((?:[ \t]*<!--[^\n]*-->\n)*)[ \t]*```(\w*)\n(.*?)```", re.S)
_MARK = re.compile(r"<!--\s*(\w+):\s*(.*?)\s*-->")
_RC = "__packproof_docs_rc="


@dataclass(frozen=True)
class Block:
    document: Path
    line: int
    language: str
    text: str
    marks: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"


def blocks(document: Path) -> Iterator[Block]:
    text = document.read_text("utf-8")
    for m in _BLOCK.finditer(text):
        marks = dict(_MARK.findall(m.group(1)))
        line = text.count("\n", 0, m.start(2)) + 1
        yield Block(document, line, m.group(2), textwrap.dedent(m.group(3)), marks)


def commands(block: Block) -> list[str]:
    """A sh block's command lines, without their comments."""
    out = []
    for raw in block.text.splitlines():
        line = raw.split(" #")[0].strip() if not raw.lstrip().startswith("#") else ""
        if line:
            out.append(line)
    return out


SH_BLOCKS = [b for d in DOCUMENTS for b in blocks(d) if b.language == "sh"]


# ------------------------------------------------------------------ sandboxes


def _sh(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    return subprocess.run(
        ["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


@cache
def _starter(root: Path) -> Path:
    """One initialised, compiled project, copied for every block that needs one."""
    folder = root / "starter"
    folder.mkdir()
    done = _sh("packproof init && packproof scenarios compile", folder)
    assert done.returncode == 0, done.stderr
    return folder


def sandbox(block: Block, tmp: Path, cache_root: Path) -> Path:
    context = block.marks.get("run", "project").split(";")[0].strip()
    folder = tmp / "sandbox"
    if context == "project":
        shutil.copytree(_starter(cache_root), folder, symlinks=True)
    elif context == "suites":
        shutil.copytree(ROOT / "scenarios", folder / "scenarios")
    elif context == "empty":
        folder.mkdir()
    else:
        raise AssertionError(f"{block.where}: unknown run context {context!r}")
    for other in blocks(block.document):
        name = other.marks.get("file") or other.marks.get("example")
        if name:
            (folder / name).write_text(other.text, "utf-8")
        if other.marks.get("merge"):
            target = folder / other.marks["merge"]
            data = yaml.safe_load(target.read_text("utf-8"))
            data.update(yaml.safe_load(other.text))
            target.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    return folder


def allowed_codes(block: Block) -> set[int]:
    """``exit: 0,1`` in the block's run marker (default: 0)."""
    options = (part.partition(":") for part in block.marks.get("run", "").split(";")[1:])
    spec = {key.strip(): value.strip() for key, _, value in options}
    return {int(code) for code in spec.get("exit", "0").split(",")}


# ------------------------------------------------------------------ special lines


@cache
def _extras() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    return set(project["optional-dependencies"])


def check_pip(line: str, where: str) -> None:
    named = re.findall(r"packproof\[([\w,]+)\]", line)
    assert named, f"{where}: a pip line that installs no packproof extra: {line}"
    for extras in named:
        unknown = set(extras.split(",")) - _extras()
        assert not unknown, f"{where}: no such extra {sorted(unknown)} in pyproject.toml"


def check_make(line: str, where: str) -> None:
    target = line.split()[1]
    done = subprocess.run(
        ["make", "-n", target], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"{where}: make {target}: {done.stderr}"


# ------------------------------------------------------------------ the runs


@pytest.mark.parametrize("block", SH_BLOCKS, ids=[b.where for b in SH_BLOCKS])
def test_every_shell_block_runs_as_shown(
    block: Block, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    lines = commands(block)
    assert lines, f"{block.where}: an empty sh block"
    runnable = []
    for line in lines:
        if line.startswith("pip install"):
            check_pip(line, block.where)
        elif line.startswith("make "):
            check_make(line, block.where)
        else:
            runnable.append(line)
    if not runnable:
        return
    folder = sandbox(block, tmp_path, tmp_path_factory.getbasetemp())
    script = "".join(f'{line}\necho "{_RC}$?"\n' for line in runnable)
    done = _sh(script, folder)
    codes = [int(m) for m in re.findall(rf"^{_RC}(\d+)$", done.stdout, re.M)]
    assert len(codes) == len(runnable), (block.where, done.stdout[-2000:], done.stderr[-2000:])
    allowed = allowed_codes(block)
    for line, code in zip(runnable, codes, strict=True):
        assert code in allowed, (
            f"{block.where}: `{line}` exited {code} (allowed {sorted(allowed)})\n"
            f"{done.stdout[-1500:]}\n{done.stderr[-1500:]}"
        )


def test_the_markers_name_known_contexts_and_files_that_exist() -> None:
    """A marker with a typo would silently change what a block runs in."""
    for document in DOCUMENTS:
        for block in blocks(document):
            for key in block.marks:
                assert key in {"run", "file", "example", "merge", "ci"}, (block.where, key)


# ------------------------------------------------------------------ synopses


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def packproof_lines() -> Iterator[tuple[str, str]]:
    """Every line outside sh blocks that starts with a packproof command."""
    for document in DOCUMENTS:
        for block in blocks(document):
            if block.language == "sh":
                continue
            for number, raw in enumerate(block.text.splitlines(), block.line + 1):
                line = raw.strip().removeprefix("$ ")
                if re.match(r"packproof\s+[a-z]", line):
                    yield f"{document.relative_to(ROOT)}:{number}", line.split(" #")[0]


def test_every_packproof_command_shown_exists_with_the_options_shown() -> None:
    subcommands = _subcommands()
    problems = []
    for where, line in packproof_lines():
        name = line.split()[1]
        if name not in subcommands:
            problems.append(f"{where}: no command `packproof {name}`")
            continue
        parser, words = subcommands[name], line.split()
        nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if nested and len(words) > 2 and words[2] in nested[0].choices:  # import locomo
            parser = nested[0].choices[words[2]]
        options = set(parser._option_string_actions)
        for option in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", line.split(None, 2)[-1]):
            if option not in options:
                problems.append(f"{where}: `packproof {name}` has no option {option}")
    assert not problems, "\n".join(problems)
    assert len(list(packproof_lines())) > 20  # the synopses were found


def test_every_plugin_option_and_module_shown_exists() -> None:
    helped = subprocess.run(
        [sys.executable, "-m", "pytest", "--help"], capture_output=True, text=True, timeout=300
    ).stdout
    problems = []
    for document in DOCUMENTS:
        text = document.read_text("utf-8")
        for option in set(re.findall(r"--packproof-[a-z-]+", text)):
            if option not in helped:
                problems.append(f"{document.name}: the pytest plugin has no option {option}")
        for module in set(re.findall(r"python -m ([a-z_][\w.]*)", text)):
            if importlib.util.find_spec(module) is None:
                problems.append(f"{document.name}: no module {module}")
    assert not problems, "\n".join(problems)
