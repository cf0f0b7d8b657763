"""Clarity v2's semantic matcher: near-duplicate entities of one message merged.

Each entity is a unit vector over character 2- to 5-grams of ``"name normalized"``
(lower-cased, non-alphanumerics dropped; grams crossing a space skipped) plus its
words (weight 1.5) and word bigrams (2.25). Similarity is the cosine, times 0.8
across entity types, and 1 for equal normalized names. Pairs scoring >= 0.7 merge
into the entity with more mentions (greedy, in mention order); pairs in [0.5, 0.7)
get a "related" relationship from the earlier to the later entity (SCORER.md,
"Matcher"). Sums run in the order the plugin's ``Map`` iterates, so that the
floating-point results agree.
"""

from __future__ import annotations

import math
import re
from itertools import pairwise
from typing import TYPE_CHECKING

from . import js

if TYPE_CHECKING:
    from .extract import Entity

__all__ = ["MERGE", "RELATE", "deduplicate", "similarity", "vector"]

MERGE = 0.7
RELATE = 0.5
_DROP = re.compile(rf"[^a-z0-9{js.SPACE}]")
_SPACES = re.compile(rf"[{js.SPACE}]+")


def vector(text: str) -> dict[str, float]:
    """The unit vector of ``text`` (keys in first-seen order)."""
    counts: dict[str, float] = {}
    norm = _DROP.sub("", text.lower())
    for n in range(2, 6):
        for i in range(len(norm) - n + 1):
            gram = norm[i : i + n]
            if " " not in gram:
                key = "c:" + gram
                counts[key] = counts.get(key, 0) + 1
    words = [w for w in _SPACES.split(norm) if len(w) >= 2]
    for word in words:
        counts["w:" + word] = counts.get("w:" + word, 0) + 1.5
    for a, b in pairwise(words):
        key = f"b:{a}_{b}"
        counts[key] = counts.get(key, 0) + 1.5 * 1.5
    total = 0.0
    for weight in counts.values():
        total += weight * weight
    length = math.sqrt(total)
    if length == 0:
        return counts
    return {key: weight / length for key, weight in counts.items()}


def _cosine(one: dict[str, float], two: dict[str, float]) -> float:
    small, large = (one, two) if len(one) < len(two) else (two, one)
    dot = 0.0
    for key, weight in small.items():
        if key in large:
            dot += weight * large[key]
    return max(0.0, min(1.0, dot))


def similarity(a: Entity, b: Entity, cache: dict[str, dict[str, float]]) -> float:
    """How alike two entities are, in [0, 1] (``cache``: vectors by entity id)."""
    if a.normalized == b.normalized:
        return 1.0
    penalty = 1.0 if a.type == b.type else 0.8
    return _cosine(_vector_of(a, cache), _vector_of(b, cache)) * penalty


def _vector_of(entity: Entity, cache: dict[str, dict[str, float]]) -> dict[str, float]:
    if entity.id not in cache:
        cache[entity.id] = vector(f"{entity.name} {entity.normalized}".strip())
    return cache[entity.id]


def deduplicate(entities: list[Entity]) -> tuple[list[Entity], list[tuple[str, str, float]]]:
    """The entities left after merging (creation order) and the relationships to add,
    ``(source, target, similarity)``, strongest first."""
    cache: dict[str, dict[str, float]] = {}
    kept = {e.id for e in entities}
    by_mentions = sorted(entities, key=lambda e: -e.mention_count)  # stable
    for entity in by_mentions:
        if entity.id not in kept:
            continue
        candidates = [e for e in by_mentions if e.id in kept and e.id != entity.id]
        scored = [(similarity(entity, c, cache), c) for c in candidates]
        similar = sorted((s for s in scored if s[0] >= MERGE), key=lambda s: -s[0])
        for _, other in similar:
            kept.discard(other.id)
            entity.absorb(other)
    remaining = [e for e in entities if e.id in kept]
    related: list[tuple[str, str, float]] = []
    for i, first in enumerate(remaining):
        for second in remaining[i + 1 :]:
            score = similarity(first, second, cache)
            if RELATE <= score < MERGE:
                related.append((first.id, second.id, score))
    related.sort(key=lambda r: -r[2])
    return remaining, related
