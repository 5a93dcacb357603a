"""What a job's end tells others: an audit entry for every finished job, and a ``job.failed``
webhook event for a failed one. One copy, for the task runner (``workers.base``) and for the
indexing step that settles a write's job (``apps.graph.services.write_jobs_settle``); both
call it in the transaction that finished the job."""

from __future__ import annotations

import uuid

from apps.audit.services import AuditDraft, audit_record, audit_record_many
from apps.jobs.models import Job
from apps.jobs.selectors import job_get
from apps.platform.errors import NotFound
from apps.webhooks.events import JOB_FAILED
from apps.webhooks.services import webhook_event_emit


def job_announce_succeeded(*, organization_id: uuid.UUID, job: Job) -> None:
    jobs_announce_succeeded(organization_id=organization_id, jobs=[job])


def jobs_announce_succeeded(*, organization_id: uuid.UUID, jobs: list[Job]) -> None:
    """One ``job.succeeded`` audit entry per job, appended together."""
    audit_record_many(
        organization_id=organization_id,
        entries=[
            AuditDraft(action="job.succeeded", subject_id=job.subject_id, target_ids=[str(job.id)]) for job in jobs
        ],
    )


def job_announce_failed(*, organization_id: uuid.UUID, job_id: uuid.UUID) -> None:
    try:
        job: Job | None = job_get(job_id=job_id)
    except NotFound:
        job = None  # erased meanwhile: there is nothing left to report
    if job is not None:
        webhook_event_emit(
            organization_id=organization_id,
            event_type=JOB_FAILED,
            subject_id=job.subject_id,
            payload={
                "job_id": str(job.id),
                "kind": job.kind,
                "subject_id": str(job.subject_id) if job.subject_id else None,
                "error_code": job.error_code,
            },
        )
    # Last: the audit chain's lock is the last lock of a transaction (apps.memory.locks).
    audit_record(organization_id=organization_id, action="job.failed", target_ids=[str(job_id)])
