"""Every route of the URLconf × every method × {no key, malformed, revoked, expired, every scope
set, another organization}.

The cases are generated from the URLconf, so a new route or method is covered as soon as it
exists: each (route, method) the view answers needs an entry in ``tests/authz.py`` (the request
to send and the scope it needs), HEAD is checked as GET, OPTIONS answers the allowed methods
only (ADR 0024), and every other method is a 405.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

import pytest
from rest_framework.test import APIClient

from apps.tenancy import keys
from tests.authz import ENDPOINTS, EXTRA_OBJECTS, Endpoint, organization_snapshot, tenant_objects, url_routes
from tests.factories import Tenant, make_tenant

UNDOCUMENTED = {"v1/schema", "v1/docs", "v1/docs/swagger"}
METHODS = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE", "PROPFIND")
READS = ("GET", "HEAD", "OPTIONS")
SCOPE_SETS = [
    frozenset(combination)
    for n in range(1, len(keys.SCOPES) + 1)
    for combination in itertools.combinations(keys.SCOPES, n)
]


def _handlers(view_class: Any) -> list[str]:
    return [m.upper() for m in ("get", "post", "put", "patch", "delete") if hasattr(view_class, m)]


def _registered(route: str, method: str) -> Endpoint | None:
    """The registry's request for ``method`` on the URLconf ``route`` (any method when None)."""
    shape = re.compile("^" + re.sub(r"<[^>]+>", "[^/]+", route) + "$")
    for endpoint in ENDPOINTS:
        path = re.sub(r"\{[a-z_]+\}", "sample", endpoint.route.lstrip("/").split("?")[0])
        if method in (endpoint.method, "*") and shape.match(path):
            return endpoint
    return None


@dataclass(frozen=True)
class Route:
    route: str
    view_class: Any
    handlers: tuple[str, ...]

    @property
    def allowed(self) -> tuple[str, ...]:
        return (*self.handlers, *(("HEAD",) if "GET" in self.handlers else ()), "OPTIONS")

    def endpoint(self, method: str) -> Endpoint:
        """What to send: HEAD sends GET's request; OPTIONS and refused methods any of the route's."""
        declared = "GET" if method == "HEAD" else method
        wanted = declared if declared in self.handlers else "*"
        endpoint = _registered(self.route, wanted)
        assert endpoint is not None, f"{wanted} {self.route} has no entry in tests/authz.py"
        return endpoint


ROUTES = [
    Route(route, callback.view_class, tuple(_handlers(callback.view_class)))
    for route, callback in url_routes()
    if route.startswith("v1/") and route not in UNDOCUMENTED
]


def _client(header: str | None) -> APIClient:
    client = APIClient()
    if header is not None:
        client.credentials(HTTP_AUTHORIZATION=header)
    return client


def _call(client: APIClient, method: str, endpoint: Endpoint, objects: dict[str, str]) -> Any:
    url = endpoint.url(objects)
    if method in READS:
        return getattr(client, method.lower())(url)
    if method != endpoint.method:  # a method the route does not answer: no body to speak of
        return client.generic(method, url)
    return getattr(client, method.lower())(url, endpoint.body, format="json")


def _code(response: Any, method: str) -> str | None:
    """The error code (a HEAD answer has no body to read it from)."""
    return None if method == "HEAD" else response.json()["error"]["code"]


@pytest.fixture
def owner() -> tuple[Tenant, dict[str, str]]:
    tenant = make_tenant("matrix-owner")
    objects = tenant_objects(tenant)
    for extra in EXTRA_OBJECTS:
        objects.update(extra(tenant))
    return tenant, objects


def _unusable_keys(tenant: Tenant) -> dict[str, tuple[str | None, str]]:
    from apps.tenancy.models import ApiKey
    from apps.tenancy.services import api_key_revoke

    revoked = tenant.issue_key(list(keys.SCOPES))
    api_key = ApiKey.objects.dangerously_across_organizations().get(lookup_id=revoked[len("mx_live_") :][:12])
    api_key_revoke(organization_id=tenant.id, api_key_id=api_key.id)
    expired = tenant.issue_expired_key(list(keys.SCOPES))
    forged = revoked[:-4] + "AAAA"
    return {
        "no key": (None, "not_authenticated"),
        "not bearer": ("Basic dXNlcjpwYXNz", "authentication_failed"),
        "malformed": ("Bearer mx_live_short", "authentication_failed"),
        "forged secret": (f"Bearer {forged}", "authentication_failed"),
        "revoked": (f"Bearer {revoked}", "authentication_failed"),
        "expired": (f"Bearer {expired}", "authentication_failed"),
    }


def test_routes_were_found() -> None:
    assert len(ROUTES) > 40 and all(route.handlers for route in ROUTES)


def test_every_handler_is_in_the_registry_with_the_scope_it_declares() -> None:
    problems = []
    for route in ROUTES:
        for method in (*route.handlers, "HEAD") if "GET" in route.handlers else route.handlers:
            endpoint = _registered(route.route, "GET" if method == "HEAD" else method)
            if endpoint is None:
                problems.append((method, route.route, "no entry in tests/authz.py"))
            elif route.view_class.scopes_for(method) != {endpoint.scope}:
                problems.append((method, route.route, route.view_class.scopes_for(method), endpoint.scope))
    assert problems == []


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.route)
def test_every_method_and_scope_set(route: Route, owner: tuple[Tenant, dict[str, str]]) -> None:
    tenant, objects = owner
    unusable = _unusable_keys(tenant)
    scoped = {scopes: tenant.issue_key(sorted(scopes)) for scopes in SCOPE_SETS}
    intruder = make_tenant("matrix-intruder")
    problems: list[tuple[Any, ...]] = []

    def expect(case: str, method: str, response: Any, status: int, code: str | None = None) -> None:
        if response.status_code != status or (code and _code(response, method) not in (None, code)):
            problems.append((method, case, response.status_code, response.content[:200]))

    # Refusals first: none of them may change anything.
    before = organization_snapshot(tenant.id)
    for method in METHODS:
        endpoint = route.endpoint(method)
        for case, (header, code) in unusable.items():
            response = _call(_client(header), method, endpoint, objects)
            expect(case, method, response, 401, code)
            if not response.headers.get("WWW-Authenticate", "").startswith("Bearer"):
                problems.append((method, case, "no WWW-Authenticate: Bearer"))
        if method not in route.allowed:
            for who, client in (("owner", tenant.client()), ("intruder", intruder.client())):
                response = _call(client, method, endpoint, objects)
                expect(f"{who}, not allowed", method, response, 405, "method_not_allowed")
            continue
        required = route.view_class.scopes_for(method)
        for scopes, key in scoped.items():
            if not required <= scopes:
                response = _call(_client(f"Bearer {key}"), method, endpoint, objects)
                expect(f"scopes {sorted(scopes)}", method, response, 403, "permission_denied")
        response = _call(intruder.client(), method, endpoint, objects)
        body = response.content.decode()
        if str(tenant.id) in body or [v for v in objects.values() if re.fullmatch(r"[0-9a-f-]{36}", v) and v in body]:
            problems.append((method, "intruder", "leaked an id of the owner", body[:200]))
        if method == "OPTIONS":
            expect("intruder", method, response, 200)
        elif method in getattr(route.view_class, "subject_created_on", ()):
            # A write to an external id the intruder does not have creates its own subject
            # (ADR 0039): a success in its organization, the owner's rows untouched (below).
            if response.status_code >= 300:
                problems.append((method, "intruder, first write", response.status_code, body[:200]))
        elif "{" in endpoint.route:
            expect("intruder", method, response, 404, "not_found")
        elif response.status_code >= 400:
            problems.append((method, "intruder, own collection", response.status_code, body[:200]))
    if organization_snapshot(tenant.id) != before:
        problems.append(("*", "a refused call changed the owner's rows"))

    # Then what the owner may do: reads with every scope set that holds the scope, each
    # write once with exactly the scope it needs (DELETE last: it may remove the object).
    for method in [m for m in METHODS if m in route.allowed]:
        endpoint = route.endpoint(method)
        required = route.view_class.scopes_for(method)
        holders = [key for scopes, key in scoped.items() if required <= scopes] if method in READS else []
        for key in holders or [tenant.issue_key([endpoint.scope])]:
            response = _call(_client(f"Bearer {key}"), method, endpoint, objects)
            if response.status_code >= 300:
                problems.append((method, "owner with the scope", response.status_code, response.content[:200]))
        if method == "OPTIONS" and response.json() != {"methods": list(route.allowed)}:
            problems.append((method, "owner", response.json()))
    assert problems == []
