"""The eval-grid benchmark (``python -m packproof.evals.bench.eval``): main.py runs it;
grid.py, extra.py and locomo.py measure, report.py judges and renders."""
