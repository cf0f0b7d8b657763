"""Benchmarks (``make bench``); never imported at run time."""
