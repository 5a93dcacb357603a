from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models

from apps.tenancy.managers import TenantScopedManager


class AuditEntry(models.Model):
    """One append-only, hash-chained audit record. Ids only, never memory text.

    ``organization_id`` is not a foreign key: the log outlives an offboarded organization,
    and the database refuses UPDATE and DELETE on this table.
    """

    id = models.BigAutoField(primary_key=True)
    organization_id = models.UUIDField()
    sequence = models.PositiveBigIntegerField()
    actor = models.CharField(max_length=100)  # "api_key:<id>", "staff:<id>", "task:<name>"
    action = models.CharField(max_length=64)
    subject_id = models.UUIDField(null=True, blank=True)
    target_ids = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    request_id = models.CharField(max_length=100, blank=True, default="")
    created_at = models.DateTimeField()
    previous_hash = models.CharField(max_length=64)
    entry_hash = models.CharField(max_length=64)

    objects = TenantScopedManager()

    class Meta:
        db_table = "audit_entry"
        constraints = [models.UniqueConstraint(fields=["organization_id", "sequence"], name="audit_sequence_unique")]

    def __str__(self) -> str:
        return f"{self.organization_id}#{self.sequence} {self.action}"

    def chain_fields(self) -> dict[str, object]:
        return {
            "organization_id": str(self.organization_id),
            "actor": self.actor,
            "action": self.action,
            "subject_id": str(self.subject_id) if self.subject_id else None,
            "target_ids": list(self.target_ids),
            "request_id": self.request_id,
            "created_at": self.created_at.isoformat(),
        }
