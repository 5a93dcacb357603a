"""The webhook endpoints API: CRUD, secrets shown once and sealed at rest, bad input refused
with nothing written, deliveries with attempts, replay, another organization kept out."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from django.db import connections

from apps.webhooks.events import EVENT_TYPES
from tests.factories import Tenant, make_tenant
from tests.webhooks.support import Pipeline, Receiver, Reply, emit, make_endpoint

WEBHOOK_TABLES = ("webhooks_endpoint", "webhooks_secret", "webhooks_event", "webhooks_delivery", "webhooks_attempt")


def _rows() -> dict[str, int]:
    """Rows per webhook table and audit entries, counted as the owner (beneath RLS)."""
    counts = {}
    with connections["owner"].cursor() as cursor:
        for table in (*WEBHOOK_TABLES, "audit_entry"):
            cursor.execute(f"SELECT count(*) FROM {table}")
            counts[table] = cursor.fetchone()[0]
    return counts


def _create(tenant: Tenant, **body: Any) -> Any:
    return tenant.client().post(
        "/v1/webhook-endpoints", {"url": "http://127.0.0.1:9/in", "event_types": ["*"], **body}, format="json"
    )


def test_create_read_update_delete() -> None:
    tenant = make_tenant()
    created = _create(
        tenant,
        event_types=["memory.created", "job.failed", "memory.created"],
        include_content_for=["memory.created"],
        description="CRM sync",
    )
    assert created.status_code == 201, created.content
    body = created.json()
    endpoint = body["endpoint"]
    assert body["secret"].startswith("whsec_") and 24 <= len(base64.b64decode(body["secret"][6:])) <= 64
    assert body["previous_secret_expires_at"] is None
    assert endpoint["event_types"] == ["job.failed", "memory.created"] and endpoint["enabled"] is True
    assert endpoint["include_content_for"] == ["memory.created"] and endpoint["description"] == "CRM sync"

    client = tenant.client()
    listed = client.get("/v1/webhook-endpoints").json()["results"]
    assert [e["id"] for e in listed] == [endpoint["id"]]
    fetched = client.get(f"/v1/webhook-endpoints/{endpoint['id']}")
    assert fetched.status_code == 200 and "secret" not in fetched.json()

    patched = client.patch(
        f"/v1/webhook-endpoints/{endpoint['id']}", {"event_types": ["*"], "enabled": False}, format="json"
    ).json()
    assert patched["event_types"] == ["*"] and patched["enabled"] is False
    assert patched["disabled_reason"] == "Disabled by the organization." and patched["disabled_at"]
    enabled = client.patch(f"/v1/webhook-endpoints/{endpoint['id']}", {"enabled": True}, format="json").json()
    assert enabled["enabled"] is True and enabled["disabled_reason"] == "" and enabled["disabled_at"] is None

    assert client.delete(f"/v1/webhook-endpoints/{endpoint['id']}").status_code == 204
    assert client.get(f"/v1/webhook-endpoints/{endpoint['id']}").status_code == 404
    assert _rows()["webhooks_secret"] == 0


def test_the_secret_is_stored_only_sealed() -> None:
    tenant = make_tenant()
    secret = _create(tenant).json()["secret"]
    with connections["owner"].cursor() as cursor:
        cursor.execute("SELECT t::text FROM webhooks_secret t")
        stored = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("SELECT encode(ciphertext, 'base64') FROM webhooks_secret")
        sealed = cursor.fetchone()[0]
    key = base64.b64decode(secret[6:])
    assert secret not in stored and secret[6:] not in stored and key.hex() not in stored
    assert sealed and key not in base64.b64decode(sealed)


def test_event_types_are_listed() -> None:
    listed = make_tenant().client().get("/v1/webhook-event-types").json()["results"]
    assert {"memory.created", "memory.deleted", "job.failed", "subject.erased"} <= {e["type"] for e in listed}
    assert sorted(e["type"] for e in listed) == sorted(EVENT_TYPES)
    assert all(e["description"] == EVENT_TYPES[e["type"]] for e in listed)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "ftp://127.0.0.1:9/in"}, "url"),
        ({"url": "https://user:secret@127.0.0.1:9/in"}, "url"),
        ({"url": "https://10.0.0.8/in"}, "url"),
        ({"url": "https://169.254.169.254/latest/meta-data/"}, "url"),
        ({"url": "https://[::ffff:127.0.0.1]/in"}, "url"),
        ({"url": "not a url"}, "url"),
        ({"event_types": []}, "event_types"),
        ({"event_types": ["memory.created", "memory.purged"]}, "event_types"),
        ({"event_types": "memory.created"}, "event_types"),
        ({"include_content_for": ["everything"]}, "include_content_for"),
        ({"description": "x" * 501}, "description"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_written(body: dict[str, Any], field: str) -> None:
    tenant = make_tenant()
    before = _rows()
    response = _create(tenant, **body)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "validation_error" and list(error["details"]) == [field]
    assert _rows() == before


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1:9/in", "must use https"),
        ("https://127.0.0.1:9/in", "loopback"),
        ("https://[::1]:9/in", "loopback"),
    ],
)
def test_without_the_loopback_allowance_plain_http_and_loopback_are_refused(
    url: str, reason: str, settings: Any
) -> None:
    settings.WEBHOOKS_ALLOW_LOOPBACK = False  # as in production
    tenant = make_tenant()
    before = _rows()
    response = _create(tenant, url=url)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "validation_error" and reason in error["details"]["url"][0]
    assert _rows() == before


def test_bad_changes_are_refused_and_nothing_changes(pipeline: Pipeline) -> None:
    tenant = make_tenant()
    endpoint_id = _create(tenant).json()["endpoint"]["id"]
    client = tenant.client()
    before = (_rows(), client.get(f"/v1/webhook-endpoints/{endpoint_id}").json())
    for body in ({}, {"url": "https://127.0.0.1.nip.io@10.0.0.1/"}, {"event_types": ["nope"]}, {"enabled": "maybe"}):
        response = client.patch(f"/v1/webhook-endpoints/{endpoint_id}", body, format="json")
        assert response.status_code == 400, (body, response.content)
    rotate = client.post(f"/v1/webhook-endpoints/{endpoint_id}/rotate-secret", {"overlap_seconds": -1}, format="json")
    assert rotate.status_code == 400
    assert (_rows(), client.get(f"/v1/webhook-endpoints/{endpoint_id}").json()) == before


def test_ping_lists_deliveries_with_attempts_and_pages(pipeline: Pipeline, receiver: Receiver) -> None:
    tenant = make_tenant()
    client = tenant.client()
    endpoint_id = _create(tenant, url=receiver.url()).json()["endpoint"]["id"]
    receiver.script(Reply(500, body=b"not now"))
    pings = [client.post(f"/v1/webhook-endpoints/{endpoint_id}/ping") for _ in range(3)]
    assert all(p.status_code == 202 for p in pings)
    assert pings[0].json()["event_type"] == "webhook.ping" and pings[0].json()["status"] == "pending"
    pipeline.pump()

    first = client.get(f"/v1/webhook-endpoints/{endpoint_id}/deliveries?limit=2").json()
    assert len(first["results"]) == 2 and first["next_cursor"]
    second = client.get(f"/v1/webhook-endpoints/{endpoint_id}/deliveries?limit=2&cursor={first['next_cursor']}").json()
    assert len(second["results"]) == 1 and second["next_cursor"] is None
    deliveries = first["results"] + second["results"]
    assert [d["id"] for d in deliveries] == [p.json()["id"] for p in reversed(pings)]  # newest first
    attempts = sorted((a for d in deliveries for a in d["attempts"]), key=lambda a: a["status_code"])
    assert [a["status_code"] for a in attempts] == [200, 200, 500]
    assert attempts[2]["response_snippet"] == "not now" and attempts[2]["number"] == 1
    failed = client.get(f"/v1/webhook-endpoints/{endpoint_id}/deliveries?status=pending").json()["results"]
    assert len(failed) == 1 and failed[0]["next_attempt_at"]
    assert client.get(f"/v1/webhook-endpoints/{endpoint_id}/deliveries?cursor=garbage").status_code == 400


def test_replay_of_a_delivery_still_scheduled_or_of_a_disabled_endpoint_conflicts(pipeline: Pipeline) -> None:
    tenant = make_tenant()
    client = tenant.client()
    endpoint_id = _create(tenant).json()["endpoint"]["id"]
    delivery_id = client.post(f"/v1/webhook-endpoints/{endpoint_id}/ping").json()["id"]
    scheduled = client.post(f"/v1/webhook-deliveries/{delivery_id}/replay")
    assert scheduled.status_code == 409 and "still scheduled" in scheduled.json()["error"]["message"]
    client.patch(f"/v1/webhook-endpoints/{endpoint_id}", {"enabled": False}, format="json")
    disabled = client.post(f"/v1/webhook-deliveries/{delivery_id}/replay")
    assert disabled.status_code == 409 and "disabled" in disabled.json()["error"]["message"]
    assert client.post(f"/v1/webhook-endpoints/{endpoint_id}/ping").status_code == 409
    client.patch(f"/v1/webhook-endpoints/{endpoint_id}", {"enabled": True}, format="json")
    replayed = client.post(f"/v1/webhook-deliveries/{delivery_id}/replay")
    assert replayed.status_code == 202 and replayed.json()["status"] == "pending"


def test_the_number_of_endpoints_is_limited(settings: Any) -> None:
    settings.WEBHOOKS_MAX_ENDPOINTS_PER_ORGANIZATION = 2
    tenant = make_tenant()
    assert [_create(tenant).status_code for _ in range(3)] == [201, 201, 409]


def test_another_organization_neither_sees_nor_triggers_them(pipeline: Pipeline, receiver: Receiver) -> None:
    owner, intruder = make_tenant(), make_tenant()
    endpoint_id = make_endpoint(owner, receiver.url()).endpoint.id
    emit(owner)
    pipeline.pump()
    delivery_id = owner.client().get(f"/v1/webhook-endpoints/{endpoint_id}/deliveries").json()["results"][0]["id"]
    before = _rows()
    client = intruder.client()
    assert client.get("/v1/webhook-endpoints").json() == {"results": [], "next_cursor": None}
    for method, path in [
        ("get", f"/v1/webhook-endpoints/{endpoint_id}"),
        ("patch", f"/v1/webhook-endpoints/{endpoint_id}"),
        ("delete", f"/v1/webhook-endpoints/{endpoint_id}"),
        ("post", f"/v1/webhook-endpoints/{endpoint_id}/ping"),
        ("post", f"/v1/webhook-endpoints/{endpoint_id}/rotate-secret"),
        ("get", f"/v1/webhook-endpoints/{endpoint_id}/deliveries"),
        ("get", f"/v1/webhook-deliveries/{delivery_id}"),
        ("post", f"/v1/webhook-deliveries/{delivery_id}/replay"),
    ]:
        response = getattr(client, method)(
            path, {"description": "mine now"} if method == "patch" else {}, format="json"
        )
        assert response.status_code == 404, (method, path, response.content)
    emit(intruder)  # the intruder's own events never reach the owner's endpoint
    pipeline.tick()
    after = _rows()
    assert after["webhooks_delivery"] == before["webhooks_delivery"] and len(receiver.requests) == 1


def test_writing_needs_the_admin_scope() -> None:
    tenant = make_tenant()
    key = tenant.issue_key(["memories:read", "memories:write"])
    response = tenant.client(key).post(
        "/v1/webhook-endpoints", {"url": "http://127.0.0.1:9/in", "event_types": ["*"]}, format="json"
    )
    assert response.status_code == 403 and response.json()["error"]["code"] == "permission_denied"
