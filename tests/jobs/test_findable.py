"""Findable when it says so (ADR 0031): a write's job is ``succeeded`` only once every row it
wrote is indexed, ``?wait=true`` answers once the rows are searchable (or a 202 with the job's
link when the wait runs out), and a write whose process died right after its commit still
gets its indexing, through the jobs sweep. Real Postgres, real broker, real workers."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import pytest
import requests
from django.conf import settings

from apps.jobs.models import Job
from apps.jobs.services import jobs_sweep
from apps.memory.models import STORES, EpisodicEvent, IndexedRecord, SemanticItem
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, make_tenant
from tests.processes import celery_worker, purge_queues, wait_for
from tests.reliability.support import api_server, message

FACTS = [
    "I adopted a greyhound called Biscuit last spring.",
    "My sister Ines works as a glassblower in Porto.",
    "I play the cello in a community orchestra on Thursdays.",
    "I grow tomatoes and basil on my balcony.",
]
SLOW_INDEXING = {"MIRIX_TEST_FAULT_PAUSES": "indexing.before_commit=1.5"}


def _job(tenant: Tenant, job_id: str) -> dict[str, Any]:
    response = tenant.client().get(f"/v1/jobs/{job_id}")
    assert response.status_code == 200, response.content
    return response.json()  # type: ignore[no-any-return]


def _index_statuses(tenant: Tenant, chunk_ids: list[Any] | None = None) -> list[str]:
    with organization_scope(tenant.id):
        statuses: list[str] = []
        for model in (EpisodicEvent, SemanticItem):
            rows = model.objects.all() if chunk_ids is None else model.objects.filter(chunk_id__in=chunk_ids)
            statuses += list(rows.values_list("index_status", flat=True))
    return statuses


def _stored(tenant: Tenant) -> int:
    with organization_scope(tenant.id):
        return sum(model.objects.count() for model in STORES.values()) + Job.objects.count()


def _warm(tenant: Tenant) -> None:
    """One write indexed by the worker first: its first task loads the models, which must not
    count against a wait."""
    written = tenant.client().post(
        "/v1/subjects/warmup/memories", {"messages": [message("I like tea.", n=0)]}, format="json"
    )
    assert written.status_code == 202, written.content
    wait_for(lambda: _job(tenant, written.json()["job_id"])["status"] == "succeeded", timeout=180, interval=0.5)


@pytest.mark.slow
def test_a_batch_job_is_succeeded_only_after_every_row_it_wrote_is_indexed() -> None:
    purge_queues()
    tenant = make_tenant()
    tenant.subject("lena")
    chunks = [{"messages": [message(fact, n=n, name="Lena")]} for n, fact in enumerate(FACTS)]
    # Two indexing processes, each holding every indexing commit a moment: the batch's chunks
    # are indexed concurrently, and well after they are written.
    with celery_worker(concurrency=2, env=SLOW_INDEXING):
        accepted = tenant.client().post("/v1/subjects/lena/memories/batch", {"chunks": chunks}, format="json")
        assert accepted.status_code == 202, accepted.content
        job_id = accepted.json()["job_id"]
        seen: list[tuple[str, list[str]]] = []

        def finished() -> bool:
            status = _job(tenant, job_id)["status"]  # first the job, then its rows
            seen.append((status, _index_statuses(tenant)))
            return status in ("succeeded", "failed")

        wait_for(finished, timeout=300, interval=0.1)
    status, rows = seen[-1]
    assert status == "succeeded"
    assert rows and set(rows) == {IndexedRecord.IndexStatus.INDEXED}
    # It was seen written but not yet indexed, and never succeeded before its rows were.
    assert any(s == "indexing" and IndexedRecord.IndexStatus.PENDING in r for s, r in seen)
    assert all(set(r) == {IndexedRecord.IndexStatus.INDEXED} for s, r in seen if s == "succeeded")
    done = _job(tenant, job_id)
    assert done["result"]["rows_indexed"] == len(rows) and done["result"]["rows_failed"] == 0
    assert done["result"]["chunks_done"] == len(FACTS)


@pytest.mark.slow
def test_wait_true_answers_with_rows_that_a_search_finds_at_once() -> None:
    purge_queues()
    tenant = make_tenant()
    tenant.subject("lena")
    tenant.subject("warmup")
    with celery_worker():
        _warm(tenant)
        written = tenant.client().post(
            "/v1/subjects/lena/memories?wait=true&wait_timeout=40",
            {"messages": [message("My sister Ines works as a glassblower in Porto.", n=1, name="Lena")]},
            format="json",
        )
        assert written.status_code == 201, written.content
        body = written.json()
        assert body["job"]["status"] == "succeeded" and body["job"]["id"] == body["job_id"]
        assert set(_index_statuses(tenant, [body["chunk_id"]])) == {IndexedRecord.IndexStatus.INDEXED}
        found = tenant.client().post(
            "/v1/subjects/lena/search", {"query": "What does Ines do for work?"}, format="json"
        )
        assert found.status_code == 200
        assert found.json()["fallback"] is False  # found through the graph, not the flat fallback
        written_ids = {record["id"] for record in body["records"]}
        assert written_ids & {row["id"] for row in found.json()["rows"]}

        chunks = [{"messages": [message(fact, n=n, name="Lena")]} for n, fact in enumerate(FACTS[2:])]
        batch = tenant.client().post(
            "/v1/subjects/lena/memories/batch?wait=true&wait_timeout=45", {"chunks": chunks}, format="json"
        )
        assert batch.status_code == 201, batch.content
        waited = batch.json()
        assert waited["job"]["status"] == "succeeded" and waited["job"]["id"] == waited["job_id"]
        with organization_scope(tenant.id):
            batch_rows = {
                str(i)
                for model in (EpisodicEvent, SemanticItem)
                for i in model.objects.exclude(id__in=written_ids)
                .filter(subject__external_id="lena")
                .values_list("id", flat=True)
            }
        assert batch_rows and batch_rows <= {record["id"] for record in waited["records"]}
        cello = tenant.client().post(
            "/v1/subjects/lena/search", {"query": "When does Lena play the cello?"}, format="json"
        )
        assert cello.json()["fallback"] is False
        assert any("cello" in row["text"] for row in cello.json()["rows"])


def test_wait_that_runs_out_is_a_202_with_the_job_link_and_the_rows_written() -> None:
    purge_queues()  # and no worker: nothing indexes
    tenant = make_tenant()
    tenant.subject("lena")
    first = tenant.client().post("/v1/subjects/lena/memories", {"messages": [message(FACTS[3], n=0)]}, format="json")
    assert first.status_code == 202 and first.json()["job"]["status"] == "queued"
    started = time.monotonic()
    written = tenant.client().post(
        "/v1/subjects/lena/memories?wait=true&wait_timeout=0.3",
        {"messages": [message("I grow tomatoes and basil on my balcony.", n=1, name="Lena")]},
        format="json",
    )
    assert time.monotonic() - started < 5
    assert written.status_code == 202, written.content
    body = written.json()
    assert written["Location"] == f"/v1/jobs/{body['job_id']}"
    assert body["job"]["id"] == body["job_id"] and body["job"]["status"] == "queued"  # no worker completes it
    assert body["records"] and body["chunk_id"]
    with organization_scope(tenant.id):
        for record in body["records"]:
            assert STORES[record["type"]].objects.filter(id=record["id"]).exists()
    assert _job(tenant, body["job_id"])["status"] == "queued"

    chunks = [{"messages": [message(FACTS[0], n=1, name="Lena")]}]
    batch = tenant.client().post(
        "/v1/subjects/lena/memories/batch?wait=true&wait_timeout=0.3", {"chunks": chunks}, format="json"
    )
    assert batch.status_code == 202, batch.content
    queued = batch.json()
    assert batch["Location"] == f"/v1/jobs/{queued['job_id']}"
    assert queued["job"]["status"] == "queued" and queued["records"] == [] and queued["chunks_total"] == 1


@pytest.mark.parametrize("route", ["memories", "memories/batch"])
@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("wait=maybe", "wait is true or false"),
        ("wait=true&wait_timeout=0", "wait_timeout is a number of seconds"),
        ("wait=true&wait_timeout=-2", "wait_timeout is a number of seconds"),
        ("wait=true&wait_timeout=51", "at most 50"),
        ("wait=true&wait_timeout=ten", "wait_timeout is a number of seconds"),
        ("wait=true&wait_timeout=nan", "wait_timeout is a number of seconds"),
        ("wait_timeout=5", "applies only with wait=true"),
        ("wait=false&wait_timeout=5", "applies only with wait=true"),
    ],
)
def test_bad_wait_parameters_are_a_400_that_says_why_and_store_nothing(route: str, query: str, named: str) -> None:
    tenant = make_tenant()
    tenant.subject("lena")
    before = _stored(tenant)
    body: dict[str, Any] = {"messages": [message(FACTS[0], n=1, name="Lena")]}
    if route.endswith("batch"):
        body = {"chunks": [body]}
    response = tenant.client().post(f"/v1/subjects/lena/{route}?{query}", body, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "validation_error" and named in error["message"]
    assert _stored(tenant) == before


@pytest.mark.parametrize("route", ["memories?wait=true&wait_timeout=0.2", "memories/batch?wait=true&wait_timeout=0.2"])
def test_another_organizations_key_never_reaches_the_owners_rows_or_jobs(route: str) -> None:
    """Another organization's key on a waited write: it writes to a subject of its own
    organization (ADR 0039), never to the owner's, and waits on its own job; the owner's job
    is a 404 to it, and nothing of the owner's changes."""
    owner, other = make_tenant(), make_tenant()
    owner.subject("lena")
    one = {"messages": [message(FACTS[0], n=1, name="Lena")]}
    written = owner.client().post("/v1/subjects/lena/memories?wait=true&wait_timeout=0.1", one, format="json")
    assert written.status_code == 202
    before = _stored(owner)
    body: dict[str, Any] = {"chunks": [one]} if route.startswith("memories/batch") else one
    response = other.client().post(f"/v1/subjects/lena/{route}", body, format="json")
    assert response.status_code == 202, response.content
    assert response.json()["job"]["id"] != written.json()["job_id"]
    assert _stored(owner) == before and _stored(other) > 0
    assert other.client().get(written["Location"]).status_code == 404
    assert other.client().get(written["Location"]).json()["error"]["code"] == "not_found"
    assert _stored(owner) == before


@pytest.mark.slow
def test_a_write_whose_process_died_after_commit_still_gets_indexed() -> None:
    """The server is killed right after the write's commit, before it could publish the
    indexing (the client saw only a timeout): the job row, committed with the rows, is their
    outbox, and the jobs sweep publishes its completion once the job has not moved for
    ``JOBS_STALE_SECONDS``, not the index sweep minutes later (ADR 0031, 0054)."""
    purge_queues()
    tenant = make_tenant()
    tenant.subject("lena")
    with api_server(
        workers=1, threads=2, env={"MIRIX_TEST_FAULT_PAUSES": "jobs.publish=300"}, name="findable"
    ) as server:
        with pytest.raises(requests.Timeout):
            server.post(
                "/v1/subjects/lena/memories", tenant.key, {"messages": [message(FACTS[1], n=1, name="Lena")]}, timeout=5
            )

        def written() -> Job | None:
            with organization_scope(tenant.id):
                return Job.objects.filter(kind="memory.write").first()

        job = wait_for(written, timeout=240)  # the server loads its models on its first write
        os.killpg(server.process.pid, signal.SIGKILL)  # dies before its publish
        server.process.wait(timeout=10)
    assert job.status == Job.Status.QUEUED
    assert set(_index_statuses(tenant)) == {IndexedRecord.IndexStatus.WRITING}
    with celery_worker():
        time.sleep(settings.JOBS_STALE_SECONDS + 1)  # the worker has no message: nothing moves
        assert _job(tenant, str(job.id))["status"] == "queued"
        with organization_scope(tenant.id):
            assert jobs_sweep().resumed == 1
        done = wait_for(
            lambda: (j := _job(tenant, str(job.id)))["status"] not in ("queued", "indexing") and j, timeout=180
        )
    assert done["status"] == "succeeded"
    assert set(_index_statuses(tenant)) == {IndexedRecord.IndexStatus.INDEXED}
