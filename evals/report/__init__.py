"""Reports: one model computed once (model.py), one renderer per format."""
