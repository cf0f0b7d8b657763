"""openclaw-mem's native ``pack`` inputs as packproof requests and scenarios.

openclaw-mem (phenomenoner/openclaw-mem) packs its memory store with ``openclaw-mem
pack``; ``../shared/data/openclaw-mem/`` holds cases its real code packed and its own
golden fixtures, and ``POLICY.md`` there its selection algorithm. This importer reads
what ``pack`` reads and computes what its code derives from it:

- :mod:`.options`: the argv, as its argparse parser reads it, and the
  ``OPENCLAW_MEM_*`` settings, as ``resolve_config`` reads them;
- :mod:`.records`: per row, the candidate text, trust tier, both importance labels,
  lifecycle state, use count and supersedes claims;
- :mod:`.synthesis`: synthesis cards, their sources and freshness (source digest);
- :mod:`.tail`: the protected tail lines;
- :mod:`.case`: a case's ``input`` as a request for the ``openclaw-mem`` strategy
  (:func:`case_request`; never reading ``expected`` or ``diagnostics``);
- :mod:`.goldens`: openclaw-mem's golden fixture rows as cases, and what of their
  assertions packproof judges;
- :mod:`.suite`: a file of either as scenarios (:func:`import_openclaw_mem`).
"""

from __future__ import annotations

from .case import STRATEGY, case_request, derive
from .suite import import_openclaw_mem

__all__ = ["STRATEGY", "case_request", "derive", "import_openclaw_mem"]
