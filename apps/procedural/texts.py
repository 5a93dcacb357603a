"""Text checks of procedural AutoDream and the general-form abstraction. Framework-free.

A quote "is in" a text when it occurs verbatim after whitespace is normalised (runs of
spaces and line breaks compare equal, case does not): a model may re-wrap a line, never
change its words.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"(?<![\w<])[-+]?\d+(?:[.,:/]\d+)*(?![\w>])")
MIN_QUOTE_CHARS = 8


def _normalized(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def quote_in(quote: str, text: str) -> bool:
    """Whether ``quote`` (at least ``MIN_QUOTE_CHARS`` long) occurs verbatim in ``text``."""
    needle = _normalized(quote)
    return len(needle) >= MIN_QUOTE_CHARS and needle in _normalized(text)


def content_hash(document: Any) -> str:
    """SHA-256 of the canonical JSON of ``document`` (sorted keys, no spaces)."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def general_form(text: str, entities: Iterable[tuple[str, str]]) -> str:
    """``text`` with each entity (surface text, type) replaced by ``<TYPE>`` and every number
    by ``<NUMBER>``: the conservative abstraction of a general form. Longer entities go first so a
    name inside a longer name is not replaced twice."""
    result = text
    for surface, kind in sorted(set(entities), key=lambda item: -len(item[0])):
        if surface.strip():
            placeholder = f"<{re.sub(r'[^A-Z_]', '', kind.upper()) or 'ENTITY'}>"
            result = re.sub(rf"(?<!\w){re.escape(surface)}(?!\w)", placeholder, result)
    return _NUMBER.sub("<NUMBER>", result)


def leaked_specifics(general: str, entities: Sequence[tuple[str, str]]) -> list[str]:
    """Entities or numbers of the specific form that a proposed general form still holds."""
    leaks = [surface for surface, _ in entities if surface.strip() and quote_in_words(surface, general)]
    leaks += _NUMBER.findall(general)
    return leaks


def quote_in_words(needle: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", text) is not None
