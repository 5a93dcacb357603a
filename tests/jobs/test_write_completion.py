"""Accepted writes share one queued completion task per organization (ADR 0084): a write whose
commit finds a task queued publishes none, the task clears the mark before it reads the waiting
writes (so it completes them all), and a full batch publishes the next (more may wait)."""

from __future__ import annotations

from typing import Any

import pytest

from apps.jobs import task_names
from apps.jobs.models import Job
from apps.jobs.services import publisher_warm
from apps.tenancy.scope import organization_scope
from mirix_saas.celery import app
from tests.factories import Tenant, make_tenant
from workers import indexing
from workers.indexing import complete_writes


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    sent: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(app, "send_task", lambda name, kwargs, **options: sent.append((name, kwargs)))
    return sent


def _write(tenant: Tenant, text: str) -> str:
    response = tenant.client().post(
        "/v1/subjects/maya/memories", {"messages": [{"role": "user", "content": text}]}, format="json"
    )
    assert response.status_code == 202, response.content
    return str(response.json()["job_id"])


def _completions(published: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [kwargs for name, kwargs in published if name == task_names.WRITE_COMPLETE]


def test_writes_waiting_for_a_queued_task_publish_no_other(published: list[Any]) -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    first = _write(tenant, "I started a pottery class on Thursdays.")
    _write(tenant, "My sister Ana moved to Lisbon in May.")
    _write(tenant, "I adopted a cat named Miso.")
    assert _completions(published) == [{"organization_id": str(tenant.id), "job_id": first}]

    complete_writes.apply(kwargs={"organization_id": str(tenant.id), "job_id": first})
    with organization_scope(tenant.id):
        jobs = Job.objects.filter(kind="memory.write")
        assert {job.status for job in jobs} == {Job.Status.SUCCEEDED} and jobs.count() == 3  # all three completed
    assert len(_completions(published)) == 1  # and none left to publish another

    later = _write(tenant, "I ran a half marathon in April.")  # the task cleared the mark: published
    assert _completions(published)[1:] == [{"organization_id": str(tenant.id), "job_id": later}]


def test_a_full_batch_publishes_the_next_task(published: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    first = _write(tenant, "I started a pottery class on Thursdays.")
    _write(tenant, "My sister Ana moved to Lisbon in May.")
    monkeypatch.setattr(indexing, "COMPLETE_ROUNDS", 1)
    monkeypatch.setattr(indexing, "COMPLETE_BATCH", 1)
    published.clear()
    complete_writes.apply(kwargs={"organization_id": str(tenant.id), "job_id": first})
    assert _completions(published) == [{"organization_id": str(tenant.id), "job_id": first}]  # one write is left
    complete_writes.apply(kwargs={"organization_id": str(tenant.id), "job_id": first})
    with organization_scope(tenant.id):
        assert set(Job.objects.filter(kind="memory.write").values_list("status", flat=True)) == {Job.Status.SUCCEEDED}


def test_the_publisher_is_warmed_with_the_queues_a_request_publishes_to_declared() -> None:
    """A process's first write does not route and declare its task's queue inside the request
    (the first write measured 1.8-2.6 times a warm one before): the warm start did it."""
    publisher_warm()
    with app.producer_or_acquire() as producer:
        declared = producer.connection.declared_entities
    for name in (task_names.WRITE_COMPLETE, task_names.INDEX_CHUNK):
        assert hash(app.amqp.router.route({}, name, (), {})["queue"]) in declared  # kombu keeps their hashes
