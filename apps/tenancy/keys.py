"""API key material: generation, parsing and keyed hashing. Framework-free.

A key reads ``<prefix><lookup id><secret>``: the prefix says what it is (``mx_live_``), the
12-character lookup id is stored in clear to find the row, and the whole key is stored only as
HMAC-SHA256 under a server pepper. 32 random bytes of secret, base62-encoded.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
LOOKUP_ID_LENGTH = 12
SECRET_BYTES = 32
SECRET_LENGTH = 43  # ceil(256 / log2(62))

# ``memories:delete`` is its own scope: updates append, and deleting rows is granted apart.
SCOPES = ("memories:read", "memories:write", "memories:delete", "vault:read", "admin")


def base62(data: bytes, length: int) -> str:
    number = int.from_bytes(data, "big")
    chars = []
    while number:
        number, rest = divmod(number, 62)
        chars.append(ALPHABET[rest])
    return "".join(reversed(chars)).rjust(length, "0")


@dataclass(frozen=True)
class ParsedKey:
    lookup_id: str
    full_key: str


@dataclass(frozen=True)
class NewKey:
    lookup_id: str
    full_key: str
    key_hash: str


def key_hash(full_key: str, pepper: str) -> str:
    return hmac.new(pepper.encode(), full_key.encode(), hashlib.sha256).hexdigest()


def generate_key(prefix: str, pepper: str) -> NewKey:
    lookup_id = base62(secrets.token_bytes(9), LOOKUP_ID_LENGTH)[-LOOKUP_ID_LENGTH:]
    secret = base62(secrets.token_bytes(SECRET_BYTES), SECRET_LENGTH)
    full_key = f"{prefix}{lookup_id}{secret}"
    return NewKey(lookup_id=lookup_id, full_key=full_key, key_hash=key_hash(full_key, pepper))


def parse_key(candidate: str, prefix: str) -> ParsedKey | None:
    """The lookup id of a well-formed key, or None: malformed keys never reach the database."""
    pattern = re.compile(rf"^{re.escape(prefix)}([0-9A-Za-z]{{{LOOKUP_ID_LENGTH}}})[0-9A-Za-z]{{{SECRET_LENGTH}}}$")
    match = pattern.match(candidate)
    if not match:
        return None
    return ParsedKey(lookup_id=match.group(1), full_key=candidate)


def hash_matches(full_key: str, stored_hash: str, pepper: str) -> bool:
    return hmac.compare_digest(key_hash(full_key, pepper), stored_hash)


def invalid_scopes(requested: list[str]) -> list[str]:
    return sorted(set(requested) - set(SCOPES))
