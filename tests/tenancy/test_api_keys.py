from __future__ import annotations

import threading
import time
import uuid
from datetime import timedelta

from django.db import connection, connections
from django.utils import timezone

from apps.tenancy.models import ApiKey
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant


def _key_row(tenant, secret: str) -> ApiKey:  # type: ignore[no-untyped-def]
    with organization_scope(tenant.id):
        return ApiKey.objects.get(lookup_id=secret[len("mx_live_") :][:12])


def test_key_is_shown_once_and_stored_only_as_hmac() -> None:
    tenant = make_tenant()
    response = tenant.client().post("/v1/api-keys", {"name": "ci", "scopes": ["memories:read"]}, format="json")
    assert response.status_code == 201
    secret = response.json()["secret"]
    assert secret.startswith("mx_live_")
    row = _key_row(tenant, secret)
    assert secret not in (row.key_hash, row.lookup_id) and len(row.key_hash) == 64
    listed = tenant.client().get("/v1/api-keys").content.decode()
    assert secret not in listed and row.lookup_id in listed


def test_invalid_scopes_are_a_clear_400_and_create_nothing() -> None:
    tenant = make_tenant()
    response = tenant.client().post("/v1/api-keys", {"name": "x", "scopes": ["root"]}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"
    assert "scopes" in response.json()["error"]["details"]
    with organization_scope(tenant.id):
        assert ApiKey.objects.count() == 1


def test_revocation_takes_effect_on_the_next_request() -> None:
    tenant = make_tenant()
    secret = tenant.issue_key(["memories:read", "admin"])
    client = tenant.client(secret)
    assert client.get("/v1/subjects").status_code == 200
    row = _key_row(tenant, secret)
    assert tenant.client().post(f"/v1/api-keys/{row.id}/revoke").status_code == 200
    response = client.get("/v1/subjects")
    assert response.status_code == 401 and "revoked" in response.json()["error"]["message"]


def test_last_used_at_is_recorded() -> None:
    tenant = make_tenant()
    secret = tenant.issue_key(["memories:read"])
    assert _key_row(tenant, secret).last_used_at is None
    tenant.client(secret).get("/v1/subjects")
    used = _key_row(tenant, secret).last_used_at
    assert used is not None and timezone.now() - used < timedelta(seconds=30)


def test_rotation_keeps_the_old_key_for_the_overlap_only() -> None:
    tenant = make_tenant()
    old_secret = tenant.issue_key(["memories:read", "admin"])
    old = _key_row(tenant, old_secret)
    response = tenant.client().post(f"/v1/api-keys/{old.id}/rotate", {"overlap_seconds": 3600}, format="json")
    assert response.status_code == 201
    new_secret = response.json()["secret"]
    assert response.json()["api_key"]["rotated_from"] == str(old.id)
    assert response.json()["api_key"]["scopes"] == ["admin", "memories:read"]
    # Both work during the overlap.
    assert tenant.client(old_secret).get("/v1/subjects").status_code == 200
    assert tenant.client(new_secret).get("/v1/subjects").status_code == 200
    expires = _key_row(tenant, old_secret).expires_at
    assert expires is not None and timedelta(minutes=59) < expires - timezone.now() <= timedelta(hours=1)
    # After the overlap the old key is refused and the new one still works.
    with organization_scope(tenant.id):
        ApiKey.objects.filter(id=old.id).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert tenant.client(old_secret).get("/v1/subjects").status_code == 401
    assert tenant.client(new_secret).get("/v1/subjects").status_code == 200


def test_per_key_rate_limit_answers_429_with_retry_after() -> None:
    tenant = make_tenant()
    limited = tenant.issue_key(["memories:read"], rate_limit=3)
    client = tenant.client(limited)
    statuses = [client.get("/v1/subjects").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    response = client.get("/v1/subjects")
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "throttled"
    assert 1 <= int(response.headers["Retry-After"]) <= 60
    # Another key of the same organization is not affected.
    assert tenant.client().get("/v1/subjects").status_code == 200


def test_organization_quota_answers_429_until_next_month() -> None:
    tenant = make_tenant(monthly_request_quota=2)
    other_key = tenant.issue_key(["memories:read"])
    assert tenant.client().get("/v1/subjects").status_code == 200
    assert tenant.client(other_key).get("/v1/subjects").status_code == 200
    response = tenant.client(other_key).get("/v1/subjects")
    assert response.status_code == 429
    assert int(response.headers["Retry-After"]) > 0
    # A different organization has its own quota.
    assert make_tenant().client().get("/v1/subjects").status_code == 200


def _successors(tenant, api_key_id) -> list[ApiKey]:  # type: ignore[no-untyped-def]
    with organization_scope(tenant.id):
        return list(ApiKey.objects.filter(rotated_from_id=api_key_id))


def _key_count(tenant) -> int:  # type: ignore[no-untyped-def]
    with organization_scope(tenant.id):
        return ApiKey.objects.count()


def test_rotating_an_already_rotated_key_is_a_409_naming_its_successor() -> None:
    tenant = make_tenant()
    old = _key_row(tenant, tenant.issue_key(["memories:read"]))
    first = tenant.client().post(f"/v1/api-keys/{old.id}/rotate", {"overlap_seconds": 600}, format="json")
    assert first.status_code == 201
    successor = first.json()["api_key"]["id"]
    count = _key_count(tenant)
    again = tenant.client().post(f"/v1/api-keys/{old.id}/rotate", {"overlap_seconds": 0}, format="json")
    assert again.status_code == 409, again.content
    error = again.json()["error"]
    assert error["code"] == "conflict" and error["details"] == {"successor_id": successor}
    assert successor in error["message"] and "rotate that key instead" in error["message"]
    assert _key_count(tenant) == count and [k.id for k in _successors(tenant, old.id)] == [uuid.UUID(successor)]
    # The refused call left the old key's overlap alone, and the chain goes on from the successor.
    with organization_scope(tenant.id):
        expires = ApiKey.objects.get(id=old.id).expires_at
    assert expires is not None and expires - timezone.now() > timedelta(minutes=9)
    onward = tenant.client().post(f"/v1/api-keys/{successor}/rotate", format="json")
    assert onward.status_code == 201 and onward.json()["api_key"]["rotated_from"] == successor


def test_concurrent_rotations_of_one_key_make_one_successor() -> None:
    tenant = make_tenant()
    old = _key_row(tenant, tenant.issue_key(["memories:read"]))
    statuses: list[int] = []
    errors: list[BaseException] = []

    def rotate() -> None:
        try:
            statuses.append(tenant.client().post(f"/v1/api-keys/{old.id}/rotate", format="json").status_code)
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=rotate) for _ in range(2)]
    # Hold the key's row so that both requests are in flight together before either can go on.
    with organization_scope(tenant.id):
        ApiKey.objects.select_for_update().get(id=old.id)
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 20
        while _waiting_on_locks() < len(threads):
            assert time.monotonic() < deadline, "the rotations never waited for the key's row"
            time.sleep(0.05)
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(statuses) == [201, 409]
    assert len(_successors(tenant, old.id)) == 1


def _waiting_on_locks() -> int:
    with connections["owner"].cursor() as cursor:
        cursor.execute("SELECT count(DISTINCT pid) FROM pg_locks WHERE NOT granted")
        return int(cursor.fetchone()[0])


def test_a_key_that_expires_in_the_past_is_a_400_and_creates_nothing() -> None:
    tenant = make_tenant()
    past = (timezone.now() - timedelta(minutes=5)).isoformat()
    response = tenant.client().post(
        "/v1/api-keys", {"name": "late", "scopes": ["memories:read"], "expires_at": past}, format="json"
    )
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "validation_error" and "expires_at" in error["details"]
    assert "not in the future" in error["message"] and "omit expires_at" in error["message"]
    assert _key_count(tenant) == 1
    future = (timezone.now() + timedelta(days=1)).isoformat()
    created = tenant.client().post(
        "/v1/api-keys", {"name": "later", "scopes": ["memories:read"], "expires_at": future}, format="json"
    )
    assert created.status_code == 201 and created.json()["api_key"]["expires_at"] is not None


def test_another_organizations_key_cannot_rotate_a_key() -> None:
    tenant = make_tenant()
    old = _key_row(tenant, tenant.issue_key(["memories:read"]))
    response = make_tenant().client().post(f"/v1/api-keys/{old.id}/rotate", format="json")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    assert _successors(tenant, old.id) == []
