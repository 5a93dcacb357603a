"""Opaque keyset cursors: base64 of the sort key of the last row of a page, its parts joined by
``|`` (``<iso time>|<uuid>``, or ``<iso time>|<type>|<uuid>`` where rows of several types are
listed together). A client passes ``next_cursor`` back as ``cursor`` and never reads it."""

from __future__ import annotations

import base64
import binascii
import uuid
from datetime import datetime

from apps.platform.errors import ValidationFailed

_INVALID = "cursor is not valid; pass next_cursor from the previous page."


def _encode(*parts: str) -> str:
    return base64.urlsafe_b64encode("|".join(parts).encode()).decode()


def _decode(cursor: str, count: int) -> list[str]:
    try:
        parts = base64.urlsafe_b64decode(cursor.encode()).decode().split("|")
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise ValidationFailed(_INVALID) from exc
    if len(parts) != count:
        raise ValidationFailed(_INVALID)
    return parts


def encode_cursor(created_at: datetime, row_id: uuid.UUID) -> str:
    return _encode(created_at.isoformat(), str(row_id))


def decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    created, row_id = _decode(cursor, 2)
    try:
        return datetime.fromisoformat(created), uuid.UUID(row_id)
    except ValueError as exc:
        raise ValidationFailed(_INVALID) from exc


def encode_typed_cursor(created_at: datetime, row_type: str, row_id: uuid.UUID) -> str:
    return _encode(created_at.isoformat(), row_type, str(row_id))


def decode_typed_cursor(cursor: str) -> tuple[datetime, str, uuid.UUID]:
    created, row_type, row_id = _decode(cursor, 3)
    try:
        return datetime.fromisoformat(created), row_type, uuid.UUID(row_id)
    except ValueError as exc:
        raise ValidationFailed(_INVALID) from exc


def encode_sequence_cursor(sequence: int) -> str:
    return _encode("seq", str(sequence))


def decode_sequence_cursor(cursor: str) -> int:
    tag, sequence = _decode(cursor, 2)
    if tag != "seq" or not sequence.isdigit():
        raise ValidationFailed(_INVALID)
    return int(sequence)
