from __future__ import annotations

from datetime import timedelta

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
