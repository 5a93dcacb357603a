"""``?wait=true`` on a write: answer once the rows it wrote are searchable (ADR 0031).

The write commits first; then the request looks at its job with backoff (a short transaction
per look, nothing held between looks) until the job is finished or the wait runs out. A
finished job's answer carries the job (``succeeded``: every row is indexed; ``failed``: the
reason per row or chunk). When the wait runs out the answer is a 202 with the job's link in
``Location`` and in the body's ``job``: the rows are stored, their indexing goes on, and the
client follows the job. The wait is ``WAIT_DEFAULT_SECONDS`` unless ``wait_timeout`` says
otherwise (above 0, at most ``WAIT_MAX_SECONDS``), and never longer than what is left of the
request's budget (ADR 0026).
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import InterfaceError, OperationalError
from django.http import QueryDict
from django.urls import reverse
from rest_framework.response import Response

from apps.jobs.api.serializers import JobOutputSerializer
from apps.jobs.models import Job
from apps.jobs.services import job_wait
from apps.platform.errors import ValidationFailed
from apps.tenancy.scope import organization_scope

logger = logging.getLogger(__name__)

WAIT_DEFAULT_SECONDS = 10.0
WAIT_MAX_SECONDS = 50.0
_TRUE, _FALSE = ("true", "1"), ("false", "0")


@dataclass(frozen=True)
class WaitRequest:
    timeout: float


def wait_request(query: QueryDict) -> WaitRequest | None:
    """The write's ``wait`` and ``wait_timeout`` query parameters, checked before anything is
    written; None when the client does not wait."""
    raw_wait, raw_timeout = query.get("wait"), query.get("wait_timeout")
    if raw_wait is not None and raw_wait.lower() not in (*_TRUE, *_FALSE):
        raise ValidationFailed(f"wait is true or false; got {raw_wait!r}.", details={"wait": raw_wait})
    waiting = raw_wait is not None and raw_wait.lower() in _TRUE
    if raw_timeout is None:
        return WaitRequest(timeout=WAIT_DEFAULT_SECONDS) if waiting else None
    if not waiting:
        raise ValidationFailed(
            "wait_timeout applies only with wait=true: add wait=true, or drop wait_timeout.",
            details={"wait_timeout": raw_timeout},
        )
    try:
        timeout = float(raw_timeout)
    except ValueError:
        timeout = math.nan
    if not 0 < timeout <= WAIT_MAX_SECONDS:  # NaN and infinities fail too
        raise ValidationFailed(
            f"wait_timeout is a number of seconds above 0 and at most {WAIT_MAX_SECONDS:g}; got {raw_timeout!r}. "
            "To wait longer, follow the job from the 202 answer (GET /v1/jobs/{id}).",
            details={"wait_timeout": raw_timeout},
        )
    return WaitRequest(timeout=timeout)


def answer_when_finished(
    response: Response,
    *,
    organization_id: uuid.UUID,
    job_id: uuid.UUID,
    timeout: float,
    records: Callable[[], list[dict[str, Any]]] | None = None,
) -> None:
    """Wait for the committed write's job, then complete its answer: ``job`` always, and
    ``records`` (what is stored so far) when ``records`` is given; a 202 with ``Location``
    unless the job finished. A database error while waiting answers the 202 too: the write is
    committed, so the answer must not say it failed."""
    location = reverse("job-detail", kwargs={"job_id": job_id})
    data = dict(response.data)
    job: Job | None = None
    try:
        job = job_wait(organization_id=organization_id, job_id=job_id, timeout=timeout)
        if records is not None:
            with organization_scope(organization_id):
                data["records"] = records()
    except (OperationalError, InterfaceError):
        logger.warning("write wait interrupted", extra={"job_id": str(job_id)}, exc_info=True)
    data["job"] = JobOutputSerializer(job).data if job is not None else {"id": str(job_id), "status": None}
    if job is not None and "routed_types" in data and "routed_types" in job.result:
        data["routed_types"] = job.result["routed_types"]  # the router's choice, once it ran
    if job is not None and job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED):
        response.status_code = 201  # the rows are created, and the job says how their indexing ended
    else:
        response.status_code = 202
        response["Location"] = location
    response.data = data
