"""packproof: prove and gate an LLM context-packing policy.

``packproof.packer`` is the library (the reference packer), ``packproof.evals`` the
harness (scenarios, runner, metrics, reports, gate, tune), and ``packproof.cli`` the
command line above both. The common case:

>>> from packproof import pack
>>> pack({"items": [{"id": "m1", "text": "hello"}], "budget_tokens": 10}).selected_ids
['m1']

Your own packer, judged beside packproof's strategies on an eval config's
scenarios: ``packproof.evaluate(my_pack, "packproof.yaml")`` (:mod:`packproof.evals.api`;
the harness is imported only then).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from packproof.evals.api import Run
    from packproof.packer import (
        REGISTRY,
        InputError,
        PackResult,
        Request,
        __version__,
        pack,
        parse_request,
    )
    from packproof.packer.contextpack import make_pack
    from packproof.packer.errors import RunError

# Imported on first use (PEP 562), so that importing a submodule (the pytest
# plugin every pytest run loads, the CLI's harness) does not load the packer
# and numpy first.
_LAZY: Final = {
    "REGISTRY": "packproof.packer",
    "InputError": "packproof.packer",
    "PackResult": "packproof.packer",
    "Request": "packproof.packer",
    "__version__": "packproof.packer",
    "pack": "packproof.packer",
    "parse_request": "packproof.packer",
    "make_pack": "packproof.packer.contextpack",
    "RunError": "packproof.packer.errors",
}

__all__ = [
    "REGISTRY",
    "InputError",
    "PackResult",
    "Request",
    "RunError",
    "__version__",
    "evaluate",
    "make_pack",
    "pack",
    "parse_request",
]


def evaluate(packer: Any = None, config: Any = "packproof.yaml", **options: Any) -> Run:
    """Evaluate ``packer`` (a callable from a request dict to a pack dict, or
    ``"cmd:COMMAND"``) on ``config``: see :func:`packproof.evals.api.evaluate`."""
    from packproof.evals.api import evaluate as run

    return run(packer, config, **options)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'packproof' has no attribute {name!r}")
