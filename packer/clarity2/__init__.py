"""Clarity v2, the entity TF-IDF tracker the Clarity plugin loads by default.

Written from ``../shared/data/clarity/SCORER.md`` (repository kbarbel640-del/openclaw,
commit 88bb3988, ``extensions/clarity/lib/v2/integration.js`` and
``semantic-matcher.js``): :mod:`.extract` finds a message's entities and their
relationships, :mod:`.matcher` merges near-duplicates, :mod:`.tracker` keeps them
turn by turn, scores them and replays a conversation as ``index.js``'s hooks drive it.
"""
