from __future__ import annotations

import uuid
from collections.abc import Generator
from typing import Any

from apps.dream.services import dream_after_chunk
from apps.graph.services import adjacency_rebuild_missing, index_chunk, index_sweep_chunks
from apps.jobs.models import Job
from apps.jobs.services import job_create, job_enqueue_on_commit
from apps.memory.services import INDEX_TASK, memory_batch_step
from apps.tenancy.models import Organization, Subject
from apps.tenancy.scope import organization_scope
from mirix_saas.celery import app
from workers.base import JobIncomplete, job_task, stepwise_job_task


@job_task(name=INDEX_TASK, time_limit=600)
def index_chunk_task(job: Job, *, chunk_id: str) -> dict[str, Any]:
    return index_chunk(chunk_id=uuid.UUID(chunk_id))


@stepwise_job_task(name="indexing.memory.batch_ingest", time_limit=6 * 3600)
def ingest_batch(job: Job, *, batch_id: str) -> Generator[dict[str, Any], None, dict[str, Any]]:
    # Semantic AutoDream after every 5 chunks and after the last, as jobs of its own; the
    # chunks waiting for a round are kept in the job's progress, so a resumed job keeps them.
    # A chunk that stores nothing is listed in the progress with its reason; the other chunks
    # are still written, and the job then fails instead of succeeding with a chunk missing.
    frontier: list[str] = list(job.result.get("dream_frontier", []))
    rejected: list[dict[str, Any]] = list(job.result.get("chunks_rejected", []))
    assert job.subject_id is not None  # a batch job belongs to its subject
    while True:
        progress = memory_batch_step(batch_id=uuid.UUID(batch_id))
        if progress.rejected is not None:
            rejected.append({"chunk": progress.chunks_done - 1, "message": progress.rejected})
        frontier = dream_after_chunk(
            subject=Subject.objects.get(id=job.subject_id),
            frontier=frontier,
            chunk_id=progress.chunk_id,
            finished=progress.finished,
        )
        summary = {**progress.as_dict(), "chunks_rejected": rejected}
        if progress.finished and not rejected:
            return summary
        yield {**summary, "dream_frontier": frontier}
        if progress.finished:  # the last chunk is committed with the step above
            chunks = ", ".join(str(item["chunk"]) for item in rejected)
            raise JobIncomplete(
                code="chunks_rejected",
                message=f"{len(rejected)} of {progress.chunks_total} chunks stored nothing (chunks {chunks}); "
                "the others were written. See result.chunks_rejected for each reason.",
            )


@app.task(name="indexing.sweep", acks_late=True, time_limit=300)
def index_sweep() -> int:
    """Beat: re-index rows left pending or failed (e.g. while the graph was unavailable),
    one job per chunk, with bounded attempts per row; and rebuild the adjacency index of
    subjects whose graph has none (apps.graph.adjacency.rebuild)."""
    queued = 0
    organization_ids = list(Organization.objects.dangerously_across_organizations().values_list("id", flat=True))
    for organization_id in organization_ids:
        with organization_scope(organization_id):
            adjacency_rebuild_missing()
            for chunk_id in index_sweep_chunks():
                job = job_create(organization_id=organization_id, kind="memory.index")
                job_enqueue_on_commit(job=job, task_name=INDEX_TASK, kwargs={"chunk_id": str(chunk_id)})
                queued += 1
    return queued
