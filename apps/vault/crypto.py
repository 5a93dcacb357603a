"""Knowledge Vault envelope encryption (AES-256-GCM). Framework-free.

Each organization has a 256-bit data key. Values are sealed under it with a fresh 96-bit
nonce and associated data that binds the organization and the entry id, so a ciphertext
copied into another row or another tenant fails authentication. The data key is stored
only wrapped (AES-GCM again) by a master key from the keyring, with associated data that
binds the organization and the data key's version. Rotating the master key unwraps and
re-wraps data keys; sealed values are never touched.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from apps.platform.errors import ApplicationError

KEY_BYTES = 32
NONCE_BYTES = 12
_VALUE_CONTEXT = b"mirix-vault/v1/value\x00"
_DATA_KEY_CONTEXT = b"mirix-vault/v1/data-key\x00"


class VaultError(ApplicationError):
    """A server-side vault failure: never the client's fault, never shows key material."""

    status_code = 500
    code = "vault_error"


class VaultKeyringInvalid(VaultError):
    pass


class UnknownMasterKey(VaultError):
    pass


class VaultIntegrityError(VaultError):
    """Authentication failed: the bytes were changed, moved to another row or tenant, or the key is wrong."""

    code = "vault_integrity_error"


@dataclass(frozen=True)
class MasterKeyring:
    keys: Mapping[str, bytes]
    active_id: str

    def __post_init__(self) -> None:
        if self.active_id not in self.keys:
            raise VaultKeyringInvalid("The active vault master key is not in the keyring.")
        if any(len(key) != KEY_BYTES for key in self.keys.values()):
            raise VaultKeyringInvalid(f"Vault master keys must be {KEY_BYTES} bytes.")

    def key(self, key_id: str) -> bytes:
        try:
            return self.keys[key_id]
        except KeyError:
            raise UnknownMasterKey(f"Vault master key {key_id!r} is not in the keyring.") from None


@dataclass(frozen=True)
class WrappedDataKey:
    master_key_id: str
    wrapped_key: bytes  # nonce || AES-GCM(ciphertext + tag)


@dataclass(frozen=True)
class SealedValue:
    ciphertext: bytes  # AES-GCM ciphertext + tag
    nonce: bytes


def generate_data_key() -> bytes:
    return AESGCM.generate_key(bit_length=KEY_BYTES * 8)


def _data_key_context(organization_id: uuid.UUID, version: int) -> bytes:
    return _DATA_KEY_CONTEXT + organization_id.bytes + version.to_bytes(4, "big")


def _value_context(organization_id: uuid.UUID, entry_id: uuid.UUID) -> bytes:
    return _VALUE_CONTEXT + organization_id.bytes + entry_id.bytes


def wrap_data_key(
    *, keyring: MasterKeyring, master_key_id: str, data_key: bytes, organization_id: uuid.UUID, version: int
) -> WrappedDataKey:
    nonce = os.urandom(NONCE_BYTES)
    sealed = AESGCM(keyring.key(master_key_id)).encrypt(nonce, data_key, _data_key_context(organization_id, version))
    return WrappedDataKey(master_key_id=master_key_id, wrapped_key=nonce + sealed)


def unwrap_data_key(
    *, keyring: MasterKeyring, wrapped: WrappedDataKey, organization_id: uuid.UUID, version: int
) -> bytes:
    nonce, sealed = wrapped.wrapped_key[:NONCE_BYTES], wrapped.wrapped_key[NONCE_BYTES:]
    if len(nonce) != NONCE_BYTES:
        raise VaultIntegrityError("A vault data key failed its integrity check.")
    try:
        return AESGCM(keyring.key(wrapped.master_key_id)).decrypt(
            nonce, sealed, _data_key_context(organization_id, version)
        )
    except InvalidTag:
        raise VaultIntegrityError("A vault data key failed its integrity check.") from None


def rewrap_data_key(
    *,
    keyring: MasterKeyring,
    wrapped: WrappedDataKey,
    organization_id: uuid.UUID,
    version: int,
    new_master_key_id: str,
) -> WrappedDataKey:
    data_key = unwrap_data_key(keyring=keyring, wrapped=wrapped, organization_id=organization_id, version=version)
    return wrap_data_key(
        keyring=keyring,
        master_key_id=new_master_key_id,
        data_key=data_key,
        organization_id=organization_id,
        version=version,
    )


def seal_value(*, data_key: bytes, organization_id: uuid.UUID, entry_id: uuid.UUID, plaintext: bytes) -> SealedValue:
    nonce = os.urandom(NONCE_BYTES)
    ciphertext = AESGCM(data_key).encrypt(nonce, plaintext, _value_context(organization_id, entry_id))
    return SealedValue(ciphertext=ciphertext, nonce=nonce)


def open_value(*, data_key: bytes, organization_id: uuid.UUID, entry_id: uuid.UUID, sealed: SealedValue) -> bytes:
    if len(sealed.nonce) != NONCE_BYTES:
        raise VaultIntegrityError("A vault value failed its integrity check.")
    try:
        return AESGCM(data_key).decrypt(sealed.nonce, sealed.ciphertext, _value_context(organization_id, entry_id))
    except InvalidTag:
        raise VaultIntegrityError("A vault value failed its integrity check.") from None
