"""The pytest plugin: a scenario suite as test cases for your own packer.

- plugin.py: the options (``--packproof-suite``, ``--packproof-packer``, ...) and the cases;
- verdict.py: one case packed and judged, and its failure text.
"""
