"""Benchmarks (``make bench``); never imported at run time. ``pack/`` (the packer) and
``eval/`` (the eval grid) are folders run with ``python -m``; ``cache``, ``replay`` and
``cacheaware`` are single modules; ``common`` holds what they share."""
