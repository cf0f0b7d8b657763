"""``packproof compare``: two runs paired cell by cell, and what it writes.

- model.py: :class:`Comparison` (paired differences, intervals, sign-flip tests);
  pairs.py: two runs' cells paired (shared with ``packproof gate --significance``);
  shared.py: the scenarios both runs have, added, removed or changed, and one run on
  both sides; flips.py: the scenarios that flipped between pass and fail.
- text.py (the verdict, the terminal table, compare.json), markdown.py (compare.md),
  plot.py (compare.png), files.py (every file, written only once all rendered).
"""
