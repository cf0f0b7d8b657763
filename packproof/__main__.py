"""``python -m packproof``: the same as the ``packproof`` command."""

from packproof.cli import main

raise SystemExit(main())
