"""One colour per strategy label, the same in every plot and every run.

The colour is a function of the label, not of its position in a run:

* a built-in strategy name (``chronological``, ``bm25lite``, ``bm25``, ``hybrid``,
  ``clarity``, ``clarity-prune``, ``clarity2``, ``openclaw-mem``: every name in
  ``packer/strategies/``) has a fixed colour from the Okabe-Ito palette (Okabe & Ito
  2008, "Color Universal Design"), chosen to keep the hues the reports had before
  (blue, orange, green, red, pink; black and yellow for the newest; grey, outside
  the palette, for ``clarity-prune``);
* any other label (a parameterised spec such as
  ``hybrid(w_recency=0,w_relevance=0.6,w_usage=0)``, a cache-aware spec, an
  external packer's name) picks from :data:`POOL` (Paul Tol's colour-blind-safe
  qualitative colours, none of them a built-in's) at index
  ``sha256(label) mod len(POOL)``: stable across runs, processes and machines.

Within one run two labels never share a colour. Built-in names are fixed and
distinct; the other labels claim their pick in sorted label order, and a label
whose pick an earlier one holds takes the next free colour of the pool (wrapping
round), then the colour of a built-in the run does not have, then a generated
one. So a label keeps its colour in every run except one where a label that
sorts before it wants the same colour.
"""

from __future__ import annotations

import colorsys
import hashlib
from collections.abc import Iterable
from typing import Final

__all__ = ["BUILTIN", "POOL", "colour_of", "colours_for"]

BUILTIN: Final = {
    "chronological": "#0072b2",  # blue
    "bm25lite": "#e69f00",  # orange
    "bm25": "#009e73",  # bluish green
    "hybrid": "#d55e00",  # vermillion
    "clarity": "#cc79a7",  # reddish purple
    "clarity-prune": "#767676",  # grey
    "clarity2": "#f0e442",  # yellow
    "openclaw-mem": "#000000",  # black
}
POOL: Final = (
    "#56b4e9",  # sky blue (Okabe-Ito)
    "#332288",  # indigo (Tol muted)
    "#999933",  # olive
    "#882255",  # wine
    "#44aa99",  # teal
    "#ddcc77",  # sand
    "#ee3377",  # magenta (Tol vibrant)
    "#8c564b",  # brown
)


def _pick(label: str) -> int:
    """The pool index a non-built-in label asks for (``hash()`` is salted per process)."""
    digest = hashlib.sha256(label.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % len(POOL)


def colour_of(label: str) -> str:
    """The colour ``label`` has when no other label of its run claims it first."""
    return BUILTIN.get(label) or POOL[_pick(label)]


def _generated(index: int) -> str:
    """The ``index``-th colour past the palettes: hues a golden angle apart, in
    two lightness bands (only runs of more than 13 labels get here)."""
    hue = (0.13 + index * 0.381966) % 1.0
    light = 0.38 if index % 2 else 0.62
    r, g, b = colorsys.hls_to_rgb(hue, light, 0.65)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def colours_for(labels: Iterable[str]) -> dict[str, str]:
    """``#rrggbb`` per label of one run (in the order given), distinct within the
    run; see the module docstring for the rule."""
    ordered = list(dict.fromkeys(labels))
    out = {label: BUILTIN[label] for label in ordered if label in BUILTIN}
    taken = set(out.values())
    spare = [c for name, c in BUILTIN.items() if name not in out]
    extra = 0
    for label in sorted(set(ordered) - out.keys()):
        start = _pick(label)
        order = [*POOL[start:], *POOL[:start], *spare]
        colour = next((c for c in order if c not in taken), None)
        while colour is None or colour in taken:
            colour, extra = _generated(extra), extra + 1
        out[label] = colour
        taken.add(colour)
    return {label: out[label] for label in ordered}
