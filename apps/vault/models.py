from __future__ import annotations

import uuid

from django.db import models

from apps.tenancy.models import TenantModel


class OrganizationDataKey(TenantModel):
    """An organization's vault data key, stored only wrapped by a master key (see ``crypto``).

    Values name the ``version`` that sealed them, so a retired (inactive) key still opens
    them; exactly one key per organization is active and seals new values.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    version = models.PositiveIntegerField()
    wrapped_key = models.BinaryField()
    master_key_id = models.CharField(max_length=64)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "vault_data_key"
        constraints = [
            models.UniqueConstraint(fields=["organization", "version"], name="vault_data_key_version_unique"),
            models.UniqueConstraint(
                fields=["organization"], condition=models.Q(active=True), name="vault_data_key_one_active"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.organization_id} v{self.version}"
