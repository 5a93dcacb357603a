"""The write path's jobs on a real worker and broker."""

from __future__ import annotations

import pytest

from apps.memory.models import EpisodicEvent, IngestionBatch
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant
from tests.memory.conversation import SESSIONS
from tests.processes import celery_worker, purge_queues, wait_for


def _job(tenant, job_id: str) -> dict:  # type: ignore[no-untyped-def, type-arg]
    return tenant.client().get(f"/v1/jobs/{job_id}").json()


@pytest.mark.slow
def test_batch_ingestion_reports_progress_and_every_row_gets_indexed() -> None:
    purge_queues()
    tenant = make_tenant()
    tenant.subject("maya")
    chunks = [{"messages": session, "session_id": f"session-{n}"} for n, session in enumerate(SESSIONS, start=1)]
    accepted = tenant.client().post("/v1/subjects/maya/memories/batch", {"chunks": chunks}, format="json")
    assert accepted.status_code == 202, accepted.content
    body = accepted.json()
    assert body["chunks_total"] == 3
    queued = _job(tenant, body["job_id"])
    assert queued["status"] == "queued" and queued["result"]["chunks_done"] == 0
    with celery_worker():
        done = wait_for(lambda: (j := _job(tenant, body["job_id"]))["status"] == "succeeded" and j, timeout=120)
        assert done["result"]["chunks_done"] == 3 and done["result"]["chunks_total"] == 3
        assert done["result"]["records_written"] > 3
        # Every chunk's indexing job ran too.
        with organization_scope(tenant.id):
            wait_for(lambda: not EpisodicEvent.objects.filter(index_status="pending").exists(), timeout=120)
            statuses = set(EpisodicEvent.objects.values_list("index_status", flat=True))
            sessions = set(EpisodicEvent.objects.values_list("session_id", flat=True))
            batch = IngestionBatch.objects.get(id=body["batch_id"])
    assert statuses == {"indexed"}
    assert {"session-1", "session-2"} <= sessions
    assert batch.chunks == [] and batch.chunks_done == 3  # content is not kept past its use


def test_batch_of_bad_chunks_is_refused_whole() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    response = tenant.client().post(
        "/v1/subjects/maya/memories/batch",
        {"chunks": [{"text": "fine"}, {"messages": [{"role": "robot", "content": "x"}]}]},
        format="json",
    )
    assert response.status_code == 400
    assert "chunks" in response.json()["error"]["details"]
    with organization_scope(tenant.id):
        assert not IngestionBatch.objects.exists()
    empty = tenant.client().post("/v1/subjects/maya/memories/batch", {"chunks": []}, format="json")
    assert empty.status_code == 400
