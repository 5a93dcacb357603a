from __future__ import annotations

import uuid

from django.db import models

from apps.consent.purposes import PURPOSES
from apps.tenancy.models import Subject, TenantModel


class ConsentRecord(TenantModel):
    """One change of one purpose's consent for one subject. Never updated: a change appends
    the next version, and the current state of a purpose is its latest version."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    purpose = models.CharField(max_length=64, choices=[(name, name) for name in PURPOSES])
    version = models.PositiveIntegerField()
    granted = models.BooleanField()
    actor = models.CharField(max_length=100)  # as in the audit log: "api_key:<id>", "staff:<id>", ...
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "consent_record"
        constraints = [
            models.UniqueConstraint(fields=["subject", "purpose", "version"], name="consent_record_version_unique")
        ]
        indexes = [
            models.Index(fields=["organization", "subject", "purpose", "version"], name="consent_subject_purpose")
        ]

    def __str__(self) -> str:
        return f"{self.purpose} v{self.version} {'granted' if self.granted else 'withdrawn'}"
