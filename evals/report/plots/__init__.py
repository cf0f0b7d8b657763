"""The PNG plots of a report, one module per plot family, each a function
``ReportContext -> bytes``; base.py is the shared style, legend and wrapping, colours.py
one colour per strategy label in every plot and run. This package module imports
nothing, so importing one plot loads no other."""
