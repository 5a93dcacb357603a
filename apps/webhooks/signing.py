"""Standard Webhooks secrets and signatures. Framework-free.

A secret is ``whsec_`` + base64 of 24-64 random bytes. A message is signed as
``v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")>``; during a secret
rotation every active secret signs, and the signatures are sent space-separated, so a
receiver holding either secret verifies the message.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Sequence

SECRET_PREFIX = "whsec_"  # noqa: S105 - the format's prefix, not a secret
MIN_SECRET_BYTES = 24
MAX_SECRET_BYTES = 64
DEFAULT_SECRET_BYTES = 32


def secret_generate(size: int = DEFAULT_SECRET_BYTES) -> str:
    if not MIN_SECRET_BYTES <= size <= MAX_SECRET_BYTES:
        raise ValueError(f"a webhook secret has {MIN_SECRET_BYTES}-{MAX_SECRET_BYTES} random bytes")
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(size)).decode("ascii")


def secret_key(secret: str) -> bytes:
    """The HMAC key a ``whsec_`` secret encodes."""
    if not secret.startswith(SECRET_PREFIX):
        raise ValueError("a webhook secret starts with 'whsec_'")
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except binascii.Error as exc:
        raise ValueError("a webhook secret is 'whsec_' followed by base64") from exc
    if not MIN_SECRET_BYTES <= len(key) <= MAX_SECRET_BYTES:
        raise ValueError(f"a webhook secret has {MIN_SECRET_BYTES}-{MAX_SECRET_BYTES} bytes")
    return key


def signature(*, secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def signed_headers(*, secrets: Sequence[str], message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The three Standard Webhooks headers, signed by every active secret (newest first)."""
    if not secrets:
        raise ValueError("at least one secret signs a message")
    signatures = [signature(secret=s, message_id=message_id, timestamp=timestamp, body=body) for s in secrets]
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signatures),
    }
