"""Job lifecycle. A job row commits with the work that asked for it; its task is published
after commit, never from inside the transaction."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.jobs.models import Job


def job_create(*, organization_id: uuid.UUID, kind: str, subject_id: uuid.UUID | None = None) -> Job:
    return Job.objects.create(organization_id=organization_id, kind=kind, subject_id=subject_id)


def job_enqueue_on_commit(*, job: Job, task_name: str, kwargs: dict[str, Any] | None = None) -> None:
    """Publish after commit; the task's name routes it to its queue."""
    from mirix_saas.celery import app

    task_kwargs = {"organization_id": str(job.organization_id), "job_id": str(job.id), **(kwargs or {})}
    transaction.on_commit(lambda: app.send_task(task_name, kwargs=task_kwargs))


def job_start(*, job_id: uuid.UUID) -> Job | None:
    """Claim a job for running. Returns None when it already finished (a redelivered message)."""
    job = Job.objects.select_for_update().filter(id=job_id).first()
    if job is None or job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED):
        return None
    job.status = Job.Status.RUNNING
    job.attempts += 1
    job.started_at = job.started_at or timezone.now()
    job.save(update_fields=["status", "attempts", "started_at"])
    return job


def job_progress(*, job_id: uuid.UUID, result: dict[str, Any]) -> None:
    Job.objects.filter(id=job_id).update(result=result)


def job_succeed(*, job_id: uuid.UUID, result: dict[str, Any]) -> None:
    Job.objects.filter(id=job_id).update(status=Job.Status.SUCCEEDED, finished_at=timezone.now(), result=result)


def job_fail(*, job_id: uuid.UUID, code: str, message: str) -> None:
    Job.objects.filter(id=job_id).update(
        status=Job.Status.FAILED, finished_at=timezone.now(), error_code=code[:64], error_message=message[:500]
    )


def jobs_mark_stale(*, older_than_seconds: int) -> int:
    """Jobs stuck in ``running`` past their time limit failed without reporting it."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    return Job.objects.filter(status=Job.Status.RUNNING, started_at__lt=cutoff).update(
        status=Job.Status.FAILED,
        finished_at=timezone.now(),
        error_code="timed_out",
        error_message="The job exceeded its time limit.",
    )
