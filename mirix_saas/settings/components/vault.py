"""Knowledge Vault master keys (§4): a keyring of 256-bit keys and the id of the active one.

``MIRIX_VAULT_MASTER_KEYS`` reads ``k1:<base64>,k2:<base64>``; ``MIRIX_VAULT_ACTIVE_MASTER_KEY``
names the key that wraps new data keys. Retired keys stay in the keyring until
``rotate_vault_master_key`` has re-wrapped every data key under the active one.
Local and test runs get a fixed development keyring; production must configure both.
"""

from __future__ import annotations

import base64
import binascii
import os

from mirix_saas.settings.env import MissingSetting, env_str

_MASTER_KEY_BYTES = 32
_DEVELOPMENT_KEYRING = "dev:" + base64.b64encode(b"mirix-local-development-vault-k1").decode()
_PRODUCTION = os.environ.get("DJANGO_SETTINGS_MODULE", "").endswith(".production")


def _parse_master_keys(raw: str) -> dict[str, bytes]:
    keys: dict[str, bytes] = {}
    for item in raw.split(","):
        key_id, separator, encoded = item.strip().partition(":")
        if not separator or not key_id or key_id in keys:
            raise MissingSetting("MIRIX_VAULT_MASTER_KEYS must read 'id:<base64>,id:<base64>' with distinct ids")
        try:
            key = base64.b64decode(encoded, validate=True)
        except binascii.Error as exc:
            raise MissingSetting(f"MIRIX_VAULT_MASTER_KEYS: key {key_id!r} is not base64") from exc
        if len(key) != _MASTER_KEY_BYTES:
            raise MissingSetting(f"MIRIX_VAULT_MASTER_KEYS: key {key_id!r} must decode to {_MASTER_KEY_BYTES} bytes")
        keys[key_id] = key
    return keys


VAULT_MASTER_KEYS = _parse_master_keys(
    env_str("MIRIX_VAULT_MASTER_KEYS", None if _PRODUCTION else _DEVELOPMENT_KEYRING)
)
VAULT_ACTIVE_MASTER_KEY = env_str("MIRIX_VAULT_ACTIVE_MASTER_KEY", None if _PRODUCTION else "dev")
if VAULT_ACTIVE_MASTER_KEY not in VAULT_MASTER_KEYS:
    raise MissingSetting("MIRIX_VAULT_ACTIVE_MASTER_KEY must name a key in MIRIX_VAULT_MASTER_KEYS")
