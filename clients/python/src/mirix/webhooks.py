"""Verifying a webhook delivery: Standard Webhooks signatures, as the service signs them.

A delivery carries ``webhook-id``, ``webhook-timestamp`` and ``webhook-signature`` (one or more
space-separated ``v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>``, one per active
secret during a rotation); the key is the base64 after ``whsec_`` in the endpoint's secret."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

from mirix.errors import MirixError

SECRET_PREFIX = "whsec_"  # noqa: S105 - the format's prefix, not a secret


class WebhookVerificationError(MirixError):
    """The delivery is not signed by the secret, is malformed, or is too old (a replay)."""


def _key(secret: str) -> bytes:
    if not secret.startswith(SECRET_PREFIX):
        raise WebhookVerificationError("a webhook secret starts with 'whsec_'")
    try:
        return base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except binascii.Error as exc:
        raise WebhookVerificationError("a webhook secret is 'whsec_' followed by base64") from exc


def sign(payload: bytes, *, secret: str, message_id: str, timestamp: int) -> str:
    """The ``v1,...`` signature of one delivery under ``secret``."""
    signed = f"{message_id}.{timestamp}.".encode() + payload
    return "v1," + base64.b64encode(hmac.new(_key(secret), signed, hashlib.sha256).digest()).decode()


def verify(
    payload: bytes | str,
    headers: Mapping[str, str],
    secret: str,
    *,
    tolerance_seconds: int = 300,
    now: float | None = None,
) -> Any:
    """The decoded event of a delivery whose signature matches ``secret`` and whose timestamp is
    within ``tolerance_seconds`` of now; WebhookVerificationError otherwise. Pass the raw body."""
    body = payload.encode() if isinstance(payload, str) else payload
    lowered = {k.lower(): v for k, v in headers.items()}
    try:
        message_id = lowered["webhook-id"]
        timestamp = int(lowered["webhook-timestamp"])
        signatures = lowered["webhook-signature"].split()
    except (KeyError, ValueError) as exc:
        raise WebhookVerificationError("missing or malformed webhook-id/-timestamp/-signature headers") from exc
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance_seconds:
        raise WebhookVerificationError("the delivery's timestamp is outside the tolerance (a replay?)")
    expected = sign(body, secret=secret, message_id=message_id, timestamp=timestamp)
    if not any(hmac.compare_digest(expected, candidate) for candidate in signatures):
        raise WebhookVerificationError("no signature matches the secret")
    return json.loads(body)
