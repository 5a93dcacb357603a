"""The jobs sweep: a running job whose heartbeat stopped is published again (or failed when it
cannot be resumed), a queued job whose publish was lost is published again, and a healthy
job whose heartbeat is fresh is never touched, however long it runs."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from apps.jobs import task_names
from apps.jobs.models import Job
from apps.jobs.services import job_create, job_enqueue_on_commit, jobs_sweep
from apps.memory.models import IngestionBatchChunk
from apps.tenancy.scope import organization_scope
from mirix_saas.celery import app
from tests.factories import Tenant, make_tenant
from tests.processes import wait_for
from tests.reliability.support import message
from workers.indexing import index_job_chunks, ingest_batch


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    sent: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(app, "send_task", lambda name, kwargs, **options: sent.append((name, kwargs)))
    return sent


def _running_job(tenant: Tenant, *, heartbeat_age: float, resumes: int = 0) -> Job:
    with organization_scope(tenant.id):
        job = job_create(organization_id=tenant.id, kind="graph.check")
        job_enqueue_on_commit(job=job, task_name=task_names.GRAPH_CHECK)
    now = timezone.now()
    with organization_scope(tenant.id):
        Job.objects.filter(id=job.id).update(
            status=Job.Status.RUNNING,
            started_at=now - timedelta(hours=3),
            heartbeat_at=now - timedelta(seconds=heartbeat_age),
            resumes=resumes,
        )
    return job


def _sweep(tenant: Tenant, **kwargs: Any) -> Any:
    with organization_scope(tenant.id):
        return jobs_sweep(**kwargs)


def _job(tenant: Tenant, job: Job) -> Job:
    with organization_scope(tenant.id):
        return Job.objects.get(id=job.id)


def test_a_running_job_whose_heartbeat_stopped_is_published_again(published: list[Any]) -> None:
    tenant = make_tenant()
    job = _running_job(tenant, heartbeat_age=settings.JOBS_STALE_SECONDS + 1)
    published.clear()
    assert _sweep(tenant).resumed == 1
    resumed = _job(tenant, job)
    assert resumed.status == Job.Status.QUEUED and resumed.resumes == 1
    assert published == [
        (task_names.GRAPH_CHECK, {"organization_id": str(tenant.id), "job_id": str(job.id)}),
    ]
    assert _sweep(tenant).total == 0  # queued now: the next sweep leaves it to its message


def test_a_job_with_a_fresh_heartbeat_is_never_touched_however_long_it_ran(published: list[Any]) -> None:
    tenant = make_tenant()
    job = _running_job(tenant, heartbeat_age=0)  # started three hours ago
    published.clear()
    assert _sweep(tenant).total == 0
    assert _job(tenant, job).status == Job.Status.RUNNING and published == []


def test_a_job_resumed_too_often_is_failed_not_published(published: list[Any]) -> None:
    tenant = make_tenant()
    job = _running_job(tenant, heartbeat_age=settings.JOBS_STALE_SECONDS + 1, resumes=settings.JOBS_MAX_RESUMES)
    published.clear()
    assert _sweep(tenant).failed == 1
    failed = _job(tenant, job)
    assert failed.status == Job.Status.FAILED and failed.error_code == "worker_lost" and published == []


def test_a_queued_job_whose_publish_was_lost_is_published_again(published: list[Any]) -> None:
    tenant = make_tenant()
    with organization_scope(tenant.id):
        job = job_create(organization_id=tenant.id, kind="graph.check")
        job_enqueue_on_commit(job=job, task_name=task_names.GRAPH_CHECK)
    published.clear()  # as if the broker had lost it
    assert _sweep(tenant).total == 0  # not yet
    later = timezone.now() + timedelta(seconds=settings.JOBS_QUEUED_REPUBLISH_SECONDS + 1)
    assert _sweep(tenant, now=later).republished == 1
    assert [name for name, _ in published] == [task_names.GRAPH_CHECK]
    assert _sweep(tenant, now=later).total == 0  # once per period


def test_a_long_step_keeps_the_heartbeat_fresh_and_the_sweep_leaves_the_job_alone(settings: Any) -> None:
    """A real stepwise job held inside one chunk for longer than the stale threshold: its
    heartbeat thread keeps the job alive, the sweep does nothing, and the job finishes."""
    settings.FAULT_PAUSES = {"memory.batch.chunk.1": settings.JOBS_STALE_SECONDS + 2}
    tenant = make_tenant()
    tenant.subject("maya")
    chunks = [{"messages": [message(f"Day {n}: I baked bread.", n=n)]} for n in range(3)]
    accepted = tenant.client().post("/v1/subjects/maya/memories/batch", {"chunks": chunks}, format="json")
    assert accepted.status_code == 202
    job_id, batch_id = accepted.json()["job_id"], accepted.json()["batch_id"]

    def run() -> None:
        try:
            ingest_batch.apply(kwargs={"organization_id": str(tenant.id), "job_id": job_id, "batch_id": batch_id})
        finally:
            connection.close()

    worker = threading.Thread(target=run)
    worker.start()
    try:
        wait_for(lambda: _job(tenant, Job(id=job_id)).result.get("chunks_done") == 1, timeout=120)
        time.sleep(settings.JOBS_STALE_SECONDS + 1)  # inside chunk 1, past the threshold
        assert _sweep(tenant).total == 0
        alive = _job(tenant, Job(id=job_id))
        assert alive.status == Job.Status.RUNNING and alive.heartbeat_at is not None
        assert (timezone.now() - alive.heartbeat_at).total_seconds() < settings.JOBS_STALE_SECONDS
    finally:
        worker.join(timeout=120)
    written = _job(tenant, Job(id=job_id))
    # Written, not yet indexed (no indexing worker here): the job waits on its rows.
    assert written.status == Job.Status.INDEXING and written.resumes == 0 and written.attempts == 1
    with organization_scope(tenant.id):
        assert list(IngestionBatchChunk.objects.order_by("index").values_list("index", flat=True)) == [0, 1, 2]
    index_job_chunks.apply(kwargs={"organization_id": str(tenant.id), "job_id": job_id})
    done = _job(tenant, Job(id=job_id))
    assert done.status == Job.Status.SUCCEEDED and done.result["rows_indexed"] == 3
