"""The files ``packproof compare`` writes, each rendered from one
:class:`~packproof.evals.compare.model.Comparison` by a renderer keyed by file name, and
written only once every one of them has rendered."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from packproof.evals.compare.markdown import markdown
from packproof.evals.compare.plot import compare_png
from packproof.evals.compare.text import to_json
from packproof.evals.run.folder import safe_component
from packproof.packer.files import check_target, write_atomic

if TYPE_CHECKING:
    from packproof.evals.compare.model import Comparison

__all__ = ["RENDERERS", "default_folder", "write_comparison"]

RENDERERS: Final[dict[str, Callable[[Comparison], str | bytes]]] = {
    "compare.md": markdown,
    "compare.json": to_json,
    "compare.png": compare_png,
}


def default_folder(cmp: Comparison, root: Path = Path("reports/compare")) -> Path:
    """``reports/compare/<A's run id>-vs-<B's run id>``; one run on both sides
    is ``<run id>-vs-itself`` (one folder) or ``<run id>-vs-same-id`` (two
    folders with the same run id), never a name that reads as two runs."""
    a, b = cmp.a.run_id, cmp.b.run_id
    name = {"folder": f"{a}-vs-itself", "run_id": f"{a}-vs-same-id"}.get(
        cmp.same_run or "", f"{a}-vs-{b}"
    )
    return root / safe_component(name)


def write_comparison(cmp: Comparison, out: Path, inputs: Iterable[Path] = ()) -> list[Path]:
    """Render every file, then write each atomically into ``out`` (never over
    one of ``inputs``); the paths written, in :data:`RENDERERS` order."""
    targets = {out / name: render for name, render in RENDERERS.items()}
    sources = list(inputs)
    for path in targets:  # refused before any work
        check_target(path, sources)
    rendered = {path: render(cmp) for path, render in targets.items()}
    for path, content in rendered.items():
        write_atomic(path, content, inputs=sources)
    return list(rendered)
