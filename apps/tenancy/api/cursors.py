"""Opaque keyset cursors: base64 of ``<iso time>|<uuid>``."""

from __future__ import annotations

import base64
import binascii
import uuid
from datetime import datetime

from apps.platform.errors import ValidationFailed


def encode_cursor(created_at: datetime, row_id: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(f"{created_at.isoformat()}|{row_id}".encode()).decode()


def decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    try:
        created, row_id = base64.urlsafe_b64decode(cursor.encode()).decode().split("|")
        return datetime.fromisoformat(created), uuid.UUID(row_id)
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise ValidationFailed("cursor is not valid; pass next_cursor from the previous page.") from exc
