from __future__ import annotations

import uuid

from django.db import models

from apps.tenancy.models import TenantModel


class ProviderUsage(TenantModel):
    """Tokens one provider reply consumed, for one organization and one purpose (e.g. 'route').

    Its manager is ``TenantModel``'s fail-closed ``TenantScopedManager``; RLS backs it up.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    purpose = models.CharField(max_length=64)
    model = models.CharField(max_length=200)
    prompt_tokens = models.PositiveIntegerField()
    completion_tokens = models.PositiveIntegerField()
    # The API key whose request made the call; null for background work (a write's worker,
    # dreaming, indexing). Not a foreign key, like ``usage_counter.api_key_id`` (ADR 0042).
    api_key_id = models.UUIDField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "providers_provider_usage"
        indexes = [
            models.Index(fields=["organization", "created_at"], name="provider_usage_org_created"),
            models.Index(fields=["organization", "purpose", "created_at"], name="provider_usage_org_purpose"),
        ]


class OrganizationProviderConfig(TenantModel):
    """An organization's own OpenAI-compatible endpoint. The API key is stored only encrypted
    (the vault's envelope encryption, with this row's id as the entry id)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    base_url = models.CharField(max_length=500, blank=True, default="")
    model = models.CharField(max_length=200, blank=True, default="")
    api_key_ciphertext = models.BinaryField()
    api_key_nonce = models.BinaryField()
    api_key_data_key_version = models.PositiveIntegerField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "providers_organization_config"
        constraints = [models.UniqueConstraint(fields=["organization"], name="provider_config_one_per_organization")]

    def __str__(self) -> str:
        return f"provider config of {self.organization_id}"
