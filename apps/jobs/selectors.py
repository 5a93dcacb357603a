from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q, QuerySet

from apps.jobs.models import Job
from apps.platform.errors import NotFound


def job_get(*, job_id: uuid.UUID) -> Job:
    job = Job.objects.filter(id=job_id).first()
    if job is None:
        raise NotFound("Job not found.")
    return job


@dataclass(frozen=True)
class JobFilter:
    status: str | None = None
    kind: str | None = None
    subject_id: uuid.UUID | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None


def job_list(*, filters: JobFilter, before: tuple[datetime, uuid.UUID] | None = None) -> QuerySet[Job]:
    """The organization's jobs, newest first, before ``before`` (created_at, id)."""
    jobs = Job.objects.all()
    if filters.status:
        jobs = jobs.filter(status=filters.status)
    if filters.kind:
        jobs = jobs.filter(kind=filters.kind)
    if filters.subject_id is not None:
        jobs = jobs.filter(subject_id=filters.subject_id)
    if filters.created_after:
        jobs = jobs.filter(created_at__gte=filters.created_after)
    if filters.created_before:
        jobs = jobs.filter(created_at__lt=filters.created_before)
    if before is not None:
        created_at, job_id = before
        jobs = jobs.filter(Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=job_id))
    return jobs.order_by("-created_at", "-id")
