"""The provider prompt-cache model (REFERENCE.md section 5): model.py prices a chain of
prompts under a profile; profiles.py reads profiles from YAML; files.py reads the profile
files and the step traces of ``packproof cache simulate``."""
