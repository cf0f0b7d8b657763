"""The files ``packproof compare`` writes, each rendered from one
:class:`~packproof.evals.compare.model.Comparison` by a renderer keyed by file name, and
written only once every one of them has rendered, all or none, never over a
file either run holds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from packproof.evals.compare.markdown import markdown
from packproof.evals.compare.plot import compare_png
from packproof.evals.compare.text import to_json
from packproof.evals.run.folder import safe_component
from packproof.packer.files import Inputs, check_targets, write_files

if TYPE_CHECKING:
    from packproof.evals.compare.model import Comparison

__all__ = ["RENDERERS", "comparison_files", "default_folder", "write_comparison"]

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


def comparison_files(out: Path) -> list[Path]:
    """The files :func:`write_comparison` writes into ``out``."""
    return [out / name for name in RENDERERS]


def write_comparison(cmp: Comparison, out: Path, inputs: Inputs = ()) -> list[Path]:
    """Render every file, then write them into ``out``, all or none, never over
    one of ``inputs`` (:func:`~packproof.packer.files.write_files`); the paths
    written, in :data:`RENDERERS` order."""
    targets = dict(zip(comparison_files(out), RENDERERS.values(), strict=True))
    check_targets(targets, inputs)  # before the rendering, the plot's time among it
    return write_files({path: render(cmp) for path, render in targets.items()}, inputs=inputs)
