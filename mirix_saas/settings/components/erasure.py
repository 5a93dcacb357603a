"""The key that signs downloaded erasure receipts (docs/erasure-receipts.md).

``MIRIX_RECEIPT_SIGNING_KEY`` is the base64 of a 32-byte Ed25519 private key (seed). Without
it the key is derived from ``DJANGO_SECRET_KEY``, so every deployment signs; set it to keep
the public key stable across a change of the secret key.
"""

from __future__ import annotations

import base64
import binascii

from mirix_saas.settings.env import MissingSetting, env_optional


def _signing_key(raw: str | None) -> bytes | None:
    if raw is None:
        return None
    try:
        key = base64.b64decode(raw, validate=True)
    except binascii.Error as error:
        raise MissingSetting("MIRIX_RECEIPT_SIGNING_KEY must be base64") from error
    if len(key) != 32:
        raise MissingSetting("MIRIX_RECEIPT_SIGNING_KEY must decode to 32 bytes (an Ed25519 private key)")
    return key


RECEIPT_SIGNING_KEY = _signing_key(env_optional("MIRIX_RECEIPT_SIGNING_KEY"))
