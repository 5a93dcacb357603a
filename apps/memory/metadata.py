"""What a write's ``metadata`` may be: a flat JSON object a client tags rows with and filters by.

Flat on purpose: string keys, each a scalar (string, number, boolean, null) or a list of
scalars. That is what filters compare (``metadata.<key>``) and what a GIN index over the
column answers; a nested document belongs in a memory or a resource, not in its tags.
Framework-free: the API turns :class:`MetadataError` into a 400.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_KEYS = 64
MAX_BYTES = 8 * 1024  # compact UTF-8 JSON
MAX_KEY_CHARS = 256

Scalar = str | int | float | bool | None


class MetadataError(ValueError):
    """Why a metadata object is refused, in words a client can act on."""


def is_scalar(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str | int | bool)


def unstorable(text: str) -> str | None:
    """What in ``text`` no Postgres text can hold (NUL, an unpaired surrogate), if anything."""
    if "\x00" in text:
        return "a NUL character (\\u0000)"
    if any("\ud800" <= character <= "\udfff" for character in text):
        return "an unpaired surrogate (\\ud800-\\udfff)"
    return None


def _refuse_nul(text: str, where: str) -> None:
    found = unstorable(text)
    if found:
        raise MetadataError(f"{where} holds {found}, which cannot be stored; remove it.")


def validate_metadata(raw: Any) -> dict[str, Any]:
    """The metadata object as given, or :class:`MetadataError` saying what is wrong."""
    if not isinstance(raw, dict):
        raise MetadataError(
            f"metadata must be a JSON object of string keys, got {type(raw).__name__}; "
            'e.g. {"project": "apollo", "tags": ["a", "b"]}.'
        )
    if len(raw) > MAX_KEYS:
        raise MetadataError(f"metadata has {len(raw)} keys; at most {MAX_KEYS} are accepted.")
    for key, value in raw.items():
        if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS:
            raise MetadataError(f"metadata keys are non-empty strings of at most {MAX_KEY_CHARS} characters.")
        _refuse_nul(key, "A metadata key")
        values = value if isinstance(value, list) else [value]
        for item in values:
            if not is_scalar(item):
                shape = "a list nested in a list" if isinstance(item, list) else type(item).__name__
                raise MetadataError(
                    f"metadata.{key} is {shape}; a value is a string, number, boolean, null or a list of those."
                )
            if isinstance(item, str):
                _refuse_nul(item, f"metadata.{key}")
    size = len(json.dumps(raw, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_BYTES:
        raise MetadataError(
            f"metadata is {size} bytes of JSON; at most {MAX_BYTES} are accepted. "
            "Keep it to short tags and write larger content as a memory or a document."
        )
    return raw
