"""Reports: one model computed once, one module per format.

- model.py: :func:`build_report` (the summary, i.e. ``summary.json``),
  :class:`ReportContext` (what every renderer reads), :func:`order_records`,
  ``SUMMARY_SCHEMA_ID``; stats.py: the bootstrap and paired statistics it uses;
  replay.py: the prompt-cache economics of replays (``summary["replay"]``);
  failures.py: what failed, counted once; status.py: PASSED or FAILED and where,
  what summary.md and report.html say first.
- one renderer per format: markdown.py (``summary.md``), csv_json.py
  (``metrics.csv``, ``summary.json``), junit.py (``junit.xml``), html/
  (``report.html``: page.py and its sections) and plots/ (the PNGs, one module per
  plot family).
- renderers.py: :data:`RENDERERS`, every renderer by output file name.

Imports go one way: the renderers import the model, the model imports no
renderer, and only renderers.py imports every renderer. This package module
imports nothing, so importing the model never loads a renderer.
"""
