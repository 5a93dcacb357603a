from __future__ import annotations

import uuid

from apps.jobs.models import Job
from apps.platform.errors import NotFound


def job_get(*, job_id: uuid.UUID) -> Job:
    job = Job.objects.filter(id=job_id).first()
    if job is None:
        raise NotFound("Job not found.")
    return job
