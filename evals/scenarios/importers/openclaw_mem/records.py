"""What openclaw-mem reads from one ``observations`` row, computed as its code does.

Each function cites the section of POLICY.md (``../shared/data/openclaw-mem/``) and the
openclaw-mem function it follows. ``detail`` is the row's ``detail_json`` read by
:func:`parse_detail`: Python's ``json.loads`` (which accepts ``NaN`` and ``Infinity``),
anything but an object read as ``{}``.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping
from typing import Any, Final, TypeGuard

__all__ = [
    "composite_label",
    "importance_score",
    "item_text",
    "label_from_score",
    "lifecycle_state",
    "pack_importance",
    "parse_detail",
    "superseded_ids",
    "trust_tier",
    "used_count",
]

COMPACTION_RECEIPT: Final = "openclaw-mem.artifact.compaction-receipt.v1"
LABELS: Final = ("must_remember", "nice_to_have", "ignore", "unknown")
_ALIASES: Final = {
    "must remember": "must_remember",
    "must-remember": "must_remember",
    "high": "must_remember",
    "nice to have": "nice_to_have",
    "nice-to-have": "nice_to_have",
    "medium": "nice_to_have",
    "low": "ignore",
}
# The composite label as an importance_score (request field): label_from_score gives
# the label back, and a null score is the composite scorer's "unknown".
LABEL_SCORE: Final = {"must_remember": 1.0, "nice_to_have": 0.5, "ignore": 0.0}
TRUST_KEYS: Final = ("trust", "trust_tier", "trustTier")
TIERS: Final = ("trusted", "untrusted", "quarantined")
STATES: Final = ("captured", "categorized", "active", "consolidated", "stale", "soft-archived")
_OBS_REF: Final = re.compile(r"(?:obs:)?(\d+)", re.IGNORECASE)  # \d: any Unicode digit


def parse_detail(raw: Any) -> dict[str, Any]:
    """``_pack_parse_detail_json``: a string that parses to an object, else ``{}``."""
    if not isinstance(raw, str):
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _flat(text: str) -> str:
    return text.replace("\n", " ").strip()


def item_text(row: Mapping[str, Any], detail: Mapping[str, Any]) -> str:
    """``_pack_item_text`` (section 7): a compaction receipt's compact text when it
    is one and that text is not blank, else ``summary_en`` if a non-empty string (a
    blank one hides ``summary``), else ``summary``; newlines to spaces, stripped."""
    schema, compact = detail.get("schema"), detail.get("compact")
    if (
        isinstance(schema, str)
        and schema.strip() == COMPACTION_RECEIPT
        and isinstance(compact, dict)
    ):
        text = compact.get("text")
        if isinstance(text, str) and _flat(text):
            return _flat(text)
    summary_en = row.get("summary_en")
    if isinstance(summary_en, str) and summary_en:
        return _flat(summary_en)
    summary = row.get("summary")
    return _flat(summary) if isinstance(summary, str) else ""


def _tier(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    word = value.strip().lower().replace("-", "_").replace(" ", "_")
    word = "quarantined" if word == "quarantine" else word
    return word if word in TIERS else None


def trust_tier(detail: Mapping[str, Any]) -> str:
    """``_pack_trust_tier`` (section 5): the first of ``trust``, ``trust_tier``,
    ``trustTier``, then the same under ``provenance``, that names a tier."""
    provenance = detail.get("provenance")
    sources = [detail, provenance] if isinstance(provenance, dict) else [detail]
    for source in sources:
        for key in TRUST_KEYS:
            tier = _tier(source.get(key))
            if tier is not None:
                return tier
    return "unknown"


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _float(value: float) -> float | None:
    """``value`` as a finite float, or None (an int too large for a float included)."""
    try:
        out = float(value)
    except OverflowError:
        return None
    return out if math.isfinite(out) else None


def label_from_score(score: float) -> str:
    """openclaw-mem's ``label_from_score``: non-finite is 0, clamped to [0, 1]."""
    s = min(1.0, max(0.0, _float(score) or 0.0))
    return "must_remember" if s >= 0.8 else "nice_to_have" if s >= 0.5 else "ignore"


def pack_importance(detail: Mapping[str, Any]) -> str:
    """The pack label (section 3.6, ``_pack_importance_label``): the sort's and the
    trace's importance."""
    value = detail.get("importance")
    if isinstance(value, dict):
        label = value.get("label")
        if isinstance(label, str):
            word = label.strip().lower()
            word = _ALIASES.get(word, word).replace("-", "_").replace(" ", "_")
            if word in LABELS:
                return word
        score = value.get("score")
        return label_from_score(score) if _is_number(score) else "unknown"
    return label_from_score(value) if _is_number(value) else "unknown"


def _normalize_label(value: Any) -> str | None:
    """``importance.normalize_label``: NFKC, stripped, lower-cased, the aliases; one
    of the three graded labels or None (no underscores are inserted)."""
    if not isinstance(value, str):
        return None
    word = unicodedata.normalize("NFKC", value).strip().lower()
    word = _ALIASES.get(word, word)
    return word if word in ("must_remember", "nice_to_have", "ignore") else None


def _score_text(text: str) -> float | None:
    """A number written as text: ``0.86``, ``86%``, ``43/50`` (NFKC first)."""
    word = unicodedata.normalize("NFKC", text).strip()
    try:
        if word.endswith("%"):
            value = float(word[:-1].strip()) / 100.0
        elif "/" in word:
            top, _, bottom = word.partition("/")
            value = float(top.strip()) / float(bottom.strip())
        else:
            value = float(word)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    return _float(value)


def _parse_score(value: Any) -> float:
    """``parse_importance_score``: a number, a number as text, or an object's score;
    else 0.0. An integral value in (1, 100] is a percentage; clamped to [0, 1]."""
    if isinstance(value, dict):
        value = value.get("score")
    score: float | None = None
    if _is_number(value):
        score = _float(value)
    elif isinstance(value, str):
        score = _score_text(value)
    if score is None:
        return 0.0
    if 1.0 < score <= 100.0 and score.is_integer():
        score /= 100.0
    return min(1.0, max(0.0, score))


def composite_label(detail: Mapping[str, Any]) -> str:
    """The composite scorer's label (section 3.6, ``scoring._importance_label``)."""
    value = detail.get("importance")
    if value is None:
        return "unknown"
    if isinstance(value, dict):
        label = _normalize_label(value.get("label"))
        if label is not None:
            return label
    elif isinstance(value, str):
        label = _normalize_label(value)
        if label is not None:
            return label
    return label_from_score(_parse_score(value))


def importance_score(detail: Mapping[str, Any]) -> float | None:
    """The composite label as the request's ``importance_score`` (null: unknown)."""
    return LABEL_SCORE.get(composite_label(detail))


def _lifecycle(detail: Mapping[str, Any]) -> Mapping[str, Any]:
    value = detail.get("lifecycle")
    return value if isinstance(value, dict) else {}


def lifecycle_state(detail: Mapping[str, Any]) -> str:
    """``lifecycle.state_from_detail`` (section 3.5): a known ``state``, else
    ``soft-archived`` when ``archived_at`` is not blank, else ``active``."""
    lifecycle = _lifecycle(detail)
    state = lifecycle.get("state")
    word = state.strip().lower() if isinstance(state, str) else ""
    if word in STATES:
        return word
    archived = lifecycle.get("archived_at")
    return "soft-archived" if isinstance(archived, str) and archived.strip() else "active"


def used_count(detail: Mapping[str, Any]) -> int:
    """``max(0, int(lifecycle.used_count or 0))``, 0 when ``int()`` fails (section 3.4)."""
    try:
        return max(0, int(_lifecycle(detail).get("used_count") or 0))
    except (TypeError, ValueError, OverflowError):
        return 0


def _superseded_id(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value > 0 else None
    if isinstance(value, str):
        match = _OBS_REF.fullmatch(value.strip())
        if match is not None and int(match.group(1)) > 0:
            return int(match.group(1))
    return None


def superseded_ids(detail: Mapping[str, Any]) -> list[int]:
    """The ids ``provenance.supersedes`` names (section 4), in order, each once."""
    provenance = detail.get("provenance")
    if not isinstance(provenance, dict):
        return []
    claim = provenance.get("supersedes")
    if isinstance(claim, list):
        values = claim
    elif isinstance(claim, str | int) and not isinstance(claim, bool):
        values = [claim]
    else:
        return []
    ids = (_superseded_id(v) for v in values)
    return list(dict.fromkeys(i for i in ids if i is not None))
