"""The layout shows the architecture: the CLI above the harness above the library,
no import cycles, every package (and every guide) shipped, no module past about 400
lines, one concept per folder (no module named after a sibling folder), and tests that
mirror the package."""

from __future__ import annotations

import ast
import tomllib
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest

from tests.paths import ROOT

# folder -> the import name it is installed as (pyproject's package-dir); docs/ holds
# the guides, a package of Markdown pages (`packproof docs`) with no code
FOLDERS = {
    "packproof": "packproof",
    "packer": "packproof.packer",
    "evals": "packproof.evals",
    "docs": "packproof.docs",
}
MAX_LINES = 420  # "about 400"


def modules() -> dict[str, Path]:
    out = {}
    for folder, name in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([name, *parts])] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def runtime_imports(module: str, path: Path, known: set[str]) -> set[str]:
    """Modules of ours that ``module`` imports when it runs (at module level or in a
    function); imports under ``if TYPE_CHECKING:`` are for types only."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)  # submodules imported by name
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text("utf-8")))
    return {m for m in found if m in known and m != module}


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {m: runtime_imports(m, p, set(mods)) for m, p in mods.items()}


def test_the_library_imports_nothing_of_the_harness_or_the_cli() -> None:
    bad = {
        (m, d)
        for m, deps in graph().items()
        if m.startswith("packproof.packer")
        for d in deps
        if not d.startswith("packproof.packer")
    }
    assert not bad, sorted(bad)


def test_the_harness_imports_nothing_of_the_cli() -> None:
    bad = {
        (m, d)
        for m, deps in graph().items()
        if m.startswith("packproof.evals")
        for d in deps
        if d.startswith("packproof.cli") or d == "packproof"
    }
    assert not bad, sorted(bad)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return out


def test_no_module_imports_a_module_that_imports_it_back() -> None:
    assert cycles(graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [["a", "b", "c"]]


def setuptools_config() -> dict[str, Any]:
    config: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    return config["tool"]["setuptools"]


def test_every_package_is_shipped() -> None:
    config = setuptools_config()
    packages = {m for m, p in modules().items() if p.name == "__init__.py"}
    assert set(config["packages"]) == packages
    assert config["package-dir"] == {name: folder for folder, name in FOLDERS.items()}


def test_every_guide_is_shipped_and_the_guides_hold_no_code() -> None:
    patterns = setuptools_config()["package-data"]["packproof.docs"]
    guides = sorted(p.name for p in (ROOT / "docs").iterdir() if p.suffix == ".md")
    assert guides, "no guides in docs/"
    assert [g for g in guides if not any(fnmatch(g, pattern) for pattern in patterns)] == []
    # a page the pattern does not match would silently stay behind
    assert sorted(p.name for p in (ROOT / "docs").iterdir() if p.is_file()) == sorted(
        [*guides, "__init__.py"]
    )
    assert [m for m in modules() if m.startswith("packproof.docs")] == ["packproof.docs"]


@pytest.mark.parametrize("module", sorted(modules()))
def test_no_module_is_past_about_400_lines(module: str) -> None:
    lines = len(modules()[module].read_text("utf-8").splitlines())
    assert lines <= MAX_LINES, f"{module}: {lines} lines; split it by concept"


def named_after_a_sibling_folder(folder: Path) -> list[str]:
    """Modules under ``folder`` whose name starts with a sibling folder's name
    (``report/html_base.py`` beside ``report/html/``): they belong in that folder."""
    bad = []
    for here in sorted([folder, *(p for p in folder.rglob("*") if p.is_dir())]):
        siblings = {p.name for p in here.iterdir() if p.is_dir() and p.name != "__pycache__"}
        bad += [
            str(m.relative_to(folder))
            for m in sorted(here.glob("*.py"))
            if any(m.stem.startswith(s) for s in siblings)
        ]
    return bad


def test_no_module_is_named_after_a_sibling_folder() -> None:
    bad = [
        f"{folder}/{m}" for folder in FOLDERS for m in named_after_a_sibling_folder(ROOT / folder)
    ]
    assert bad == [], f"move each into the folder it is named after: {bad}"


def test_the_sibling_rule_finds_a_module_beside_its_folder(tmp_path: Path) -> None:
    for name in ("report/html/page.py", "report/html_base.py", "report/htmlish.py", "report/x.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert named_after_a_sibling_folder(tmp_path) == ["report/html_base.py", "report/htmlish.py"]


# a test folder -> the package folder it mirrors
TEST_FOLDERS = {"tests/packer": "packer", "tests/evals": "evals", "tests/cli": "packproof/cli"}


def test_the_tests_mirror_the_package() -> None:
    unmirrored = []
    for tests, package in TEST_FOLDERS.items():
        for here in sorted((ROOT / tests).rglob("test_*.py")):
            folder = here.parent.relative_to(ROOT / tests)
            if not (ROOT / package / folder / "__init__.py").exists():
                unmirrored.append(str(here.relative_to(ROOT)))
    assert unmirrored == [], f"no package folder for these tests: {unmirrored}"
