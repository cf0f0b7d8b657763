"""ctxpack: prove and gate an LLM context-packing policy.

``ctxpack.packer`` is the library (the reference packer), ``ctxpack.evals`` the
harness (scenarios, runner, metrics, reports, gate, tune), and ``ctxpack.cli`` the
command line above both. The common case:

>>> from ctxpack import pack
>>> pack({"items": [{"id": "m1", "text": "hello"}], "budget_tokens": 10}).selected_ids
['m1']
"""

from ctxpack.packer import (
    REGISTRY,
    InputError,
    PackResult,
    Request,
    __version__,
    pack,
    parse_request,
)

__all__ = [
    "REGISTRY",
    "InputError",
    "PackResult",
    "Request",
    "__version__",
    "pack",
    "parse_request",
]
