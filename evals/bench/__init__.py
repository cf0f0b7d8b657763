"""Benchmarks (``make bench``); never imported at run time. The entry points are
``pack`` (the packer, its parts in ``pack_*``) and ``eval`` (the eval grid, its
parts in ``eval_*``); ``common`` holds what both share."""
