"""Job lifecycle, and the one way a task is published.

A job row commits with the work that asked for it; its task is published after commit
(:func:`publish_on_commit`), never from inside the transaction. A lost publish (the process
died between commit and publish) is found again: events that must happen (webhooks,
erasure) through their outbox tables and drains, jobs through :func:`jobs_sweep`, which
also resumes a stepwise job whose worker died (its heartbeat stopped) from its last
committed step.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.jobs.models import Job
from apps.tenancy.scope import organization_scope

logger = logging.getLogger(__name__)


def publish_on_commit(
    task_name: str,
    *,
    kwargs: Mapping[str, Any],
    queue: str | None = None,
    expires: float | None = None,
    coalesce_key: str | None = None,
    coalesce_seconds: int = 0,
) -> None:
    """Publish ``task_name`` once the current transaction commits (at once outside one); the
    name routes it to its queue unless ``queue`` is given. With ``coalesce_key``, nothing is
    published while a message published under that key in the last ``coalesce_seconds`` is
    still marked queued (its consumer clears the mark when it starts). A failed publish is
    logged, never raised into a request that already committed: the outbox drains and
    :func:`jobs_sweep` publish again what was lost."""
    from mirix_saas.celery import app

    task_kwargs = dict(kwargs)
    options: dict[str, Any] = {}
    if queue is not None:
        options["queue"] = queue
    if expires is not None:
        options["expires"] = expires

    def publish() -> None:
        if coalesce_key is not None and not cache.add(coalesce_key, 1, timeout=coalesce_seconds):
            return
        app.send_task(task_name, kwargs=task_kwargs, **options)

    transaction.on_commit(publish, robust=True)


def job_create(*, organization_id: uuid.UUID, kind: str, subject_id: uuid.UUID | None = None) -> Job:
    return Job.objects.create(organization_id=organization_id, kind=kind, subject_id=subject_id)


def job_enqueue_on_commit(*, job: Job, task_name: str, kwargs: dict[str, Any] | None = None) -> None:
    """Record on the job what runs it (the sweep publishes it again from that) and publish
    it after commit."""
    job.task_name = task_name
    job.task_kwargs = {"organization_id": str(job.organization_id), "job_id": str(job.id), **(kwargs or {})}
    Job.objects.filter(id=job.id).update(task_name=job.task_name, task_kwargs=job.task_kwargs)
    publish_on_commit(task_name, kwargs=job.task_kwargs)


def job_start(*, job_id: uuid.UUID) -> Job | None:
    """Claim a job for running. Returns None when it already finished (a redelivered message)."""
    job = Job.objects.select_for_update().filter(id=job_id).first()
    if job is None or job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED):
        return None
    now = timezone.now()
    job.status = Job.Status.RUNNING
    job.attempts += 1
    job.started_at = job.started_at or now
    job.heartbeat_at = now
    job.save(update_fields=["status", "attempts", "started_at", "heartbeat_at"])
    return job


def job_progress(*, job_id: uuid.UUID, result: dict[str, Any]) -> None:
    Job.objects.filter(id=job_id).update(result=result, heartbeat_at=timezone.now())


def job_release(*, job_id: uuid.UUID) -> None:
    """A running job whose task will be retried goes back to ``queued`` until the retry claims it."""
    Job.objects.filter(id=job_id, status=Job.Status.RUNNING).update(
        status=Job.Status.QUEUED, heartbeat_at=timezone.now()
    )


def job_succeed(*, job_id: uuid.UUID, result: dict[str, Any]) -> None:
    Job.objects.filter(id=job_id).update(status=Job.Status.SUCCEEDED, finished_at=timezone.now(), result=result)


def job_fail(*, job_id: uuid.UUID, code: str, message: str) -> None:
    Job.objects.filter(id=job_id).update(
        status=Job.Status.FAILED, finished_at=timezone.now(), error_code=code[:64], error_message=message[:500]
    )


@contextmanager
def job_heartbeat(*, organization_id: uuid.UUID, job_id: uuid.UUID) -> Iterator[None]:
    """While the block runs, a thread of the worker stamps the job's heartbeat every
    ``JOBS_HEARTBEAT_SECONDS`` (in a connection and transaction of its own), so that a long
    step of a healthy job never looks like a dead worker; a killed worker's heartbeat stops."""
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(settings.JOBS_HEARTBEAT_SECONDS):
                with organization_scope(organization_id):
                    Job.objects.filter(id=job_id, status=Job.Status.RUNNING).update(heartbeat_at=timezone.now())
        except Exception:
            logger.exception("job heartbeat stopped", extra={"job_id": str(job_id)})
        finally:
            connection.close()

    thread = threading.Thread(target=beat, name=f"heartbeat-{job_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@dataclass(frozen=True)
class SweepResult:
    resumed: int  # running jobs whose worker died, published again
    republished: int  # queued jobs whose publish was lost, published again
    failed: int  # running jobs whose worker died and that cannot be resumed

    @property
    def total(self) -> int:
        return self.resumed + self.republished + self.failed


def jobs_sweep(*, now: datetime | None = None) -> SweepResult:
    """In the organization in scope: a running job whose heartbeat is older than
    ``JOBS_STALE_SECONDS`` lost its worker; it goes back to ``queued`` and is published again
    (its steps are idempotent and resume after the last committed one), or is failed when it
    records no task or was resumed ``JOBS_MAX_RESUMES`` times already (a job that kills its
    worker). A queued job not picked up within ``JOBS_QUEUED_REPUBLISH_SECONDS`` is published
    again. A job whose heartbeat is fresh is never touched, however long it has run."""
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.JOBS_STALE_SECONDS)
    resumed = failed = republished = 0
    for job in (
        Job.objects.select_for_update(skip_locked=True)
        .filter(status=Job.Status.RUNNING)
        .filter(Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True, started_at__lt=stale))
    ):
        if job.task_name and job.resumes < settings.JOBS_MAX_RESUMES:
            job.status, job.heartbeat_at, job.resumes = Job.Status.QUEUED, now, job.resumes + 1
            job.save(update_fields=["status", "heartbeat_at", "resumes"])
            publish_on_commit(job.task_name, kwargs=job.task_kwargs)
            resumed += 1
        else:
            job_fail(job_id=job.id, code="worker_lost", message="The job's worker stopped and it could not be resumed.")
            failed += 1
    lost = now - timedelta(seconds=settings.JOBS_QUEUED_REPUBLISH_SECONDS)
    for job in (
        Job.objects.select_for_update(skip_locked=True)
        .alias(last_seen=Coalesce("heartbeat_at", "created_at"))
        .filter(status=Job.Status.QUEUED, last_seen__lt=lost)
        .exclude(task_name="")
    ):
        job.heartbeat_at = now
        job.save(update_fields=["heartbeat_at"])
        publish_on_commit(job.task_name, kwargs=job.task_kwargs)
        republished += 1
    if resumed or failed or republished:
        logger.warning("jobs swept", extra={"resumed": resumed, "failed": failed, "republished": republished})
    return SweepResult(resumed=resumed, republished=republished, failed=failed)
