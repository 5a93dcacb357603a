"""The one decorator every tenant job task goes through.

It claims the job row (a redelivered message for a finished job does nothing), runs the
service inside the organization's scope and transaction, records success or failure on the
job, retries only recoverable errors with bounded exponential backoff, and never lets raw
error text reach the job record.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any

import sentry_sdk
from celery import Task
from django.db import InterfaceError, OperationalError

from apps.jobs.services import job_fail, job_start, job_succeed
from apps.tenancy.scope import organization_scope
from mirix_saas.celery import app

logger = logging.getLogger(__name__)

RECOVERABLE_ERRORS: tuple[type[Exception], ...] = (OperationalError, InterfaceError, ConnectionError, TimeoutError)

JobBody = Callable[..., dict[str, Any]]


def job_task(*, name: str, time_limit: int = 600, max_retries: int = 5) -> Callable[[JobBody], Task[Any, Any]]:
    def decorate(body: JobBody) -> Task[Any, Any]:
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
                with organization_scope(org_id):
                    job = job_start(job_id=job_uuid)
                    if job is None:
                        logger.info("job already finished", extra=log)
                        return
                    result = body(job, **kwargs)
                    job_succeed(job_id=job_uuid, result=result)
                logger.info("job succeeded", extra=log)
            except RECOVERABLE_ERRORS as exc:
                if self.request.retries < max_retries:
                    logger.warning("job retrying", extra={**log, "error_type": type(exc).__name__})
                    raise self.retry(exc=exc, countdown=min(300, 2 ** (self.request.retries + 1))) from None
                _record_failure(org_id, job_uuid, exc, log)
            except Exception as exc:  # terminal: record it, do not retry
                _record_failure(org_id, job_uuid, exc, log)

        return run

    return decorate


def _record_failure(organization_id: uuid.UUID, job_id: uuid.UUID, exc: Exception, log: dict[str, str]) -> None:
    logger.error("job failed", exc_info=exc, extra={**log, "error_type": type(exc).__name__})
    sentry_sdk.capture_exception(exc)
    with organization_scope(organization_id):
        job_fail(job_id=job_id, code=type(exc).__name__, message="The job failed; the error has been logged.")
