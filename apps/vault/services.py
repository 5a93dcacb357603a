"""Knowledge Vault encryption for the vault store's writer and reader.

``vault_encrypt`` and ``vault_decrypt`` run inside the organization's scope: the data key is
read through the fail-closed manager and RLS, and created on first use. The master keyring
comes from settings (``VAULT_MASTER_KEYS``, ``VAULT_ACTIVE_MASTER_KEY``).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max

from apps.platform.errors import ApplicationError, ServiceUnavailable
from apps.tenancy.scope import current_organization_id
from apps.vault import crypto
from apps.vault.models import OrganizationDataKey

logger = logging.getLogger(__name__)


class CrossTenantVaultAccess(ApplicationError):
    status_code = 404
    code = "not_found"


@dataclass(frozen=True)
class EncryptedValue:
    """What the vault store keeps for a value: nothing here reveals it without the keys."""

    ciphertext: bytes
    nonce: bytes
    data_key_version: int


def _keyring() -> crypto.MasterKeyring:
    return crypto.MasterKeyring(keys=settings.VAULT_MASTER_KEYS, active_id=settings.VAULT_ACTIVE_MASTER_KEY)


def _check_scope(organization_id: uuid.UUID) -> None:
    if organization_id != current_organization_id():
        raise CrossTenantVaultAccess("No such vault.")


def _unwrap(*, keyring: crypto.MasterKeyring, data_key: OrganizationDataKey) -> bytes:
    return crypto.unwrap_data_key(
        keyring=keyring,
        wrapped=crypto.WrappedDataKey(master_key_id=data_key.master_key_id, wrapped_key=bytes(data_key.wrapped_key)),
        organization_id=data_key.organization_id,
        version=data_key.version,
    )


def _data_key_create(*, keyring: crypto.MasterKeyring, organization_id: uuid.UUID) -> OrganizationDataKey:
    latest = OrganizationDataKey.objects.aggregate(latest=Max("version"))["latest"]
    version = (latest or 0) + 1
    wrapped = crypto.wrap_data_key(
        keyring=keyring,
        master_key_id=keyring.active_id,
        data_key=crypto.generate_data_key(),
        organization_id=organization_id,
        version=version,
    )
    data_key = OrganizationDataKey.objects.create(
        organization_id=organization_id,
        version=version,
        wrapped_key=wrapped.wrapped_key,
        master_key_id=wrapped.master_key_id,
    )
    logger.info(
        "vault data key created",
        extra={"organization_id": str(organization_id), "version": version, "master_key_id": wrapped.master_key_id},
    )
    return data_key


def _active_data_key(*, keyring: crypto.MasterKeyring, organization_id: uuid.UUID) -> OrganizationDataKey:
    """The active data key, created on first use.

    Concurrent first uses all try to insert; the partial unique index lets one win, the
    others wait for it to commit, fail inside their savepoint and read the winner's key.
    """
    active = OrganizationDataKey.objects.filter(active=True).first()
    if active is not None:
        return active
    try:
        with transaction.atomic():
            return _data_key_create(keyring=keyring, organization_id=organization_id)
    except IntegrityError:
        logger.debug("vault data key created concurrently", extra={"organization_id": str(organization_id)})
        active = OrganizationDataKey.objects.filter(active=True).first()
    if active is None:
        raise ServiceUnavailable("The vault key is being changed; retry the request.")
    return active


def vault_encrypt(*, organization_id: uuid.UUID, entry_id: uuid.UUID, plaintext: str) -> EncryptedValue:
    """Seal a vault value for one entry of one organization (runs in that organization's scope)."""
    _check_scope(organization_id)
    keyring = _keyring()
    data_key = _active_data_key(keyring=keyring, organization_id=organization_id)
    sealed = crypto.seal_value(
        data_key=_unwrap(keyring=keyring, data_key=data_key),
        organization_id=organization_id,
        entry_id=entry_id,
        plaintext=plaintext.encode("utf-8"),
    )
    return EncryptedValue(ciphertext=sealed.ciphertext, nonce=sealed.nonce, data_key_version=data_key.version)


def vault_decrypt(*, organization_id: uuid.UUID, entry_id: uuid.UUID, value: EncryptedValue) -> str:
    """Open a vault value; any change to its bytes, row or tenant raises ``VaultIntegrityError``."""
    _check_scope(organization_id)
    data_key = OrganizationDataKey.objects.filter(version=value.data_key_version).first()
    if data_key is None:
        raise crypto.VaultIntegrityError("A vault value names a data key that does not exist.")
    plaintext = crypto.open_value(
        data_key=_unwrap(keyring=_keyring(), data_key=data_key),
        organization_id=organization_id,
        entry_id=entry_id,
        sealed=crypto.SealedValue(ciphertext=value.ciphertext, nonce=value.nonce),
    )
    return plaintext.decode("utf-8")


def vault_rewrap_data_keys(*, new_master_key_id: str) -> int:
    """Re-wrap every organization's data keys under ``new_master_key_id``; values are untouched.

    A platform operation on the owner connection. Each key is re-wrapped in a transaction of
    its own under a row lock, so a run can be interrupted and repeated; it returns how many
    keys it re-wrapped.
    """
    keyring = _keyring()
    keyring.key(new_master_key_id)  # an unknown id fails before anything changes
    across = OrganizationDataKey.objects.dangerously_across_organizations()
    pending = list(across.exclude(master_key_id=new_master_key_id).order_by("id").values_list("id", flat=True))
    rewrapped = 0
    for data_key_id in pending:
        with transaction.atomic(using="owner"):
            data_key = (
                across.select_for_update().filter(id=data_key_id).exclude(master_key_id=new_master_key_id).first()
            )
            if data_key is None:
                continue
            wrapped = crypto.rewrap_data_key(
                keyring=keyring,
                wrapped=crypto.WrappedDataKey(
                    master_key_id=data_key.master_key_id, wrapped_key=bytes(data_key.wrapped_key)
                ),
                organization_id=data_key.organization_id,
                version=data_key.version,
                new_master_key_id=new_master_key_id,
            )
            data_key.wrapped_key = wrapped.wrapped_key
            data_key.master_key_id = wrapped.master_key_id
            data_key.save(using="owner", update_fields=["wrapped_key", "master_key_id"])
            rewrapped += 1
    logger.info("vault data keys rewrapped", extra={"master_key_id": new_master_key_id, "rewrapped": rewrapped})
    return rewrapped
