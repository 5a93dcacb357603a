from __future__ import annotations

import uuid

from django.db import models

from apps.tenancy.models import Subject, TenantModel


class Job(TenantModel):
    """Background work visible to the customer: kind, status, timestamps, error, result summary."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    subject = models.ForeignKey(Subject, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error_code = models.CharField(max_length=64, blank=True, default="")
    error_message = models.CharField(max_length=500, blank=True, default="")
    result = models.JSONField(default=dict, blank=True)
    # What runs the job, so that the sweep can publish it again (apps.jobs.services).
    task_name = models.CharField(max_length=100, blank=True, default="")
    task_kwargs = models.JSONField(default=dict, blank=True)
    # The last sign of life of the worker running it (or the sweep's last publish of it).
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    resumes = models.PositiveIntegerField(default=0)  # times the sweep resumed it after its worker died

    class Meta:
        db_table = "jobs_job"
        indexes = [
            models.Index(fields=["organization", "status", "created_at"], name="job_org_status"),
            models.Index(fields=["status", "heartbeat_at"], name="job_status_heartbeat"),
        ]
