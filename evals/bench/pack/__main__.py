"""``python -m packproof.evals.bench.pack``: the packer benchmark (:mod:`.main`)."""

from __future__ import annotations

import sys

from packproof.evals.bench.pack.main import main

if __name__ == "__main__":
    sys.exit(main())
