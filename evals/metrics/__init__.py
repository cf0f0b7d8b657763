"""Per-cell metrics (relevance, oracle, invariants) and across-turn stability."""
