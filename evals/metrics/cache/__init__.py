"""The provider prompt-cache model (REFERENCE.md section 5): model.py prices a chain of
prompts under a profile, a batch of steps at a time; prompts.py encodes a chain's prompts
for it; totals.py sums a chain's costs; profiles.py reads profiles from YAML; files.py
reads the profile files and streams the step traces of ``packproof cache simulate``."""
