"""Reports: one model computed once, one module per format.

- model.py: :func:`build_report` (the summary, i.e. ``summary.json``),
  :class:`ReportContext` (what every renderer reads), :func:`order_records`,
  ``SUMMARY_SCHEMA_ID``; stats.py: the bootstrap and paired statistics it uses;
  replay.py: the prompt-cache economics of replays (``summary["replay"]``).
- one renderer module per format: markdown.py (``summary.md``), csv_json.py
  (``metrics.csv``, ``summary.json``), html.py with html_base.py, html_cache.py
  and html_scenarios.py (``report.html``), junit.py (``junit.xml``), plots.py
  and frontier_plot.py (PNGs).
- renderers.py: :data:`RENDERERS`, every renderer by output file name.

Imports go one way: the renderers import the model, the model imports no
renderer, and only renderers.py imports every renderer. This package module
imports nothing, so importing the model never loads a renderer.
"""
