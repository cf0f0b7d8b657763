"""packproof's reference packer: deterministic context packing under a token budget.

>>> from packproof.packer import pack
>>> result = pack({"items": [{"id": "m1", "text": "hello"}], "budget_tokens": 10})
>>> result.selected_ids
['m1']
"""

from .errors import InputError
from .pipeline import PackResult, assemble, pack
from .request import Request, parse_request
from .strategies import REGISTRY, build_strategy, parse_spec

__version__ = "0.1.0"

__all__ = [
    "REGISTRY",
    "InputError",
    "PackResult",
    "Request",
    "__version__",
    "assemble",
    "build_strategy",
    "pack",
    "parse_request",
    "parse_spec",
]
