"""The decorators every task goes through.

``job_task`` and ``stepwise_job_task``: a tenant job. They claim the job row (a redelivered
message for a finished job does nothing), run the service inside the organization's scope
and transaction, record success or failure on the job, retry only recoverable errors with
bounded exponential backoff, and never let raw error text reach the job record.
``job_part_task``: one part of a job that another task claimed (a chunk's indexing for a
write's job); it leaves the job's state to the body, and fails the job only on a terminal error.
``per_organization_task``: a beat sweep that runs its body once per organization.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Generator
from typing import Any

import sentry_sdk
from celery import Task
from celery.exceptions import SoftTimeLimitExceeded
from django.db import InterfaceError, OperationalError

from apps.audit.services import acting_as
from apps.jobs.models import Job
from apps.jobs.outcomes import job_announce_failed, job_announce_succeeded
from apps.jobs.services import (
    job_fail,
    job_finish_writing,
    job_heartbeat,
    job_progress,
    job_release,
    job_start,
    job_succeed,
)
from apps.tenancy.models import Organization
from apps.tenancy.scope import organization_scope
from mirix_saas.celery import app

logger = logging.getLogger(__name__)

RECOVERABLE_ERRORS: tuple[type[Exception], ...] = (OperationalError, InterfaceError, ConnectionError, TimeoutError)

JobBody = Callable[..., dict[str, Any]]
StepwiseBody = Callable[..., Generator[dict[str, Any], None, dict[str, Any]]]
PartBody = Callable[..., None]


Execute = Callable[[uuid.UUID, uuid.UUID, dict[str, str], dict[str, Any]], None]


class JobIncomplete(Exception):
    """A job that ran to its end but did not do all it was asked: it fails with this code and
    message, written for the client (not an error to log as a bug)."""

    def __init__(self, *, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _tenant_job_task(*, name: str, time_limit: int, max_retries: int, execute: Execute) -> Task[Any, Any]:
    """A Celery task over one job of one organization: late acks, time limits, bounded retries
    of recoverable errors, and every other error recorded on the job as terminal."""

    @app.task(
        name=name,
        bind=True,
        acks_late=True,
        reject_on_worker_lost=True,
        soft_time_limit=time_limit,
        time_limit=time_limit + 30,
        max_retries=max_retries,
    )
    def run(self: Task[Any, Any], /, *, organization_id: str, job_id: str, **kwargs: Any) -> None:
        org_id, job_uuid = uuid.UUID(organization_id), uuid.UUID(job_id)
        log = {"task": name, "organization_id": organization_id, "job_id": job_id}
        try:
            execute(org_id, job_uuid, log, kwargs)
        except RECOVERABLE_ERRORS as exc:
            if self.request.retries < max_retries:
                logger.warning("job retrying", extra={**log, "error_type": type(exc).__name__})
                _release(org_id, job_uuid, log)
                raise self.retry(exc=exc, countdown=min(300, 2 ** (self.request.retries + 1))) from None
            _record_failure(org_id, job_uuid, exc, log)
        except Exception as exc:  # terminal: record it, do not retry
            _record_failure(org_id, job_uuid, exc, log)

    return run


def _release(org_id: uuid.UUID, job_uuid: uuid.UUID, log: dict[str, str]) -> None:
    """Queued again until the retry claims it: a retry is not a dead worker for the sweep."""
    try:
        with organization_scope(org_id):
            job_release(job_id=job_uuid)
    except RECOVERABLE_ERRORS:
        logger.warning("job release failed", extra=log)  # the sweep resumes it once it looks stale


def _claim(job_uuid: uuid.UUID, log: dict[str, str]) -> Job | None:
    """The job, marked running; None when a redelivered message finds it already finished."""
    job = job_start(job_id=job_uuid)
    if job is None:
        logger.info("job already finished", extra=log)
    return job


def _succeed(org_id: uuid.UUID, job: Job, result: dict[str, Any]) -> None:
    job_succeed(job_id=job.id, result=result)
    job_announce_succeeded(organization_id=org_id, job=job)


def job_task(*, name: str, time_limit: int = 600, max_retries: int = 5) -> Callable[[JobBody], Task[Any, Any]]:
    """The whole job in one transaction of the organization's scope."""

    def decorate(body: JobBody) -> Task[Any, Any]:
        def execute(org_id: uuid.UUID, job_uuid: uuid.UUID, log: dict[str, str], kwargs: dict[str, Any]) -> None:
            with organization_scope(org_id), acting_as(f"task:{name}"):
                job = _claim(job_uuid, log)
                if job is None:
                    return
                _succeed(org_id, job, body(job, **kwargs))
            logger.info("job succeeded", extra=log)

        return _tenant_job_task(name=name, time_limit=time_limit, max_retries=max_retries, execute=execute)

    return decorate


def stepwise_job_task(
    *, name: str, time_limit: int = 3600, max_retries: int = 5
) -> Callable[[StepwiseBody], Task[Any, Any]]:
    """For long jobs that commit as they go: the body is a generator; each step (each
    ``next``) runs in a transaction of its own and yields a progress summary that is saved
    on the job; its return value is the result. While it runs, the job's heartbeat is kept
    fresh; a worker that dies leaves it to go stale, and the jobs sweep publishes the job
    again, to resume after the last committed step: every step must be idempotent with
    respect to its own commit. A job that wrote rows to index is ``indexing`` at the end, not
    ``succeeded``: its indexing settles it (ADR 0031)."""

    def decorate(body: StepwiseBody) -> Task[Any, Any]:
        def execute(org_id: uuid.UUID, job_uuid: uuid.UUID, log: dict[str, str], kwargs: dict[str, Any]) -> None:
            with organization_scope(org_id), acting_as(f"task:{name}"):
                job = _claim(job_uuid, log)
            if job is None:
                return
            with job_heartbeat(organization_id=org_id, job_id=job_uuid):
                steps = body(job, **kwargs)
                while True:
                    with organization_scope(org_id), acting_as(f"task:{name}"):
                        try:
                            job_progress(job_id=job_uuid, result=next(steps))
                        except StopIteration as finished:
                            status = job_finish_writing(job_id=job_uuid, result=finished.value)
                            if status == Job.Status.SUCCEEDED:
                                job_announce_succeeded(organization_id=org_id, job=job)
                            break
            logger.info("job finished writing", extra={**log, "status": status})

        return _tenant_job_task(name=name, time_limit=time_limit, max_retries=max_retries, execute=execute)

    return decorate


def job_part_task(*, name: str, time_limit: int = 600, max_retries: int = 5) -> Callable[[PartBody], Task[Any, Any]]:
    """One part of a job, run without claiming it: the body gets the organization and job ids
    and its own keyword arguments, opens its own scopes (a transaction per piece of work), and
    settles the job itself. Errors as for every job task: recoverable ones retried, any other
    recorded on the job as terminal."""

    def decorate(body: PartBody) -> Task[Any, Any]:
        def execute(org_id: uuid.UUID, job_uuid: uuid.UUID, log: dict[str, str], kwargs: dict[str, Any]) -> None:
            with acting_as(f"task:{name}"):
                body(org_id, job_uuid, **kwargs)

        return _tenant_job_task(name=name, time_limit=time_limit, max_retries=max_retries, execute=execute)

    return decorate


def per_organization_task(
    *, name: str, time_limit: int = 300
) -> Callable[[Callable[[uuid.UUID], int]], Task[Any, Any]]:
    """A beat sweep: the body runs once per organization, in that organization's scope (a
    transaction each), and the task returns the sum of what the bodies return. A failing
    organization is logged and skipped; the others are still swept."""

    def decorate(body: Callable[[uuid.UUID], int]) -> Task[Any, Any]:
        @app.task(name=name, acks_late=True, soft_time_limit=time_limit - 10, time_limit=time_limit)
        def sweep() -> int:
            total = 0
            organization_ids = list(
                Organization.objects.dangerously_across_organizations().values_list("id", flat=True)
            )
            for organization_id in organization_ids:
                try:
                    with organization_scope(organization_id), acting_as(f"task:{name}"):
                        total += body(organization_id)
                except SoftTimeLimitExceeded:
                    raise
                except Exception:
                    logger.exception("sweep failed", extra={"task": name, "organization_id": str(organization_id)})
            return total

        return sweep

    return decorate


def _record_failure(organization_id: uuid.UUID, job_id: uuid.UUID, exc: Exception, log: dict[str, str]) -> None:
    if isinstance(exc, JobIncomplete):
        logger.warning("job incomplete", extra={**log, "error_code": exc.code})
        code, message = exc.code, exc.message
    else:
        logger.error("job failed", exc_info=exc, extra={**log, "error_type": type(exc).__name__})
        sentry_sdk.capture_exception(exc)
        code, message = type(exc).__name__, "The job failed; the error has been logged."
    with organization_scope(organization_id), acting_as(f"task:{log['task']}"):
        job_fail(job_id=job_id, code=code, message=message)
        job_announce_failed(organization_id=organization_id, job_id=job_id)
