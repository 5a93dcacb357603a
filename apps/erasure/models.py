"""Erasure requests (with their receipts) and the outbox that makes sure each one runs.

A request holds ids, counts and hashes, never content. ``organization_id`` is a plain column,
as in the audit log: the receipt of an erased organization outlives the organization.
"""

from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.db import models

from apps.tenancy.managers import TenantScopedManager
from apps.tenancy.models import TenantModel


class ErasureRequest(models.Model):
    class Kind(models.TextChoices):
        SUBJECT = "subject"  # every trace of one subject, then the subject itself
        CONSENT_WITHDRAWAL = "consent_withdrawal"  # what the withdrawn purposes cover
        ORGANIZATION = "organization"  # everything the organization owns

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        COMPLETED = "completed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization_id = models.UUIDField()
    kind = models.CharField(max_length=32, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    subject_id = models.UUIDField(null=True, blank=True)  # not a foreign key: the subject goes
    # Keyed hash of the subject's external id: the tombstone that keeps a repeated DELETE idempotent.
    subject_key = models.CharField(max_length=64, blank=True, default="")
    purposes = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    requested_by = models.CharField(max_length=100)
    job_id = models.UUIDField(null=True, blank=True)
    steps_done = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    counts = models.JSONField(default=dict, blank=True)
    # The tables rewritten after the rows were deleted: [{"relation", "status", "at"}] (ADR 0022).
    storage = models.JSONField(default=list, blank=True)
    receipt = models.JSONField(null=True, blank=True)
    receipt_sha256 = models.CharField(max_length=64, blank=True, default="")
    requested_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    objects = TenantScopedManager()

    class Meta:
        db_table = "erasure_request"
        indexes = [
            models.Index(fields=["organization_id", "subject_id", "status"], name="erasure_subject_status"),
            models.Index(fields=["organization_id", "subject_key"], name="erasure_subject_key"),
            models.Index(fields=["organization_id", "requested_at", "id"], name="erasure_org_requested"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} erasure {self.id} ({self.status})"


class ErasureOutbox(TenantModel):
    """The promise that a request runs: written with the request, published on commit, and
    republished by the beat drain whenever ``next_attempt_at`` passes before ``done_at`` is
    set (a publish lost between commit and broker, a worker lost past its retries)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    erasure_request = models.OneToOneField(ErasureRequest, on_delete=models.CASCADE, related_name="+")
    next_attempt_at = models.DateTimeField()
    publish_count = models.PositiveIntegerField(default=0)
    last_published_at = models.DateTimeField(null=True, blank=True)
    done_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "erasure_outbox"
        indexes = [
            models.Index(
                fields=["next_attempt_at"], condition=models.Q(done_at__isnull=True), name="erasure_outbox_due"
            ),
        ]

    def __str__(self) -> str:
        return f"outbox of {self.erasure_request_id}"
