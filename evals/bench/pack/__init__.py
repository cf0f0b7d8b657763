"""The packer benchmark (``python -m packproof.evals.bench.pack``): main.py runs it; corpus.py
builds its input, timing.py, memory.py and process.py measure, report.py judges and renders."""
