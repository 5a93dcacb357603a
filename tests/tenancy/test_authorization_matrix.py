"""Every endpoint × {no key, malformed, revoked, expired, missing scope, another organization}."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.db import connections
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from rest_framework.test import APIClient

from apps.tenancy import keys
from tests.authz import ENDPOINTS, EXTRA_OBJECTS, Endpoint, tenant_objects
from tests.factories import Tenant, make_tenant

UNDOCUMENTED = {"v1/schema", "v1/docs"}


def _snapshot(organization_id: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every row the organization owns, read as the owner (beneath RLS)."""
    snapshot: dict[str, list[tuple[Any, ...]]] = {}
    with connections["owner"].cursor() as cursor:
        cursor.execute(
            """SELECT c.relname, CASE WHEN c.relname = 'tenancy_organization' THEN 'id' ELSE 'organization_id' END
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relrowsecurity"""
        )
        for table, column in cursor.fetchall():
            cursor.execute(f'SELECT * FROM "{table}" WHERE "{column}" = %s ORDER BY 1', [organization_id])
            snapshot[table] = [tuple(str(v) for v in row) for row in cursor.fetchall()]
    return snapshot


def _call(client: APIClient, endpoint: Endpoint, objects: dict[str, str]) -> Any:
    if endpoint.method == "GET":
        return client.get(endpoint.url(objects))
    return getattr(client, endpoint.method.lower())(endpoint.url(objects), endpoint.body, format="json")


@pytest.fixture
def owner() -> tuple[Tenant, dict[str, str]]:
    tenant = make_tenant("matrix-owner")
    objects = tenant_objects(tenant)
    for extra in EXTRA_OBJECTS:
        objects.update(extra(tenant))
    return tenant, objects


def _client(key: str | None) -> APIClient:
    client = APIClient()
    if key is not None:
        client.credentials(HTTP_AUTHORIZATION=key)
    return client


def _unusable_keys(tenant: Tenant, endpoint: Endpoint) -> dict[str, tuple[str | None, int, str]]:
    from apps.tenancy.models import ApiKey
    from apps.tenancy.services import api_key_revoke

    revoked = tenant.issue_key(list(keys.SCOPES))
    revoked_lookup = revoked[len("mx_live_") :][:12]
    api_key = ApiKey.objects.dangerously_across_organizations().get(lookup_id=revoked_lookup)
    api_key_revoke(organization_id=tenant.id, api_key_id=api_key.id)
    expired = tenant.issue_key(list(keys.SCOPES), expires_at=timezone.now() - timedelta(seconds=1))
    lacking = tenant.issue_key([s for s in keys.SCOPES if s != endpoint.scope])
    forged = revoked[:-4] + "AAAA"
    return {
        "no key": (None, 401, "not_authenticated"),
        "not bearer": ("Basic dXNlcjpwYXNz", 401, "authentication_failed"),
        "malformed": ("Bearer mx_live_short", 401, "authentication_failed"),
        "forged secret": (f"Bearer {forged}", 401, "authentication_failed"),
        "revoked": (f"Bearer {revoked}", 401, "authentication_failed"),
        "expired": (f"Bearer {expired}", 401, "authentication_failed"),
        "missing scope": (f"Bearer {lacking}", 403, "permission_denied"),
    }


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: f"{e.method} {e.route}")
def test_unusable_keys_are_refused_and_change_nothing(endpoint: Endpoint, owner: tuple[Tenant, dict[str, str]]) -> None:
    tenant, objects = owner
    cases = _unusable_keys(tenant, endpoint)
    before = _snapshot(tenant.id)
    for case, (header, status, code) in cases.items():
        response = _call(_client(header), endpoint, objects)
        assert response.status_code == status, (case, response.content)
        assert response.json()["error"]["code"] == code, case
        if status == 401:
            assert response.headers.get("WWW-Authenticate", "").startswith("Bearer"), case
    assert _snapshot(tenant.id) == before


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: f"{e.method} {e.route}")
def test_another_organizations_key_neither_reads_nor_changes(
    endpoint: Endpoint, owner: tuple[Tenant, dict[str, str]]
) -> None:
    tenant, objects = owner
    intruder = make_tenant("matrix-intruder")
    before = _snapshot(tenant.id)
    response = _call(intruder.client(), endpoint, objects)
    assert _snapshot(tenant.id) == before
    body = response.content.decode()
    assert str(tenant.id) not in body
    leaked = [v for v in objects.values() if re.fullmatch(r"[0-9a-f-]{36}", v) and v in body]
    assert leaked == []
    if "{" in endpoint.route:
        assert response.status_code == 404, response.content
        assert response.json()["error"]["code"] == "not_found"
    else:
        assert response.status_code < 400, response.content


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: f"{e.method} {e.route}")
def test_the_owners_key_with_the_scope_succeeds(endpoint: Endpoint, owner: tuple[Tenant, dict[str, str]]) -> None:
    tenant, objects = owner
    key = tenant.issue_key([endpoint.scope])
    response = _call(_client(f"Bearer {key}"), endpoint, objects)
    assert response.status_code < 300, response.content


def _routes(resolver: URLResolver, prefix: str = "") -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    for pattern in resolver.url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            found += _routes(pattern, route)
        elif isinstance(pattern, URLPattern):
            found.append((route, pattern.callback))
    return found


def test_every_endpoint_is_in_the_matrix() -> None:
    # Each matrix entry as a concrete path: placeholders become a sample segment.
    concrete = [(e.method, re.sub(r"\{[a-z_]+\}", "sample", e.route.lstrip("/").split("?")[0])) for e in ENDPOINTS]
    missing = []
    for route, callback in _routes(get_resolver()):
        if not route.startswith("v1/") or route in UNDOCUMENTED:
            continue
        view_class = getattr(callback, "view_class", None)
        shape = re.compile("^" + re.sub(r"<[^>]+>", "[^/]+", route) + "$")
        for method in (m.upper() for m in ("get", "post", "put", "patch", "delete") if hasattr(view_class, m)):
            if not any(m == method and shape.match(path) for m, path in concrete):
                missing.append((method, route))
    assert missing == []
