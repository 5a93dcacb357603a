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
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "providers_provider_usage"
        indexes = [
            models.Index(fields=["organization", "created_at"], name="provider_usage_org_created"),
            models.Index(fields=["organization", "purpose", "created_at"], name="provider_usage_org_purpose"),
        ]
