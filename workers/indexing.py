from __future__ import annotations

import uuid
from collections.abc import Generator
from typing import Any

from apps.jobs.models import Job
from apps.memory.services import memory_batch_step, memory_mark_chunk_not_indexed
from workers.base import job_task, stepwise_job_task


@job_task(name="indexing.memory.index", time_limit=600)
def index_chunk(job: Job, *, chunk_id: str) -> dict[str, Any]:
    return memory_mark_chunk_not_indexed(chunk_id=uuid.UUID(chunk_id))


@stepwise_job_task(name="indexing.memory.batch_ingest", time_limit=6 * 3600)
def ingest_batch(job: Job, *, batch_id: str) -> Generator[dict[str, Any], None, dict[str, Any]]:
    while True:
        progress = memory_batch_step(batch_id=uuid.UUID(batch_id))
        if progress.finished:
            return progress.as_dict()
        yield progress.as_dict()
