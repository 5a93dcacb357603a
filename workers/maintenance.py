from __future__ import annotations

import uuid
from collections.abc import Generator
from typing import Any

from apps.graph.services import (
    graph_check,
    graph_reembed_step,
    subject_graph_clear_step,
    subject_index_step,
    subject_rows_mark_pending,
)
from apps.jobs import task_names
from apps.jobs.models import Job
from apps.jobs.services import jobs_sweep
from apps.providers.registry import embedder
from apps.tenancy.models import Subject
from apps.tenancy.services import idempotency_purge
from workers.base import job_task, per_organization_task, stepwise_job_task


@job_task(name=task_names.GRAPH_CHECK, time_limit=120)
def graph_check_task(job: Job) -> dict[str, Any]:
    return graph_check(organization_id=job.organization_id)


@per_organization_task(name=task_names.JOBS_SWEEP)
def jobs_sweep_task(organization_id: uuid.UUID) -> int:
    """Beat: jobs whose worker died are resumed (or failed), lost publishes published again."""
    return jobs_sweep().total


@per_organization_task(name=task_names.IDEMPOTENCY_PURGE)
def idempotency_purge_task(organization_id: uuid.UUID) -> int:
    """Beat: stored answers to idempotency keys go once their 24 hours have passed."""
    return idempotency_purge()


@stepwise_job_task(name=task_names.REEMBED, time_limit=6 * 3600)
def reembed_organization(job: Job) -> Generator[dict[str, Any], None, dict[str, Any]]:
    """After a change of embedding model: re-embed every row, a batch per transaction."""
    vectors = embedder()
    done = 0
    while batch := graph_reembed_step(embedder=vectors):
        done += batch
        yield {"reembedded": done, "model": vectors.model_name}
    return {"reembedded": done, "model": vectors.model_name}


@stepwise_job_task(name=task_names.GRAPH_REINDEX, time_limit=6 * 3600)
def graph_reindex_subject(job: Job, subject_id: str) -> Generator[dict[str, Any], None, dict[str, Any]]:
    """Index one subject's rows into the graph again from nothing (ADR 0096): its graph and
    adjacency index deleted a batch per step, every row marked to index, then a batch of
    chunks indexed per step. A resumed job that had reached indexing goes on indexing."""
    subject = Subject.objects.get(id=subject_id)
    progress: dict[str, Any] = dict(job.result or {})
    if progress.get("phase") != "index":
        cleared = int(progress.get("cleared", 0))
        while counts := subject_graph_clear_step(subject=subject):
            cleared += sum(counts.values())
            yield {"phase": "clear", "cleared": cleared}
        rows = subject_rows_mark_pending(subject=subject)
        progress = {"phase": "index", "cleared": cleared, "rows": rows, "indexed": 0}
        yield progress
    while True:
        chunks, settled = subject_index_step(subject=subject)
        if not chunks:
            break
        progress = {**progress, "indexed": int(progress["indexed"]) + settled}
        yield progress
    return {**progress, "phase": "done"}
