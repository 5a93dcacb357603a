"""Token metering: one row per provider reply, in the organization's own scope."""

from __future__ import annotations

import uuid

from django.conf import settings

from apps.platform import netpolicy
from apps.platform.errors import ValidationFailed
from apps.providers.interfaces import MeteringContext, UsageMeter
from apps.providers.models import OrganizationProviderConfig, ProviderUsage
from apps.tenancy.scope import organization_scope
from apps.vault.services import vault_encrypt


def usage_record(
    *,
    organization_id: uuid.UUID,
    api_key_id: uuid.UUID | None = None,
    purpose: str,
    model: str,
    prompt_tokens: int,
    completion_tokens: int,
) -> ProviderUsage:
    """Needs the organization in scope: the fail-closed manager and RLS both check it."""
    return ProviderUsage.objects.create(
        organization_id=organization_id,
        api_key_id=api_key_id,
        purpose=purpose,
        model=model,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
    )


class DatabaseUsageMeter:
    """The production ``UsageMeter``.

    Provider calls are best made outside any transaction (they are slow), so the meter opens
    the organization's scope for the write itself; inside an open scope it nests as a savepoint.
    """

    def record(
        self,
        *,
        organization_id: uuid.UUID,
        api_key_id: uuid.UUID | None,
        purpose: str,
        model: str,
        prompt_tokens: int,
        completion_tokens: int,
    ) -> None:
        with organization_scope(organization_id):
            usage_record(
                organization_id=organization_id,
                api_key_id=api_key_id,
                purpose=purpose,
                model=model,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
            )


class BufferedUsageMeter:
    """A ``UsageMeter`` for a batch that runs in one open transaction of the organization (the
    worker's completion of many writes): it keeps the rows and ``flush`` inserts them in one
    statement, in that transaction, instead of one savepoint and insert per provider reply.
    A reply whose caller's savepoint rolls back (one write's writers failing) stays metered:
    its tokens were spent."""

    def __init__(self) -> None:
        self._rows: list[ProviderUsage] = []

    def record(
        self,
        *,
        organization_id: uuid.UUID,
        api_key_id: uuid.UUID | None,
        purpose: str,
        model: str,
        prompt_tokens: int,
        completion_tokens: int,
    ) -> None:
        self._rows.append(
            ProviderUsage(
                organization_id=organization_id,
                api_key_id=api_key_id,
                purpose=purpose,
                model=model,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
            )
        )

    def flush(self) -> int:
        """Insert the rows kept so far (the organization must be in scope); returns how many."""
        rows, self._rows = self._rows, []
        if rows:
            ProviderUsage.objects.bulk_create(rows)
        return len(rows)


def request_metering(
    *, organization_id: uuid.UUID, api_key_id: uuid.UUID | None, meter: UsageMeter | None = None
) -> MeteringContext:
    """The metering of the calls one request (or job) of this key makes, into the database
    (row by row, or into ``meter``, e.g. a ``BufferedUsageMeter`` its caller flushes)."""
    return MeteringContext(organization_id=organization_id, meter=meter or DatabaseUsageMeter(), api_key_id=api_key_id)


def provider_config_set(*, organization_id: uuid.UUID, api_key: str, base_url: str = "", model: str = "") -> None:
    """Store the organization's own endpoint; the key is encrypted, the URL checked for safety."""
    if base_url:
        _check_base_url(base_url)
    existing = OrganizationProviderConfig.objects.select_for_update().filter(organization_id=organization_id).first()
    config = existing or OrganizationProviderConfig(organization_id=organization_id)
    encrypted = vault_encrypt(organization_id=organization_id, entry_id=config.id, plaintext=api_key)
    config.base_url, config.model = base_url, model
    config.api_key_ciphertext, config.api_key_nonce = encrypted.ciphertext, encrypted.nonce
    config.api_key_data_key_version = encrypted.data_key_version
    config.save()


def provider_config_clear(*, organization_id: uuid.UUID) -> bool:
    deleted, _ = OrganizationProviderConfig.objects.filter(organization_id=organization_id).delete()
    return deleted > 0


def _check_base_url(base_url: str) -> None:
    """The endpoint our servers will call for this organization: https, and a public host.

    Checked when it is set, to answer a clear 400 at once; every connection to it is checked
    again when it is made (``apps.providers.outbound``), since its address may change."""
    try:
        netpolicy.AddressPolicy(allow_loopback=settings.PROVIDERS_ALLOW_LOOPBACK).checked(base_url)
    except netpolicy.OutboundError as exc:
        raise ValidationFailed(f"base_url is not allowed: {exc}") from exc
