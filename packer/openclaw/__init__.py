"""openclaw-mem's pack policy (phenomenoner/openclaw-mem at 7a3a848, ``cmd_pack``),
one step per module, as ``/work/shared/data/openclaw-mem/POLICY.md`` sets it out:

- :mod:`.lanes`: the retrieval lanes (the request's ``retrieval``, or bm25);
- :mod:`.fusion`: reciprocal rank fusion and ``candidate_limit``;
- :mod:`.filters`: soft-archived and superseded records;
- :mod:`.scoring`: the composite score and the timestamps it reads;
- :mod:`.trust`: the ``exclude_quarantined_fail_open`` trust policy;
- :mod:`.synthesis`: synthesis cards preferred over the records they cover;
- :mod:`.order`: memory candidates and their sort keys;
- :mod:`.quotas`: soft quotas (preference and decision reserved, events capped);
- :mod:`.fill`: the tail reservation and the first-fit fills;
- :mod:`.receipts`: openclaw-mem's receipts, with its field names;
- :mod:`.pack`: the steps in order; :mod:`.result`: the outcome as a packproof result.

The strategy ``openclaw-mem`` (:mod:`packproof.packer.strategies.openclaw_mem`)
holds the parameters and hands a request here.
"""
