"""The envelope encryption itself: pure functions, no database."""

from __future__ import annotations

import os
import uuid

import pytest

from apps.vault import crypto

pytestmark = pytest.mark.unit

ORG = uuid.uuid4()
ENTRY = uuid.uuid4()


def _keyring(active: str = "k1", *ids: str) -> crypto.MasterKeyring:
    return crypto.MasterKeyring(keys={key_id: os.urandom(32) for key_id in {active, *ids}}, active_id=active)


def _flip(data: bytes, index: int) -> bytes:
    return data[:index] + bytes([data[index] ^ 0x01]) + data[index + 1 :]


def test_value_round_trip_with_a_fresh_nonce_each_time() -> None:
    data_key = crypto.generate_data_key()
    first = crypto.seal_value(data_key=data_key, organization_id=ORG, entry_id=ENTRY, plaintext=b"hunter2")
    second = crypto.seal_value(data_key=data_key, organization_id=ORG, entry_id=ENTRY, plaintext=b"hunter2")
    assert len(data_key) == 32 and len(first.nonce) == 12
    assert first.nonce != second.nonce and first.ciphertext != second.ciphertext
    assert b"hunter2" not in first.ciphertext
    assert crypto.open_value(data_key=data_key, organization_id=ORG, entry_id=ENTRY, sealed=first) == b"hunter2"


@pytest.mark.parametrize("index", [0, 3, 6, 20])  # ciphertext bytes and tag bytes
def test_any_changed_ciphertext_byte_fails(index: int) -> None:
    data_key = crypto.generate_data_key()
    sealed = crypto.seal_value(data_key=data_key, organization_id=ORG, entry_id=ENTRY, plaintext=b"secret")
    tampered = crypto.SealedValue(ciphertext=_flip(sealed.ciphertext, index), nonce=sealed.nonce)
    with pytest.raises(crypto.VaultIntegrityError):
        crypto.open_value(data_key=data_key, organization_id=ORG, entry_id=ENTRY, sealed=tampered)


def test_changed_nonce_truncation_wrong_entry_wrong_organization_and_wrong_key_all_fail() -> None:
    data_key = crypto.generate_data_key()
    sealed = crypto.seal_value(data_key=data_key, organization_id=ORG, entry_id=ENTRY, plaintext=b"secret")
    attempts = [
        (data_key, ORG, ENTRY, crypto.SealedValue(ciphertext=sealed.ciphertext, nonce=_flip(sealed.nonce, 0))),
        (data_key, ORG, ENTRY, crypto.SealedValue(ciphertext=sealed.ciphertext[:-1], nonce=sealed.nonce)),
        (data_key, ORG, ENTRY, crypto.SealedValue(ciphertext=sealed.ciphertext, nonce=sealed.nonce[:8])),
        (data_key, ORG, uuid.uuid4(), sealed),
        (data_key, uuid.uuid4(), ENTRY, sealed),
        (crypto.generate_data_key(), ORG, ENTRY, sealed),
    ]
    for key, organization_id, entry_id, candidate in attempts:
        with pytest.raises(crypto.VaultIntegrityError):
            crypto.open_value(data_key=key, organization_id=organization_id, entry_id=entry_id, sealed=candidate)


def test_data_key_wrapping_is_bound_to_organization_and_version() -> None:
    keyring = _keyring()
    data_key = crypto.generate_data_key()
    wrapped = crypto.wrap_data_key(
        keyring=keyring, master_key_id="k1", data_key=data_key, organization_id=ORG, version=1
    )
    assert data_key not in wrapped.wrapped_key and wrapped.master_key_id == "k1"
    assert crypto.unwrap_data_key(keyring=keyring, wrapped=wrapped, organization_id=ORG, version=1) == data_key
    for organization_id, version in [(uuid.uuid4(), 1), (ORG, 2)]:
        with pytest.raises(crypto.VaultIntegrityError):
            crypto.unwrap_data_key(keyring=keyring, wrapped=wrapped, organization_id=organization_id, version=version)
    for broken in (_flip(wrapped.wrapped_key, 30), wrapped.wrapped_key[:5]):
        with pytest.raises(crypto.VaultIntegrityError):
            crypto.unwrap_data_key(
                keyring=keyring,
                wrapped=crypto.WrappedDataKey(master_key_id="k1", wrapped_key=broken),
                organization_id=ORG,
                version=1,
            )


def test_rewrap_changes_the_wrapping_but_not_the_data_key_so_old_values_still_open() -> None:
    old = _keyring("k1")
    data_key = crypto.generate_data_key()
    wrapped = crypto.wrap_data_key(keyring=old, master_key_id="k1", data_key=data_key, organization_id=ORG, version=1)
    sealed = crypto.seal_value(data_key=data_key, organization_id=ORG, entry_id=ENTRY, plaintext=b"kept")

    both = crypto.MasterKeyring(keys={**old.keys, "k2": os.urandom(32)}, active_id="k2")
    rewrapped = crypto.rewrap_data_key(
        keyring=both, wrapped=wrapped, organization_id=ORG, version=1, new_master_key_id="k2"
    )
    assert rewrapped.master_key_id == "k2" and rewrapped.wrapped_key != wrapped.wrapped_key

    only_new = crypto.MasterKeyring(keys={"k2": both.keys["k2"]}, active_id="k2")
    unwrapped = crypto.unwrap_data_key(keyring=only_new, wrapped=rewrapped, organization_id=ORG, version=1)
    assert crypto.open_value(data_key=unwrapped, organization_id=ORG, entry_id=ENTRY, sealed=sealed) == b"kept"
    with pytest.raises(crypto.UnknownMasterKey):
        crypto.unwrap_data_key(keyring=only_new, wrapped=wrapped, organization_id=ORG, version=1)


def test_keyring_validation() -> None:
    with pytest.raises(crypto.VaultKeyringInvalid):
        crypto.MasterKeyring(keys={"k1": os.urandom(32)}, active_id="k2")
    with pytest.raises(crypto.VaultKeyringInvalid):
        crypto.MasterKeyring(keys={"k1": os.urandom(16)}, active_id="k1")
    with pytest.raises(crypto.UnknownMasterKey):
        crypto.wrap_data_key(
            keyring=_keyring(), master_key_id="nope", data_key=os.urandom(32), organization_id=ORG, version=1
        )
