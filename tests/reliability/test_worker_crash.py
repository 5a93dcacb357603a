"""Two real workers on the real broker; one is SIGKILLed in the middle of a job (held at a
fault pause point with its transaction open). The message it never acknowledged comes back
after the broker's visibility timeout (shortened for these workers), or, for a stepwise job,
the jobs sweep finds its heartbeat stopped and publishes it again; the other worker runs the
job, and the effect is exactly once: no double counts, no duplicate graph identity, one
erasure receipt, every batch chunk written once, and no trace left."""

from __future__ import annotations

import os
import signal
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings

from apps.audit.models import AuditEntry
from apps.erasure.models import ErasureRequest
from apps.erasure.registry import erasers_for
from apps.erasure.services import SUBJECT_ROW_STEP
from apps.jobs.models import Job
from apps.memory.models import STORES, EpisodicEvent, IngestionBatchChunk, SemanticItem
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from apps.webhooks.events import SUBJECT_ERASED
from apps.webhooks.models import WebhookEvent
from apps.webhooks.services import webhook_endpoint_create
from tests.erasure.planting import graph_counts, plant, subject_counts
from tests.erasure.support import database_text, storage_text
from tests.factories import make_tenant
from tests.processes import celery_worker, purge_queues, wait_for, worker_log
from tests.reliability.support import graph_snapshot, message

VISIBILITY = {"MIRIX_BROKER_VISIBILITY_TIMEOUT": "3"}


def _open_transactions() -> int:
    """Sessions of the application role in this database that sit idle inside a transaction
    (as the superuser: other roles' session states are hidden from the owner)."""
    with psycopg.connect(os.environ["DATABASE_ADMIN_URL"], autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND usename = %s AND state = 'idle in transaction'",
            [settings.DATABASES["default"]["USER"]],
        ).fetchone()
    return int(row[0]) if row else 0


def _kill(worker: subprocess.Popen[bytes]) -> None:
    """SIGKILL the worker and its pool: nothing is acknowledged, nothing cleaned up."""
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(timeout=10)


def _paused(name: str) -> bool:
    return "fault pause" in worker_log(name)


def _job_status(organization_id: Any, job_id: str) -> str:
    with organization_scope(organization_id):
        return str(Job.objects.get(id=job_id).status)


def _erasure_status(organization_id: Any, request_id: str) -> str:
    with organization_scope(organization_id):
        return str(ErasureRequest.objects.get(id=request_id).status)


@pytest.mark.slow
def test_a_worker_killed_mid_indexing_is_replaced_and_the_graph_is_written_once() -> None:
    purge_queues()
    tenant = make_tenant()
    tenant.subject("maya")
    text = "I climbed with Tom and Leo at the Oakland climbing gym and we met coach Priya."
    doomed = {**VISIBILITY, "MIRIX_TEST_FAULT_PAUSES": "indexing.before_commit=300"}
    with celery_worker(queues=["indexing"], name="crash-index-a", env=doomed) as a:
        response = tenant.client().post(
            "/v1/subjects/maya/memories", {"messages": [message(text, n=1), message(text, n=2)]}, format="json"
        )
        assert response.status_code == 202
        job_id = response.json()["job_id"]
        wait_for(lambda: _paused("crash-index-a"), timeout=90)
        # Mid-indexing: the graph is written and the rows are marked, all uncommitted.
        assert _open_transactions() >= 1
        with organization_scope(tenant.id):
            assert set(EpisodicEvent.objects.values_list("index_status", flat=True)) == {"pending"}
        assert graph_snapshot(tenant.id).anchors == []
        with celery_worker(queues=["indexing"], name="crash-index-b", env=VISIBILITY):
            _kill(a)
            wait_for(lambda: _job_status(tenant.id, job_id) == Job.Status.SUCCEEDED, timeout=90)
    task_id = next(line for line in worker_log("crash-index-a").splitlines() if "received" in line).split("[")[-1][:36]
    assert f"{task_id}] succeeded" in worker_log("crash-index-b")  # the same message, redelivered
    with organization_scope(tenant.id):
        job = Job.objects.get(id=job_id)
        rows = [*EpisodicEvent.objects.all(), *SemanticItem.objects.all()]
    # A's graph writes and marks were rolled back with its connection: one attempt each, and
    # the job succeeded once every row was indexed.
    assert job.result["rows_failed"] == 0 and job.result["rows_indexed"] == len(rows)
    assert {(row.index_status, row.index_attempts) for row in rows} == {("indexed", 1)}
    graph = graph_snapshot(tenant.id)
    assert graph.anchors and graph.frames
    assert graph.duplicate_anchor_keys() == [] and graph.duplicate_frame_ids() == []
    assert graph.arms_match_frames()
    tom = next(anchor for anchor in graph.anchors if anchor["key"] == "tom")
    mentioning = [row for row in rows if "Tom" in getattr(row, "details", "")]
    assert tom["mention_count"] == len(mentioning) >= 2
    for frame in graph.frames:
        assert len(frame["citations"]) == len(set(frame["citations"]))
    purge_queues()


@pytest.mark.slow
def test_a_worker_killed_mid_erasure_is_replaced_and_erasure_completes_once() -> None:
    purge_queues()
    tenant = make_tenant()
    webhook_endpoint_create(  # subscribed: the erasure emits one subject.erased event
        organization_id=tenant.id, url="http://127.0.0.1:9/mirix", event_types=["*"], include_content_for=[]
    )
    ana = plant(tenant, "ana")
    planted = subject_counts(ana.subject_id)
    planted_graph = graph_counts(tenant, ana.subject_id)
    names = [eraser.name for eraser in erasers_for(purposes=None)]
    assert "episodic" in names and names.index("episodic") > 0
    doomed = {**VISIBILITY, "MIRIX_TEST_FAULT_PAUSES": "erasure.step.episodic=300"}
    purge_queues()  # planting's own jobs are not the subject of this test
    with celery_worker(queues=["maintenance"], name="crash-erase-a", env=doomed) as a:
        accepted = tenant.client().delete("/v1/subjects/ana")
        assert accepted.status_code == 202
        request_id = accepted.json()["erasure_request_id"]
        wait_for(lambda: _paused("crash-erase-a"), timeout=90)
        # Mid-erasure: the steps before "episodic" committed; that one is open.
        with organization_scope(tenant.id):
            request = ErasureRequest.objects.get(id=request_id)
            assert request.status == ErasureRequest.Status.RUNNING
            assert set(request.steps_done) == set(names[: names.index("episodic")])
            assert EpisodicEvent.objects.filter(subject_id=ana.subject_id).count() == planted["episodic"]
        with celery_worker(queues=["maintenance"], name="crash-erase-b", env=VISIBILITY):
            _kill(a)
            wait_for(lambda: _erasure_status(tenant.id, request_id) == ErasureRequest.Status.COMPLETED, timeout=120)
    with organization_scope(tenant.id):
        done = ErasureRequest.objects.get(id=request_id)
        assert ErasureRequest.objects.filter(kind=ErasureRequest.Kind.SUBJECT).count() == 1
        assert AuditEntry.objects.filter(action="erasure.subject.completed").count() == 1
        assert WebhookEvent.objects.filter(event_type=SUBJECT_ERASED).count() == 1
        assert Job.objects.get(id=done.job_id).status == Job.Status.SUCCEEDED
    # Counted once: the killed worker's open step was rolled back, not added twice.
    for store, count in planted.items():
        assert done.counts.get(store, 0) == count, store
    for key, count in planted_graph.items():
        assert done.counts.get(key, 0) == count, key
    assert sorted(done.steps_done) == sorted([*names, SUBJECT_ROW_STEP])
    assert done.storage, "the touched tables are rewritten (or reported) after the deletes"
    assert not Subject.objects.dangerously_across_organizations().filter(id=ana.subject_id).exists()
    assert ana.canary not in database_text().lower()
    assert ana.canary not in storage_text(Path(settings.OBJECT_STORAGE_ROOT) / "org" / str(tenant.id))
    purge_queues()


BATCH_CHUNKS = 40
KILLED_AT = 10  # the eleventh chunk of forty


def _batch_chunk(n: int) -> dict[str, Any]:
    return {"messages": [message(f"On day {n} I walked to the lake with chunkmark{n:02d}.", n=n)]}


def _swept() -> int:
    from workers.maintenance import jobs_sweep_task

    return int(jobs_sweep_task.apply().get())


@pytest.mark.slow
def test_a_batch_whose_worker_is_killed_is_resumed_by_the_sweep_and_writes_each_chunk_once() -> None:
    """The broker would hold the killed worker's message for its 7 h visibility timeout (left
    at its default here): the sweep, seeing the job's heartbeat stop, publishes it again, and
    the new worker goes on from the first unwritten chunk."""
    purge_queues()
    tenant = make_tenant()
    tenant.subject("maya")
    doomed = {"MIRIX_TEST_FAULT_PAUSES": f"memory.batch.chunk.{KILLED_AT}=300"}
    chunks = [_batch_chunk(n) for n in range(BATCH_CHUNKS)]
    with celery_worker(queues=["indexing"], name="crash-batch-a", env=doomed) as a:
        accepted = tenant.client().post("/v1/subjects/maya/memories/batch", {"chunks": chunks}, format="json")
        assert accepted.status_code == 202, accepted.content
        job_id, batch_id = accepted.json()["job_id"], accepted.json()["batch_id"]
        wait_for(lambda: _paused("crash-batch-a"), timeout=180)
        _kill(a)
    with organization_scope(tenant.id):
        assert IngestionBatchChunk.objects.filter(batch_id=batch_id).count() == KILLED_AT
        assert Job.objects.get(id=job_id).status == Job.Status.RUNNING
    # No worker is running: what takes the job up again is the sweep, once its heartbeat is stale.
    wait_for(lambda: _swept() == 1, timeout=30, interval=0.5)
    assert _job_status(tenant.id, job_id) == Job.Status.QUEUED
    with celery_worker(queues=["indexing"], name="crash-batch-b"):
        wait_for(lambda: _job_status(tenant.id, job_id) == Job.Status.SUCCEEDED, timeout=300, interval=0.5)
    assert "fault pause" not in worker_log("crash-batch-b")
    with organization_scope(tenant.id):
        job = Job.objects.get(id=job_id)
        written = list(IngestionBatchChunk.objects.filter(batch_id=batch_id).order_by("index"))
        rows = [row for model in STORES.values() for row in model.objects.all()]
    assert job.resumes == 1 and job.attempts == 2
    assert job.result["chunks_done"] == BATCH_CHUNKS
    assert [chunk.index for chunk in written] == list(range(BATCH_CHUNKS))
    # Each chunk's rows carry one chunk id, the one its record names: no chunk written twice.
    by_chunk = Counter(str(row.chunk_id) for row in rows)
    assert sorted(by_chunk) == sorted(str(chunk.chunk_id) for chunk in written)
    for chunk in written:
        assert by_chunk[str(chunk.chunk_id)] == chunk.records_written > 0
    for n in range(BATCH_CHUNKS):
        marked = {
            str(row.chunk_id) for row in rows if isinstance(row, EpisodicEvent) and f"chunkmark{n:02d}" in row.details
        }
        assert len(marked) == 1, (n, marked)
    assert job.result["records_written"] == sum(chunk.records_written for chunk in written)
    purge_queues()
