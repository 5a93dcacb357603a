from __future__ import annotations

from collections.abc import Generator
from typing import Any

from apps.graph.services import graph_check, graph_reembed_step
from apps.jobs.models import Job
from apps.jobs.services import jobs_mark_stale
from apps.providers.registry import embedder
from apps.tenancy.models import Organization
from apps.tenancy.scope import organization_scope
from mirix_saas.celery import app
from workers.base import job_task, stepwise_job_task


@job_task(name="maintenance.graph.check", time_limit=120)
def graph_check_task(job: Job) -> dict[str, Any]:
    return graph_check(organization_id=job.organization_id)


@app.task(name="maintenance.jobs.mark_stale", acks_late=True, time_limit=300)
def mark_stale_jobs() -> int:
    """Beat sweep: jobs whose worker died past every retry are marked failed, per organization."""
    marked = 0
    organization_ids = list(Organization.objects.dangerously_across_organizations().values_list("id", flat=True))
    for organization_id in organization_ids:
        with organization_scope(organization_id):
            marked += jobs_mark_stale(older_than_seconds=3600)
    return marked


@stepwise_job_task(name="maintenance.embeddings.reembed", time_limit=6 * 3600)
def reembed_organization(job: Job) -> Generator[dict[str, Any], None, dict[str, Any]]:
    """After a change of embedding model: re-embed every row, a batch per transaction."""
    vectors = embedder()
    done = 0
    while batch := graph_reembed_step(embedder=vectors):
        done += batch
        yield {"reembedded": done, "model": vectors.model_name}
    return {"reembedded": done, "model": vectors.model_name}
