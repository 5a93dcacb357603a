"""Signatures checked by the Standard Webhooks reference library on what a real local receiver got."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import pytest
import standardwebhooks.webhooks as reference
from standardwebhooks import Webhook, WebhookVerificationError

from apps.tenancy.scope import organization_scope
from apps.webhooks import signing
from apps.webhooks.models import WebhookSecret
from tests.factories import make_tenant
from tests.webhooks.support import Pipeline, Receiver, emit


def _create(tenant, url: str) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    response = tenant.client().post("/v1/webhook-endpoints", {"url": url, "event_types": ["*"]}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    return body["endpoint"]["id"], body["secret"]


def _deliver_one(tenant, pipeline: Pipeline, receiver: Receiver) -> tuple[bytes, dict[str, str]]:  # type: ignore[no-untyped-def]
    before = len(receiver.requests)
    event = emit(tenant)
    assert event is not None
    pipeline.run_until(lambda: len(receiver.requests) > before)
    request = receiver.requests[-1]
    assert request.headers["webhook-id"] == str(event.id)
    return request.body, request.headers


def test_secret_format() -> None:
    secret = signing.secret_generate()
    assert secret.startswith("whsec_") and len(base64.b64decode(secret[6:])) == 32
    with pytest.raises(ValueError):
        signing.secret_generate(16)
    with pytest.raises(ValueError):
        signing.secret_key("whsec_" + base64.b64encode(b"short").decode())


def test_a_delivered_message_verifies_and_a_changed_body_does_not(pipeline: Pipeline, receiver: Receiver) -> None:
    tenant = make_tenant()
    _, secret = _create(tenant, receiver.url())
    body, headers = _deliver_one(tenant, pipeline, receiver)

    assert set(headers) >= {"webhook-id", "webhook-timestamp", "webhook-signature"}
    assert headers["webhook-signature"].startswith("v1,") and " " not in headers["webhook-signature"]
    message = Webhook(secret).verify(body, headers)
    assert message["type"] == "job.failed" and headers["content-type"] == "application/json"

    changed = body.replace(b"job.failed", b"job.failex")
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(changed, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(signing.secret_generate()).verify(body, headers)


def test_a_timestamp_more_than_five_minutes_old_fails(
    pipeline: Pipeline, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = make_tenant()
    _, secret = _create(tenant, receiver.url())
    body, headers = _deliver_one(tenant, pipeline, receiver)
    Webhook(secret).verify(body, headers)

    class SixMinutesLater(datetime):
        @classmethod
        def now(cls, tz=None):  # type: ignore[no-untyped-def, override]
            return datetime.now(tz or UTC) + timedelta(minutes=5, seconds=1)

    monkeypatch.setattr(reference, "datetime", SixMinutesLater)
    with pytest.raises(WebhookVerificationError, match="too old"):
        Webhook(secret).verify(body, headers)


def test_during_a_rotation_overlap_both_secrets_verify_and_after_it_only_the_new_one(
    pipeline: Pipeline, receiver: Receiver
) -> None:
    tenant = make_tenant()
    endpoint_id, old = _create(tenant, receiver.url())
    rotated = tenant.client().post(
        f"/v1/webhook-endpoints/{endpoint_id}/rotate-secret", {"overlap_seconds": 3600}, format="json"
    )
    assert rotated.status_code == 201, rotated.content
    new = rotated.json()["secret"]
    assert new != old and rotated.json()["previous_secret_expires_at"]

    body, headers = _deliver_one(tenant, pipeline, receiver)
    assert len(headers["webhook-signature"].split(" ")) == 2
    Webhook(old).verify(body, headers)
    Webhook(new).verify(body, headers)

    # The overlap ends: the old secret no longer signs.
    with organization_scope(tenant.id):
        WebhookSecret.objects.filter(expires_at__isnull=False).update(
            expires_at=datetime.now(UTC) - timedelta(seconds=1)
        )
    body, headers = _deliver_one(tenant, pipeline, receiver)
    assert len(headers["webhook-signature"].split(" ")) == 1
    Webhook(new).verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(old).verify(body, headers)


def test_rotation_without_overlap_retires_the_old_secret_at_once(pipeline: Pipeline, receiver: Receiver) -> None:
    tenant = make_tenant()
    endpoint_id, old = _create(tenant, receiver.url())
    new = (
        tenant.client()
        .post(f"/v1/webhook-endpoints/{endpoint_id}/rotate-secret", {"overlap_seconds": 0}, format="json")
        .json()["secret"]
    )
    body, headers = _deliver_one(tenant, pipeline, receiver)
    Webhook(new).verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(old).verify(body, headers)
