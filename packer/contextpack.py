"""A ContextPack v1 from a request and the ids a packer chose: what a team's
own packer returns to ``packproof eval``, ``packproof.evaluate`` or the pytest
plugin without writing the pack format itself (docs/external-packers.md).

>>> request = {"items": [{"id": "m1", "text": "hi"}, {"id": "m2", "text": "yo"}],
...            "budget_tokens": 10}
>>> [it["recordRef"] for it in make_pack(request, ["m2"])["items"]]
['m2']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .errors import InputError
from .pipeline import assemble
from .render import context_pack
from .request import parse_request

__all__ = ["make_pack"]


def make_pack(request: Mapping[str, Any], ids: Iterable[str]) -> dict[str, Any]:
    """The ContextPack v1 (no trace) packing ``ids`` of ``request``, in the given
    order: each item rendered as packproof renders it (layer, type, importance,
    trust, text, citation), the bundle text and the meta from the request. An
    id the request does not have, or one given twice, is an InputError."""
    body = {k: v for k, v in request.items() if k != "request_id"}
    result = assemble(parse_request(body, source="request"))
    position = result.items.position
    chosen: list[int] = []
    for n, ref in enumerate(ids):
        if ref not in position:
            raise InputError(f"/ids/{n}", "not an id of the request", found=ref, source="ids")
        if position[ref] in chosen:
            raise InputError(f"/ids/{n}", "packed twice", found=ref, source="ids")
        chosen.append(position[ref])
    picked = dataclasses.replace(result, pack_order=np.array(chosen, dtype=np.int64))
    return context_pack(picked)
