"""Erasure receipts. Framework-free.

A receipt says what an erasure removed — counts per store, never content — and when. Its
SHA-256 is taken over the canonical JSON (sorted keys, no insignificant whitespace, ASCII),
so anyone holding the receipt can recompute it, and the audit log entry that records the
hash pins the receipt against later change. A downloaded receipt is signed (Ed25519) over
that same canonical JSON.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


def canonical_json(value: Mapping[str, Any]) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def receipt_sha256(receipt: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(receipt).encode("ascii")).hexdigest()


def counts_merge(total: Mapping[str, int], more: Mapping[str, int]) -> dict[str, int]:
    merged = dict(total)
    for key, count in more.items():
        merged[key] = merged.get(key, 0) + count
    return merged


# Signed receipts: an Ed25519 signature over the receipt's canonical JSON, so anyone holding
# the service's public key can check a downloaded receipt without any secret of ours.
SIGNATURE_ALGORITHM = "Ed25519"


def signing_key_from_seed(seed: bytes) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(seed)


def public_key_text(private_key: Ed25519PrivateKey) -> str:
    """The raw 32-byte public key, base64: what a verifier pins."""
    raw = private_key.public_key().public_bytes(encoding=Encoding.Raw, format=PublicFormat.Raw)
    return base64.b64encode(raw).decode("ascii")


def key_id(public_key: str) -> str:
    return hashlib.sha256(base64.b64decode(public_key)).hexdigest()[:16]


def receipt_sign(receipt: Mapping[str, Any], private_key: Ed25519PrivateKey) -> dict[str, Any]:
    """The downloadable document: the receipt, its hash, and a signature over its canonical
    JSON by ``private_key``."""
    canonical = canonical_json(receipt).encode("ascii")
    public_key = public_key_text(private_key)
    return {
        "receipt": dict(receipt),
        "receipt_sha256": hashlib.sha256(canonical).hexdigest(),
        "signature": {
            "algorithm": SIGNATURE_ALGORITHM,
            "key_id": key_id(public_key),
            "public_key": public_key,
            "signed": "canonical JSON of receipt: sorted keys, no whitespace, ASCII",
            "value": base64.b64encode(private_key.sign(canonical)).decode("ascii"),
        },
    }


def receipt_verify(document: Mapping[str, Any], *, public_key: str) -> bool:
    """True when ``document`` is a receipt signed by the key ``public_key`` names (the key
    pinned by the verifier, never the one the document carries)."""
    try:
        signature = base64.b64decode(document["signature"]["value"], validate=True)
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key, validate=True))
        key.verify(signature, canonical_json(document["receipt"]).encode("ascii"))
    except (KeyError, TypeError, ValueError, binascii.Error, InvalidSignature):
        return False
    return document.get("receipt_sha256") == receipt_sha256(document["receipt"])
