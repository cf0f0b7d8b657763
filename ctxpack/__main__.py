"""``python -m ctxpack``: the same as the ``ctxpack`` command."""

from ctxpack.cli import main

raise SystemExit(main())
