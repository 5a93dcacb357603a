from __future__ import annotations

import uuid
from collections.abc import Generator
from typing import Any

from django.conf import settings

from apps.dream.services import dream_after_chunk
from apps.graph.services import index_chunk, index_chunks, index_sweep, job_chunks_needing_index, write_jobs_settle
from apps.jobs import task_names
from apps.jobs.models import Job
from apps.jobs.services import writes_completion_continue, writes_completion_started
from apps.memory.services import COMPLETE_BATCH, memory_batch_step, memory_complete_writes
from apps.platform.cpu import yield_to_contention
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from workers.base import JobIncomplete, job_part_task, per_organization_task, stepwise_job_task


@job_part_task(name=task_names.INDEX_CHUNK, time_limit=600)
def index_job_chunks(organization_id: uuid.UUID, job_id: uuid.UUID, *, chunk_id: str | None = None) -> None:
    """Index one chunk of a write's job, or (without ``chunk_id``: the job's last step, or the
    sweep publishing it again) every chunk of it still pending, each in a transaction of its
    own; then settle the job (``index_chunk`` settles the jobs waiting on each chunk it
    commits; the last call covers a job none of whose chunks needed anything)."""
    if chunk_id is not None:
        chunks = [uuid.UUID(chunk_id)]
    else:
        with organization_scope(organization_id):
            chunks = job_chunks_needing_index(job_id=job_id)
    for chunk in chunks:
        with organization_scope(organization_id):
            index_chunk(chunk_id=chunk)
    with organization_scope(organization_id):
        write_jobs_settle(job_id=job_id)


COMPLETE_ROUNDS = 4  # batches of accepted writes one task completes at most; the rest is for the next task


@job_part_task(name=task_names.WRITE_COMPLETE, time_limit=600)
def complete_writes(organization_id: uuid.UUID, job_id: uuid.UUID) -> None:
    """Complete the organization's accepted writes (ADR 0054), not only this job's: all that
    are waiting, oldest first, a batch per transaction (one embedding call each), then index
    each batch's rows together; their jobs settle as their rows are indexed. One task is
    queued per organization at a time (ADR 0084): it clears the mark first, so a write
    committed before that is read here, and a write committed later publishes the next task,
    whose batch takes every write that arrived meanwhile; a full batch publishes the next
    itself (more may wait, and another worker process may take them)."""
    writes_completion_started(organization_id=organization_id)
    for _ in range(COMPLETE_ROUNDS):
        # Each batch first waits out a saturated machine, for a bounded time (ADR 0106).
        yield_to_contention(longest=settings.WORKER_YIELD_MS / 1000)
        with organization_scope(organization_id):
            completed = memory_complete_writes(limit=COMPLETE_BATCH)
        if not completed:
            break
        if len(completed) == COMPLETE_BATCH:
            # More may be waiting: a task for them, which another worker process may take
            # while this one indexes (this one's next rounds take what is left meanwhile).
            writes_completion_continue(organization_id=organization_id, job_id=job_id)
        with organization_scope(organization_id):
            index_chunks(chunk_ids=[write.chunk_id for write in completed])
    # A redelivered message (its worker died mid-indexing) finds its write completed: what of
    # it is still to index is indexed here, then the job settles.
    with organization_scope(organization_id):
        left = job_chunks_needing_index(job_id=job_id)
    if left:
        with organization_scope(organization_id):
            index_chunks(chunk_ids=left)
    with organization_scope(organization_id):
        write_jobs_settle(job_id=job_id)


@stepwise_job_task(name=task_names.BATCH_INGEST, time_limit=6 * 3600)
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


@per_organization_task(name=task_names.INDEX_SWEEP)
def index_sweep_task(organization_id: uuid.UUID) -> int:
    """Beat: re-index rows left pending or failed (e.g. while the graph was unavailable), and
    rebuild missing adjacency indexes."""
    return index_sweep(organization_id=organization_id)
