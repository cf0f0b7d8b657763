"""Finding Claude Code sessions under the paths given: a session file, a folder of
them, or a ``~/.claude/projects``-style tree. A main session ``<id>.jsonl`` owns
the sub-agents in ``<id>/subagents/agent-*.jsonl`` (``agent-acompact-*``: the
compaction sub-agents)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from packproof.evals.scenarios.importers.claude_code.transcript import Session, read_session
from packproof.packer.errors import InputError

__all__ = ["find_sessions"]


def _is_subagent(path: Path) -> bool:
    return path.parent.name == "subagents" and path.name.startswith("agent-")


def _load(path: Path) -> Session:
    session = read_session(path)
    folder = path.with_suffix("") / "subagents"
    if folder.is_dir():
        for sub in sorted(folder.glob("agent-*.jsonl")):
            session.subagents.append(
                read_session(sub, compaction=sub.name.startswith("agent-acompact-"))
            )
    return session


def find_sessions(paths: Iterable[Path]) -> list[Session]:
    """The main sessions under ``paths`` (each with its sub-agents), sorted by path;
    a path that is neither a file nor a folder, or a tree with no session, is an
    :class:`InputError`."""
    files: set[Path] = set()
    for path in paths:
        if path.is_file():
            files.add(path)
        elif path.is_dir():
            found = {p for p in path.rglob("*.jsonl") if not _is_subagent(p)}
            if not found:
                raise InputError("", "no session files (*.jsonl) in this folder", source=str(path))
            files |= found
        else:
            raise InputError("", "no such file or folder", source=str(path))
    return [_load(p) for p in sorted(files)]
