"""A packproof project's files: the starter set ``packproof init`` writes, and the
defaults ``packproof eval`` and ``packproof gate`` fall back to.

The starter set ships as package data (``evals/data/``), so an installed packproof
works outside this repository: ``packproof init``, ``packproof scenarios compile``
and ``packproof eval`` run it as it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from packproof.packer.errors import InputError
from packproof.packer.files import write_atomic

__all__ = ["CONFIG", "GATES", "STARTER", "default_gates", "init_project", "shipped_space"]

DATA: Final = Path(__file__).resolve().parent / "data"
CONFIG: Final = "packproof.yaml"  # `packproof eval` reads it from the working folder
GATES: Final = "gates.yaml"  # `packproof gate` prefers it there to the shipped one
# what `packproof init DIR` writes (relative to DIR) from which shipped file
STARTER: Final = {
    CONFIG: "packproof.yaml",
    GATES: "gates.yaml",
    "scenarios/example.yaml": "example.yaml",
}


def default_gates() -> Path:
    """``gates.yaml`` in the working folder when there is one, else the shipped gates."""
    local = Path(GATES)
    return local if local.exists() else DATA / "gates.yaml"


def shipped_space(strategy: str) -> Path:
    """The search space ``packproof tune`` uses for ``strategy`` when given none."""
    path = DATA / "spaces" / f"{strategy}.yaml"
    if not path.exists():
        shipped = sorted(p.stem for p in (DATA / "spaces").glob("*.yaml"))
        raise InputError(
            "--space",
            f"no shipped search space for strategy {strategy!r}; pass --space FILE",
            expected="one of " + ", ".join(shipped),
            found=strategy,
        )
    return path


def init_project(folder: Path) -> list[Path]:
    """Write the starter set into ``folder``; refuse, writing nothing, if any of
    its files already exists (a user's file is never overwritten)."""
    targets = {folder / rel: DATA / shipped for rel, shipped in STARTER.items()}
    for target in targets:
        if target.exists():
            raise InputError(
                "", "already exists; packproof init writes nothing over a file", source=str(target)
            )
    for target, shipped in targets.items():
        write_atomic(target, shipped.read_text("utf-8"))
    return list(targets)
