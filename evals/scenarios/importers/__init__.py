"""Dataset importers: each turns one external format into compiled scenarios.

A second dataset format is one more module here, registered in :data:`IMPORTERS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import claude_code, locomo, openclaw_mem

__all__ = ["IMPORTERS"]

# format name -> function(path, **options) -> (scenarios, report)
IMPORTERS: dict[str, Callable[..., Any]] = {
    "claude-code": claude_code.import_claude_code,
    "locomo": locomo.import_locomo,
    "openclaw-mem": openclaw_mem.import_openclaw_mem,
}
