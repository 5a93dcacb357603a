"""Idempotency keys: what a key may be, and which request a key was used for. Framework-free.

A client sends ``Idempotency-Key`` with a POST so that retrying it (after a timeout, a dropped
connection) cannot write twice. The request a key belongs to is named by a fingerprint: the
SHA-256 of the method, the path with its query and the body. A multipart body is
fingerprinted without its boundary (a client library draws a new one for every attempt), so
a retried upload of the same fields and bytes is the same request (ADR 0038).
"""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255
RETENTION = timedelta(hours=24)
# What a replay answers: the responses that created something. An error wrote nothing (the
# transaction rolled back), so a retry with the key runs again.
STORED_STATUSES = frozenset({201, 202})

_BOUNDARY = re.compile(r"boundary=(\"?)([^\";]+)\1", re.IGNORECASE)


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot be an idempotency key, or None."""
    if not key.strip():
        return f"{HEADER} must not be empty."
    if len(key) > MAX_KEY_LENGTH:
        return f"{HEADER} is {len(key)} characters long; at most {MAX_KEY_LENGTH} are allowed."
    return None


def request_fingerprint(*, method: str, path: str, content_type: str, body: bytes) -> str:
    digest = hashlib.sha256()
    match = _BOUNDARY.search(content_type)
    if content_type.lower().startswith("multipart/") and match:
        body = body.replace(b"--" + match.group(2).encode("latin-1"), b"--boundary")
        content_type = "multipart/form-data"
    for part in (method.upper().encode(), path.encode(), content_type.split(";")[0].strip().lower().encode(), body):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()
