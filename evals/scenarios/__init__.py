"""The scenario lane: the format and its safe YAML, the compiler, importers of datasets."""
