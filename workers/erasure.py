"""Erasure tasks: the stepwise erasure job, the beat drain of its outbox, and the job that
deletes the rows a filter matches beyond one call's 1,000."""

from __future__ import annotations

import uuid
from collections.abc import Generator
from datetime import datetime
from typing import Any

from apps.erasure.deletion import memory_filter_delete_run
from apps.erasure.services import erasure_outbox_drain, erasure_run
from apps.jobs import task_names
from apps.jobs.models import Job
from mirix_saas.celery import app
from workers.base import stepwise_job_task


@stepwise_job_task(name=task_names.ERASURE_RUN, time_limit=6 * 3600)
def run_erasure(job: Job, *, erasure_request_id: str) -> Generator[dict[str, Any], None, dict[str, Any]]:
    return (yield from erasure_run(erasure_request_id=uuid.UUID(erasure_request_id)))


@stepwise_job_task(name=task_names.MEMORY_DELETE, time_limit=6 * 3600)
def delete_filtered_memories(
    job: Job, *, subject_id: str, filters: Any, as_of: str
) -> Generator[dict[str, Any], None, dict[str, Any]]:
    return (
        yield from memory_filter_delete_run(
            job, subject_id=uuid.UUID(subject_id), filters=filters, as_of=datetime.fromisoformat(as_of)
        )
    )


@app.task(name=task_names.ERASURE_DRAIN, acks_late=True, soft_time_limit=100, time_limit=120)
def drain_erasure_outbox() -> int:
    """Beat: publish every erasure that is due and not done (a lost kick, a failed job)."""
    return erasure_outbox_drain()
