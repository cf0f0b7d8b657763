"""``python -m packproof.evals.bench.eval``: the eval-grid benchmark (:mod:`.main`)."""

from __future__ import annotations

import sys

from packproof.evals.bench.eval.main import main

if __name__ == "__main__":  # the guard matters: Dask's workers re-import this module
    sys.exit(main())
