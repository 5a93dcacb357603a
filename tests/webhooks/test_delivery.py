"""Delivery against a real local receiver, with the task code run in this process: retries,
410, Retry-After, exhaustion, no double sends, content opt-in, tenant isolation."""

from __future__ import annotations

import itertools
import json
import logging
import threading
import uuid
from typing import Any

import pytest
from django.db import connections

from apps.audit.models import AuditEntry
from apps.jobs import task_names
from apps.tenancy.scope import organization_scope
from apps.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from apps.webhooks.services import webhook_delivery_replay, webhook_endpoint_update
from tests.factories import Tenant, make_tenant
from tests.webhooks.support import Pipeline, Receiver, Reply, emit, make_endpoint
from workers.webhooks import drain_outbox, send_delivery


def _delivery(tenant: Tenant) -> WebhookDelivery:
    with organization_scope(tenant.id):
        return WebhookDelivery.objects.get()


def _attempts(tenant: Tenant) -> list[WebhookAttempt]:
    with organization_scope(tenant.id):
        return list(WebhookAttempt.objects.order_by("number"))


def _endpoint(tenant: Tenant) -> WebhookEndpoint:
    with organization_scope(tenant.id):
        return WebhookEndpoint.objects.get()


def _gaps(attempts: list[WebhookAttempt]) -> list[float]:
    return [(b.started_at - a.started_at).total_seconds() for a, b in itertools.pairwise(attempts)]


def _finished(tenant: Tenant) -> WebhookDelivery | None:
    found = _delivery(tenant)
    return found if found.status != WebhookDelivery.Status.PENDING else None


def test_failing_then_succeeding_receiver_gets_exactly_one_success(
    pipeline: Pipeline, receiver: Receiver, fast_retries: list[float]
) -> None:
    tenant = make_tenant()
    make_endpoint(tenant, receiver.url())
    receiver.script(Reply(500, body=b"boom"), Reply(502), Reply(500))
    emit(tenant)
    done = pipeline.run_until(lambda: _finished(tenant))

    assert done.status == "succeeded" and done.attempt_count == 4 and done.last_status_code == 200
    attempts = _attempts(tenant)
    assert [a.status_code for a in attempts] == [500, 502, 500, 200]
    assert attempts[0].response_snippet == "boom" and all(a.latency_ms >= 0 for a in attempts)
    assert len(receiver.requests) == 4
    assert len({r.headers["webhook-id"] for r in receiver.requests}) == 1  # the same message, retried
    # Retries waited for the schedule (0.2 s ± 10 %), on the delivery's clock.
    assert all(0.18 <= gap < 0.5 for gap in _gaps(attempts)), _gaps(attempts)
    assert pipeline.tick() == 0 and len(receiver.requests) == 4


def test_410_disables_the_endpoint_and_fails_its_pending_deliveries(pipeline: Pipeline, receiver: Receiver) -> None:
    tenant = make_tenant()
    make_endpoint(tenant, receiver.url())
    receiver.script(Reply(410))
    emit(tenant)
    emit(tenant)
    pipeline.run_until(lambda: len(receiver.requests) >= 1 and not _endpoint(tenant).enabled)
    pipeline.tick()

    endpoint = _endpoint(tenant)
    assert endpoint.disabled_reason == "Disabled automatically: The endpoint answered 410 Gone."
    with organization_scope(tenant.id):
        statuses = sorted(WebhookDelivery.objects.values_list("status", flat=True))
    assert statuses == ["failed", "failed"] and len(receiver.requests) == 1
    assert emit(tenant) is None  # nobody subscribes any more: nothing is written


def test_retry_after_is_honoured(pipeline: Pipeline, receiver: Receiver, fast_retries: list[float]) -> None:
    tenant = make_tenant()
    make_endpoint(tenant, receiver.url())
    receiver.script(Reply(503, {"Retry-After": "1"}), Reply(429, {"Retry-After": "1"}))
    emit(tenant)
    done = pipeline.run_until(lambda: _finished(tenant))
    assert done.status == "succeeded" and len(receiver.requests) == 3
    # The schedule asks for 0.2 s; the receiver asked for 1 s and got it.
    assert all(1.0 <= gap < 1.5 for gap in _gaps(_attempts(tenant))), _gaps(_attempts(tenant))


def test_an_exhausted_schedule_disables_the_endpoint_with_a_notice(
    pipeline: Pipeline, receiver: Receiver, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.WEBHOOKS_RETRY_SCHEDULE = [0, 0.1, 0.1]
    tenant = make_tenant()
    make_endpoint(tenant, receiver.url())
    receiver.script(*[Reply(500)] * 5)
    emit(tenant)
    with caplog.at_level(logging.ERROR, logger="apps.webhooks"):
        done = pipeline.run_until(lambda: _finished(tenant))

    assert done.status == "failed" and done.attempt_count == 3
    assert done.failure_reason == "All 3 attempts of the retry schedule failed."
    endpoint = _endpoint(tenant)
    assert not endpoint.enabled and endpoint.disabled_at is not None
    assert endpoint.disabled_reason == "Disabled automatically: All 3 attempts of the retry schedule failed."
    with organization_scope(tenant.id):
        entry = AuditEntry.objects.get(action="webhook_endpoint.disabled")
    assert entry.target_ids == [str(endpoint.id), str(done.id)] and entry.actor == "task:webhooks.delivery.send"
    [record] = [r for r in caplog.records if r.getMessage() == "webhook endpoint disabled"]
    assert record.endpoint_id == str(endpoint.id) and record.last_status_code == 500  # type: ignore[attr-defined]


def test_a_redelivered_message_or_a_concurrent_copy_sends_once(pipeline: Pipeline, receiver: Receiver) -> None:
    tenant = make_tenant()
    make_endpoint(tenant, receiver.url())
    receiver.script(Reply(200, delay=0.5))
    emit(tenant)
    pipeline.pump()  # the kick runs the drain, which publishes one send, which runs
    delivery_id = str(_delivery(tenant).id)
    message = {"organization_id": str(tenant.id), "delivery_id": delivery_id}

    # The same message redelivered after success: nothing is sent.
    send_delivery.apply(kwargs=message).maybe_throw()
    assert len(receiver.requests) == 1

    # Replayed, then two copies of the send message race each other: one wins the claim.
    webhook_delivery_replay(organization_id=tenant.id, delivery_id=uuid.UUID(delivery_id))
    receiver.script(Reply(200, delay=0.5))
    results: list[Any] = []

    def run() -> None:
        try:
            results.append(send_delivery.apply(kwargs=message).get())
        finally:
            for conn in connections.all(initialized_only=True):
                conn.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(map(str, results)) == ["None", "delivered"]
    assert len(receiver.requests) == 2
    assert [a.number for a in _attempts(tenant)] == [1, 2]


def test_a_second_beat_tick_does_not_publish_again(pipeline: Pipeline, receiver: Receiver) -> None:
    tenant = make_tenant()
    make_endpoint(tenant, receiver.url())
    emit(tenant)
    pipeline.published.clear()  # the kick is lost: only beat finds the event
    for _ in range(2):
        drain_outbox.apply().maybe_throw()
        pipeline.pump(only=task_names.WEBHOOKS_DRAIN_ORGANIZATION)
    assert [name for name, _ in pipeline.published] == [task_names.WEBHOOKS_SEND]
    pipeline.pump()
    assert len(receiver.requests) == 1


def test_content_reaches_only_endpoints_that_opted_in(pipeline: Pipeline, receiver: Receiver) -> None:
    tenant = make_tenant()
    make_endpoint(tenant, receiver.url("/plain"))
    make_endpoint(tenant, receiver.url("/content"), include_content_for=["memory.created"])
    make_endpoint(tenant, receiver.url("/jobs-only"), event_types=["job.failed"])
    emit(
        tenant, "memory.created", {"records": [{"type": "episodic", "id": "r1"}]}, {"records": [{"text": "Ana hiked"}]}
    )
    pipeline.run_until(lambda: len(receiver.requests) == 2)
    plain, content = (json.loads(receiver.on(p)[0].body) for p in ("/plain", "/content"))
    assert plain["type"] == "memory.created" and "content" not in plain["data"]
    assert content["data"]["content"] == {"records": [{"text": "Ana hiked"}]}
    assert plain["data"]["records"] == content["data"]["records"] and receiver.on("/jobs-only") == []


def test_content_is_not_stored_when_nobody_opted_in() -> None:
    tenant = make_tenant()
    make_endpoint(tenant, "http://127.0.0.1:9/a")
    event = emit(tenant, "memory.created", {"records": []}, {"records": [{"text": "private diary"}]})
    assert event is not None and event.content is None


def test_an_endpoint_only_receives_events_after_its_creation_and_of_its_organization(
    pipeline: Pipeline, receiver: Receiver
) -> None:
    a, b = make_tenant(), make_tenant()
    make_endpoint(a, receiver.url("/a"))
    emit(a)
    make_endpoint(b, receiver.url("/b"))
    pipeline.run_until(lambda: receiver.on("/a"))
    emit(b)
    pipeline.run_until(lambda: receiver.on("/b"))
    assert len(receiver.on("/a")) == 1 and len(receiver.on("/b")) == 1
    assert (
        json.loads(receiver.on("/b")[0].body)["data"]["job_id"]
        != json.loads(receiver.on("/a")[0].body)["data"]["job_id"]
    )


def test_addresses_are_checked_again_at_send_time(pipeline: Pipeline, receiver: Receiver, settings: Any) -> None:
    tenant = make_tenant()
    make_endpoint(tenant, receiver.url())  # accepted while loopback was allowed
    settings.WEBHOOKS_ALLOW_LOOPBACK = False
    emit(tenant)
    pipeline.run_until(lambda: _attempts(tenant))
    [attempt] = _attempts(tenant)
    assert attempt.status_code is None and attempt.error.startswith("unsafe_url")
    assert receiver.requests == []


def test_a_redirect_is_a_failed_attempt(pipeline: Pipeline, receiver: Receiver, fast_retries: list[float]) -> None:
    tenant = make_tenant()
    make_endpoint(tenant, receiver.url())
    receiver.script(Reply(307, {"Location": receiver.url("/elsewhere")}))
    emit(tenant)
    done = pipeline.run_until(lambda: _finished(tenant))
    assert [a.status_code for a in _attempts(tenant)] == [307, 200] and done.status == "succeeded"
    assert receiver.on("/elsewhere") == []


def test_disabled_endpoints_get_nothing_and_replay_needs_them_enabled(pipeline: Pipeline, receiver: Receiver) -> None:
    tenant = make_tenant()
    endpoint = make_endpoint(tenant, receiver.url()).endpoint
    emit(tenant)
    pipeline.pump(only=task_names.WEBHOOKS_DRAIN_ORGANIZATION)  # fanned out and queued, not sent yet
    webhook_endpoint_update(organization_id=tenant.id, endpoint_id=endpoint.id, enabled=False)
    assert emit(tenant) is None
    pipeline.tick()
    failed = _delivery(tenant)
    assert failed.status == "failed" and failed.attempt_count == 0 and receiver.requests == []
    assert failed.failure_reason == "The endpoint was disabled before this delivery succeeded."

    webhook_endpoint_update(organization_id=tenant.id, endpoint_id=endpoint.id, enabled=True)
    webhook_delivery_replay(organization_id=tenant.id, delivery_id=failed.id)
    done = pipeline.run_until(lambda: _finished(tenant))
    assert done.status == "succeeded" and len(receiver.requests) == 1
