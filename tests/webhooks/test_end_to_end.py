"""End to end on a real Celery worker (on a queue of this test's own) and the real broker."""

from __future__ import annotations

import json
import time

import pytest

from apps.jobs import task_names
from apps.tenancy.scope import organization_scope
from apps.webhooks.models import WebhookAttempt, WebhookDelivery
from mirix_saas.celery import app
from tests.factories import make_tenant
from tests.processes import celery_worker, wait_for, worker_log
from tests.webhooks.support import Receiver, Reply, emit, make_endpoint


@pytest.mark.slow
def test_a_memory_write_through_the_api_reaches_the_receiver(receiver: Receiver, webhook_queue: str) -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    make_endpoint(tenant, receiver.url("/plain"), event_types=["memory.created"])
    make_endpoint(tenant, receiver.url("/content"), event_types=["memory.created"], include_content_for=["*"])
    with celery_worker(queues=[webhook_queue], concurrency=2, name="webhooks-e2e"):
        written = tenant.client().post(
            "/v1/subjects/ana/memories",
            {"messages": [{"role": "user", "content": "I adopted a cat named Miso last week."}]},
            format="json",
        )
        committed = time.time()  # the write has committed by the time it answers
        assert written.status_code == 202, written.content
        wait_for(lambda: receiver.on("/plain") and receiver.on("/content"), timeout=60)

    plain, content = receiver.on("/plain")[0], receiver.on("/content")[0]
    assert plain.at - committed < 30  # kicked after commit, not waiting for beat
    message = json.loads(plain.body)
    assert message["type"] == "memory.created"
    assert {r["id"] for r in message["data"]["records"]} == {r["id"] for r in written.json()["records"]}
    assert "Miso" not in plain.body.decode() and "content" not in message["data"]
    assert any("Miso" in r["text"] for r in json.loads(content.body)["data"]["content"]["records"])
    assert plain.headers["webhook-id"] == content.headers["webhook-id"]


@pytest.mark.slow
def test_a_redelivered_message_does_not_send_twice(receiver: Receiver, webhook_queue: str) -> None:
    tenant = make_tenant()
    make_endpoint(tenant, receiver.url())
    receiver.script(Reply(200, delay=1.5))
    with celery_worker(queues=[webhook_queue], concurrency=3, name="webhooks-redelivery"):
        emit(tenant)
        with organization_scope(tenant.id):
            delivery_id = wait_for(lambda: WebhookDelivery.objects.values_list("id", flat=True).first(), timeout=30)
        message = {"organization_id": str(tenant.id), "delivery_id": str(delivery_id)}
        # Copies of the send message while the first attempt is in flight, and after it.
        for _ in range(2):
            app.send_task(task_names.WEBHOOKS_SEND, kwargs=message, queue=webhook_queue)
        wait_for(lambda: _status(tenant) == "succeeded", timeout=30)
        late = app.send_task(task_names.WEBHOOKS_SEND, kwargs=message, queue=webhook_queue)
        wait_for(lambda: f"[{late.id}] succeeded" in worker_log("webhooks-redelivery"), timeout=30)
    assert len(receiver.requests) == 1
    with organization_scope(tenant.id):
        assert WebhookAttempt.objects.count() == 1


def _status(tenant) -> str:  # type: ignore[no-untyped-def]
    with organization_scope(tenant.id):
        return WebhookDelivery.objects.get().status
