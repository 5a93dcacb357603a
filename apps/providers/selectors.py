from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime

from django.db.models import Count, Sum
from django.db.models.functions import TruncDate

from apps.providers.config import ProviderConfig
from apps.providers.models import OrganizationProviderConfig, ProviderUsage
from apps.vault.services import EncryptedValue, vault_decrypt


@dataclass(frozen=True)
class UsageTotals:
    calls: int
    prompt_tokens: int
    completion_tokens: int


def usage_totals_by_purpose(*, since: datetime | None = None, until: datetime | None = None) -> dict[str, UsageTotals]:
    """The organization in scope's token usage per purpose, over ``[since, until)``."""
    queryset = ProviderUsage.objects.all()
    if since is not None:
        queryset = queryset.filter(created_at__gte=since)
    if until is not None:
        queryset = queryset.filter(created_at__lt=until)
    rows = (
        queryset.values("purpose")
        .annotate(calls=Count("id"), prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"))
        .order_by("purpose")
    )
    return {
        row["purpose"]: UsageTotals(
            calls=row["calls"], prompt_tokens=row["prompt"], completion_tokens=row["completion"]
        )
        for row in rows
    }


def usage_totals_by_day_and_model(*, since: datetime, until: datetime) -> dict[tuple[date, str], UsageTotals]:
    """The organization in scope's token usage per UTC day and model, over ``[since, until)``."""
    rows = (
        ProviderUsage.objects.filter(created_at__gte=since, created_at__lt=until)
        .annotate(day=TruncDate("created_at", tzinfo=UTC))
        .values("day", "model")
        .annotate(calls=Count("id"), prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"))
        .order_by("day", "model")
    )
    return {
        (row["day"], row["model"]): UsageTotals(
            calls=row["calls"], prompt_tokens=row["prompt"], completion_tokens=row["completion"]
        )
        for row in rows
    }


def provider_override(*, organization_id: uuid.UUID) -> ProviderConfig | None:
    """The organization's own endpoint, with its key decrypted, or None for the deployment's."""
    config = OrganizationProviderConfig.objects.filter(organization_id=organization_id).first()
    if config is None:
        return None
    api_key = vault_decrypt(
        organization_id=organization_id,
        entry_id=config.id,
        value=EncryptedValue(
            ciphertext=bytes(config.api_key_ciphertext),
            nonce=bytes(config.api_key_nonce),
            data_key_version=config.api_key_data_key_version,
        ),
    )
    return ProviderConfig(base_url=config.base_url or None, model=config.model or None, api_key=api_key)


def provider_config_get(*, organization_id: uuid.UUID) -> OrganizationProviderConfig | None:
    return OrganizationProviderConfig.objects.filter(organization_id=organization_id).first()
