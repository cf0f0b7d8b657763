"""``packproof tune``: a strategy's parameters searched and scored on held-out conversations.

- search.py: the grid or seeded random search, cross-validated by conversation;
- objective.py: the replay objective (probe recall under a cost ceiling, or cost under a
  recall floor).
"""
