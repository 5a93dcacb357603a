"""Vault services against the real database: lazy data keys, tenancy, tampering, rotation."""

from __future__ import annotations

import io
import logging
import os
import threading
import time
import uuid
from collections import Counter

import pytest
from django.core.management import CommandError, call_command
from django.db import connections
from django.test import override_settings

from apps.platform.errors import MissingTenantScope
from apps.tenancy.scope import organization_scope
from apps.vault.crypto import VaultIntegrityError
from apps.vault.models import OrganizationDataKey
from apps.vault.selectors import vault_master_key_usage
from apps.vault.services import (
    CrossTenantVaultAccess,
    EncryptedValue,
    vault_decrypt,
    vault_encrypt,
    vault_rewrap_data_keys,
)
from tests.factories import Tenant, make_tenant

K1, K2 = os.urandom(32), os.urandom(32)


def _encrypt(tenant: Tenant, entry_id: uuid.UUID, plaintext: str) -> EncryptedValue:
    with organization_scope(tenant.id):
        return vault_encrypt(organization_id=tenant.id, entry_id=entry_id, plaintext=plaintext)


def _decrypt(tenant: Tenant, entry_id: uuid.UUID, value: EncryptedValue) -> str:
    with organization_scope(tenant.id):
        return vault_decrypt(organization_id=tenant.id, entry_id=entry_id, value=value)


def _data_keys() -> list[OrganizationDataKey]:
    return list(OrganizationDataKey.objects.dangerously_across_organizations().order_by("organization_id", "version"))


def test_round_trip_creates_one_data_key_on_first_use() -> None:
    tenant = make_tenant()
    first, second = uuid.uuid4(), uuid.uuid4()
    sealed_first = _encrypt(tenant, first, "pässwörd 🔑")
    sealed_second = _encrypt(tenant, second, "hunter2")
    assert sealed_first.data_key_version == sealed_second.data_key_version == 1
    assert b"hunter2" not in sealed_second.ciphertext
    assert _decrypt(tenant, first, sealed_first) == "pässwörd 🔑"
    assert _decrypt(tenant, second, sealed_second) == "hunter2"
    [data_key] = _data_keys()
    assert data_key.organization_id == tenant.id and data_key.active
    assert data_key.master_key_id == "dev"  # the development keyring of the test settings


def test_changed_ciphertext_wrong_entry_and_unknown_version_fail() -> None:
    tenant = make_tenant()
    entry_id = uuid.uuid4()
    sealed = _encrypt(tenant, entry_id, "secret")
    tampered = EncryptedValue(
        ciphertext=bytes([sealed.ciphertext[0] ^ 0x80]) + sealed.ciphertext[1:],
        nonce=sealed.nonce,
        data_key_version=sealed.data_key_version,
    )
    with pytest.raises(VaultIntegrityError):
        _decrypt(tenant, entry_id, tampered)
    with pytest.raises(VaultIntegrityError):
        _decrypt(tenant, uuid.uuid4(), sealed)
    with pytest.raises(VaultIntegrityError):
        _decrypt(tenant, entry_id, EncryptedValue(sealed.ciphertext, sealed.nonce, data_key_version=7))


def test_a_value_moved_to_another_organization_does_not_open() -> None:
    a, b = make_tenant(), make_tenant()
    entry_id = uuid.uuid4()
    sealed = _encrypt(a, entry_id, "a's secret")
    with pytest.raises(VaultIntegrityError):  # b has no data key yet
        _decrypt(b, entry_id, sealed)
    _encrypt(b, uuid.uuid4(), "b's own")
    with pytest.raises(VaultIntegrityError):  # b's data key (same version number) and b's id in the AAD
        _decrypt(b, entry_id, sealed)
    assert _decrypt(a, entry_id, sealed) == "a's secret"


def test_services_refuse_another_organization_and_a_missing_scope() -> None:
    a, b = make_tenant(), make_tenant()
    entry_id = uuid.uuid4()
    sealed = _encrypt(a, entry_id, "secret")
    with organization_scope(b.id), pytest.raises(CrossTenantVaultAccess):
        vault_decrypt(organization_id=a.id, entry_id=entry_id, value=sealed)
    with organization_scope(b.id), pytest.raises(CrossTenantVaultAccess):
        vault_encrypt(organization_id=a.id, entry_id=entry_id, plaintext="x")
    with pytest.raises(MissingTenantScope):
        vault_decrypt(organization_id=a.id, entry_id=entry_id, value=sealed)


def test_row_level_security_hides_other_organizations_data_keys() -> None:
    a, b = make_tenant(), make_tenant()
    _encrypt(a, uuid.uuid4(), "x")
    with organization_scope(b.id):
        assert list(OrganizationDataKey.objects.for_organization(a.id)) == []
        assert not OrganizationDataKey.objects.exists()


def test_a_retired_data_key_still_opens_its_values_and_a_new_version_seals_new_ones() -> None:
    tenant = make_tenant()
    old_entry, new_entry = uuid.uuid4(), uuid.uuid4()
    old = _encrypt(tenant, old_entry, "old")
    OrganizationDataKey.objects.dangerously_across_organizations().update(active=False)
    new = _encrypt(tenant, new_entry, "new")
    assert (old.data_key_version, new.data_key_version) == (1, 2)
    assert [(k.version, k.active) for k in _data_keys()] == [(1, False), (2, True)]
    assert _decrypt(tenant, old_entry, old) == "old"
    assert _decrypt(tenant, new_entry, new) == "new"


def test_concurrent_first_use_yields_exactly_one_active_key_per_organization(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="apps.vault.services")
    tenants = [make_tenant(), make_tenant()]
    threads_per_organization = 4
    barrier = threading.Barrier(len(tenants) * threads_per_organization)
    sealed: list[tuple[Tenant, uuid.UUID, EncryptedValue]] = []
    failures: list[BaseException] = []
    lock = threading.Lock()

    def first_use(tenant: Tenant) -> None:
        entry_id = uuid.uuid4()
        try:
            barrier.wait(timeout=10)
            with organization_scope(tenant.id):
                value = vault_encrypt(organization_id=tenant.id, entry_id=entry_id, plaintext=str(entry_id))
                # Hold the transaction open so that every thread's first use overlaps the winner's.
                time.sleep(0.3)
            with lock:
                sealed.append((tenant, entry_id, value))
        except BaseException as exc:
            with lock:
                failures.append(exc)
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=first_use, args=(tenant,))
        for tenant in tenants
        for _ in range(threads_per_organization)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert failures == []
    assert len(sealed) == len(threads)
    keys = _data_keys()
    assert Counter(k.organization_id for k in keys) == {tenant.id: 1 for tenant in tenants}
    assert all(k.active and k.version == 1 for k in keys)
    events = Counter(record.getMessage() for record in caplog.records)
    assert events["vault data key created"] == len(tenants)
    assert events["vault data key created concurrently"] >= 1  # the race really happened
    for tenant, entry_id, value in sealed:
        assert _decrypt(tenant, entry_id, value) == str(entry_id)


def test_rotation_rewraps_data_keys_and_old_ciphertexts_still_open_under_the_new_key_alone() -> None:
    tenants = [make_tenant(), make_tenant()]
    with override_settings(VAULT_MASTER_KEYS={"k1": K1}, VAULT_ACTIVE_MASTER_KEY="k1"):
        # What the vault store would keep: the exact bytes, copied out.
        stored = [(t, e, _encrypt(t, e, f"secret of {t.id}")) for t in tenants for e in (uuid.uuid4(), uuid.uuid4())]
    snapshot = [(v.ciphertext, v.nonce, v.data_key_version) for _, _, v in stored]
    before = {k.id: bytes(k.wrapped_key) for k in _data_keys()}
    assert vault_master_key_usage() == {"k1": 2}

    with override_settings(VAULT_MASTER_KEYS={"k1": K1, "k2": K2}, VAULT_ACTIVE_MASTER_KEY="k2"):
        assert vault_rewrap_data_keys(new_master_key_id="k2") == 2
        assert vault_rewrap_data_keys(new_master_key_id="k2") == 0  # repeatable: nothing left to do

    after = _data_keys()
    assert all(k.master_key_id == "k2" and bytes(k.wrapped_key) != before[k.id] for k in after)
    assert vault_master_key_usage() == {"k2": 2}
    with override_settings(VAULT_MASTER_KEYS={"k2": K2}, VAULT_ACTIVE_MASTER_KEY="k2"):
        for tenant, entry_id, value in stored:
            assert _decrypt(tenant, entry_id, value) == f"secret of {tenant.id}"
    assert [(v.ciphertext, v.nonce, v.data_key_version) for _, _, v in stored] == snapshot


def test_rotate_command_uses_the_active_key_and_rejects_unknown_ids() -> None:
    tenant = make_tenant()
    with override_settings(VAULT_MASTER_KEYS={"k1": K1}, VAULT_ACTIVE_MASTER_KEY="k1"):
        entry_id = uuid.uuid4()
        value = _encrypt(tenant, entry_id, "rotated")
    out = io.StringIO()
    with override_settings(VAULT_MASTER_KEYS={"k1": K1, "k2": K2}, VAULT_ACTIVE_MASTER_KEY="k2"):
        call_command("rotate_vault_master_key", stdout=out)
        with pytest.raises(CommandError, match="k3"):
            call_command("rotate_vault_master_key", "--master-key-id", "k3", stdout=io.StringIO())
    assert "Re-wrapped 1 data keys under master key 'k2'" in out.getvalue()
    assert "master key 'k2' wraps 1 data keys" in out.getvalue()
    with override_settings(VAULT_MASTER_KEYS={"k2": K2}, VAULT_ACTIVE_MASTER_KEY="k2"):
        assert _decrypt(tenant, entry_id, value) == "rotated"
