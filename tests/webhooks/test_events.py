"""Emitting events: in the caller's transaction, nothing without subscribers, the wired emitters."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.jobs import task_names
from apps.jobs.services import job_create
from apps.platform.errors import MissingTenantScope
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from apps.webhooks import delivery, events
from apps.webhooks.models import WebhookDelivery, WebhookEvent, WebhookSecret
from apps.webhooks.services import webhook_endpoint_rotate_secret, webhook_event_emit
from tests.factories import Tenant, make_tenant
from tests.webhooks.support import Pipeline, Receiver, emit, make_endpoint
from workers.maintenance import graph_check_task
from workers.webhooks import prune_events


def _events(tenant: Tenant) -> list[WebhookEvent]:
    with organization_scope(tenant.id):
        return list(WebhookEvent.objects.order_by("created_at"))


def test_without_subscribers_one_query_and_nothing_written(pipeline: Pipeline) -> None:
    tenant = make_tenant()
    make_endpoint(tenant, "http://127.0.0.1:9/in", event_types=["memory.created"])
    with organization_scope(tenant.id), CaptureQueriesContext(connection) as queries:
        assert webhook_event_emit(organization_id=tenant.id, event_type="job.failed", payload={}) is None
    assert len(queries) == 1
    assert _events(tenant) == [] and pipeline.published == []


def test_the_outbox_row_commits_with_the_change_and_the_kick_follows_the_commit(pipeline: Pipeline) -> None:
    tenant = make_tenant()
    make_endpoint(tenant, "http://127.0.0.1:9/in")
    with pytest.raises(RuntimeError), organization_scope(tenant.id):
        webhook_event_emit(organization_id=tenant.id, event_type="job.failed", payload={"job_id": "x"})
        raise RuntimeError("the change rolls back")
    assert _events(tenant) == [] and pipeline.published == []

    with organization_scope(tenant.id):
        webhook_event_emit(organization_id=tenant.id, event_type="job.failed", payload={"job_id": "y"})
        assert pipeline.published == []  # never published inside the transaction
    assert pipeline.published == [(task_names.WEBHOOKS_DRAIN_ORGANIZATION, {"organization_id": str(tenant.id)})]
    assert [e.payload for e in _events(tenant)] == [{"job_id": "y"}]


def test_programming_errors_fail_loudly() -> None:
    tenant, other = make_tenant(), make_tenant()
    with pytest.raises(ValueError, match="unknown webhook event type"):
        emit(tenant, "memory.vanished")
    with pytest.raises(ValueError, match="content"):
        emit(tenant, "memory.created", {"content": "text"})
    with pytest.raises(MissingTenantScope):
        webhook_event_emit(organization_id=tenant.id, event_type="job.failed", payload={})
    with organization_scope(other.id), pytest.raises(MissingTenantScope):
        webhook_event_emit(organization_id=tenant.id, event_type="job.failed", payload={})


def test_every_documented_event_type_can_be_emitted() -> None:
    tenant = make_tenant()
    make_endpoint(tenant, "http://127.0.0.1:9/in")
    for event_type in events.EVENT_TYPES:
        assert emit(tenant, event_type, {"id": str(uuid.uuid4())}) is not None
    assert len(_events(tenant)) == 12


def test_a_memory_write_emits_memory_created_with_ids_and_text_only_for_opted_in(
    pipeline: Pipeline, receiver: Receiver
) -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    make_endpoint(tenant, receiver.url("/plain"))
    make_endpoint(tenant, receiver.url("/content"), include_content_for=["memory.created"])
    written = tenant.client().post(
        "/v1/subjects/ana/memories",
        {
            "messages": [
                {"role": "user", "content": "Yesterday I hiked Mount Tam with Leo. My password is Tr0ub4dor&3x"}
            ]
        },
        format="json",
    )
    assert written.status_code == 202, written.content
    pipeline.pump()

    plain, content = (json.loads(receiver.on(p)[0].body) for p in ("/plain", "/content"))
    records = [{"type": r["type"], "id": r["id"]} for r in written.json()["records"]]
    assert plain["type"] == "memory.created" and plain["data"]["records"] == records
    assert plain["data"]["subject_external_id"] == "ana" and plain["data"]["source_kind"] == "chat"
    assert "Mount Tam" not in receiver.on("/plain")[0].body.decode() and "content" not in plain["data"]
    texts = [r["text"] for r in content["data"]["content"]["records"]]
    assert any("Mount Tam" in t for t in texts)
    assert "vault" not in {r["type"] for r in content["data"]["content"]["records"]}
    assert all("Tr0ub4dor" not in request.body.decode() for request in receiver.requests)


def test_a_document_write_emits_memory_created(pipeline: Pipeline, receiver: Receiver) -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    make_endpoint(tenant, receiver.url(), include_content_for=["*"])
    written = tenant.client().post(
        "/v1/subjects/ana/memories",
        {"file": SimpleUploadedFile("notes.txt", b"Repotting: water first, then move the plant.", "text/plain")},
        format="multipart",
    )
    assert written.status_code == 202, written.content
    pipeline.pump()
    message = json.loads(receiver.requests[0].body)
    assert message["data"]["source_kind"] == "document"
    assert message["data"]["content"]["records"][0]["text"].startswith("notes.txt\nRepotting")


def test_a_failed_job_emits_job_failed(pipeline: Pipeline, receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    tenant = make_tenant()
    make_endpoint(tenant, receiver.url(), event_types=["job.failed"])
    with organization_scope(tenant.id):
        job = job_create(organization_id=tenant.id, kind="graph.check")

    def explode(**_: Any) -> dict[str, Any]:
        raise ValueError("memory text: my secret diary entry")

    monkeypatch.setattr("workers.maintenance.graph_check", explode)
    graph_check_task.apply(kwargs={"organization_id": str(tenant.id), "job_id": str(job.id)})
    pipeline.pump()
    message = json.loads(receiver.requests[0].body)
    assert message["type"] == "job.failed"
    assert message["data"] == {
        "job_id": str(job.id),
        "kind": "graph.check",
        "subject_id": None,
        "error_code": "ValueError",
    }
    assert "diary" not in receiver.requests[0].body.decode()


def test_erasing_a_subject_erases_the_events_that_carry_its_data(pipeline: Pipeline) -> None:
    tenant = make_tenant()
    subject = tenant.subject("ana")
    make_endpoint(tenant, "http://127.0.0.1:9/in", include_content_for=["*"])
    written = tenant.client().post(
        "/v1/subjects/ana/memories", {"messages": [{"role": "user", "content": "I adopted a cat."}]}, format="json"
    )
    assert written.status_code == 202
    pipeline.pump(only=task_names.WEBHOOKS_DRAIN_ORGANIZATION)
    [event] = _events(tenant)
    assert event.subject_id == subject.id and event.content is not None
    with organization_scope(tenant.id):
        Subject.objects.filter(id=subject.id).delete()
        assert not WebhookDelivery.objects.exists()
    assert _events(tenant) == []


def test_old_events_and_expired_secrets_are_pruned(settings: Any) -> None:
    tenant = make_tenant()
    endpoint = make_endpoint(tenant, "http://127.0.0.1:9/in").endpoint
    rotate = webhook_endpoint_rotate_secret(organization_id=tenant.id, endpoint_id=endpoint.id, overlap=timedelta(0))
    assert rotate.previous_secret_expires_at is not None
    old, recent = emit(tenant), emit(tenant)
    assert old is not None and recent is not None
    WebhookEvent.objects.dangerously_across_organizations().filter(id=old.id).update(
        created_at=timezone.now() - timedelta(days=settings.WEBHOOKS_EVENT_RETENTION_DAYS, seconds=1)
    )
    prune_events.apply().maybe_throw()
    assert [e.id for e in _events(tenant)] == [recent.id]
    with organization_scope(tenant.id):
        assert WebhookSecret.objects.count() == 1


def test_a_burst_of_commits_shares_one_drain_and_later_commits_get_their_own(
    pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = make_tenant()
    make_endpoint(tenant, "http://127.0.0.1:9/in")
    drain = (task_names.WEBHOOKS_DRAIN_ORGANIZATION, {"organization_id": str(tenant.id)})
    for _ in range(5):
        emit(tenant)
    assert pipeline.published == [drain]

    monkeypatch.setattr(delivery, "DRAIN_BATCH", 2)  # a full batch drains again at once
    pipeline.pump(only=task_names.WEBHOOKS_DRAIN_ORGANIZATION)
    with organization_scope(tenant.id):
        assert not WebhookEvent.objects.filter(dispatched_at__isnull=True).exists()
        assert WebhookDelivery.objects.count() == 5
    assert {name for name, _ in pipeline.published} == {task_names.WEBHOOKS_SEND}
    emit(tenant)  # committed after the drains started: kicked again
    assert pipeline.published[-1] == drain
