"""ctxpack: prove and gate an LLM context-packing policy.

``ctxpack.packer`` is the library (the reference packer), ``ctxpack.evals`` the
harness (scenarios, runner, metrics, reports, gate, tune), and ``ctxpack.cli`` the
command line above both. The common case:

>>> from ctxpack import pack
>>> pack({"items": [{"id": "m1", "text": "hello"}], "budget_tokens": 10}).selected_ids
['m1']

Your own packer, judged beside ctxpack's strategies on an eval config's
scenarios: ``ctxpack.evaluate(my_pack, "ctxpack.yaml")`` (:mod:`ctxpack.evals.api`;
the harness is imported only then).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from ctxpack.evals.api import Run
    from ctxpack.packer import (
        REGISTRY,
        InputError,
        PackResult,
        Request,
        __version__,
        pack,
        parse_request,
    )
    from ctxpack.packer.contextpack import make_pack

# Imported on first use (PEP 562), so that importing a submodule (the pytest
# plugin every pytest run loads, the CLI's harness) does not load the packer
# and numpy first.
_LAZY: Final = {
    "REGISTRY": "ctxpack.packer",
    "InputError": "ctxpack.packer",
    "PackResult": "ctxpack.packer",
    "Request": "ctxpack.packer",
    "__version__": "ctxpack.packer",
    "pack": "ctxpack.packer",
    "parse_request": "ctxpack.packer",
    "make_pack": "ctxpack.packer.contextpack",
}

__all__ = [
    "REGISTRY",
    "InputError",
    "PackResult",
    "Request",
    "__version__",
    "evaluate",
    "make_pack",
    "pack",
    "parse_request",
]


def evaluate(packer: Any = None, config: Any = "ctxpack.yaml", **options: Any) -> Run:
    """Evaluate ``packer`` (a callable from a request dict to a pack dict, or
    ``"cmd:COMMAND"``) on ``config``: see :func:`ctxpack.evals.api.evaluate`."""
    from ctxpack.evals.api import evaluate as run

    return run(packer, config, **options)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ctxpack' has no attribute {name!r}")
