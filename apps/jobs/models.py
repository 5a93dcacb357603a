from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.db import models

from apps.tenancy.models import Subject, TenantModel


class Job(TenantModel):
    """Background work visible to the customer: kind, status, timestamps, error, result summary.

    A write's job covers the whole write: routing, writing, embedding and graph indexing. Its
    rows are found through ``chunk_ids`` (every row carries the chunk id of the write that
    made it); once they are all written the job is ``indexing`` until the last of them is
    indexed or failed, and only then ``succeeded`` or ``failed`` (ADR 0031)."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        INDEXING = "indexing"  # written; waiting for graph indexing of the rows it wrote
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
    # The chunks (write units) whose rows this job wrote and waits on being indexed.
    chunk_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    # The API key whose request submitted the job (None: the service's own work): a batch's
    # rows and model tokens are credited to it (ADR 0042). Not a foreign key, like
    # ``usage_counter.api_key_id``: revoking a key leaves its jobs' history as it was.
    api_key_id = models.UUIDField(null=True, blank=True)

    class Meta:
        db_table = "jobs_job"
        indexes = [
            models.Index(fields=["organization", "status", "created_at"], name="job_org_status"),
            models.Index(fields=["status", "heartbeat_at"], name="job_status_heartbeat"),
        ]
