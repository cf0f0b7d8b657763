"""Where the tests find the project: its root, whatever folder a test module is in."""

from __future__ import annotations

from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]
