"""The registry of every API endpoint for the authorization matrix.

Each capability adds its endpoints here; ``test_every_endpoint_is_in_the_matrix`` fails when
a route exists that the matrix does not cover.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from apps.jobs.services import job_create
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant


@dataclass(frozen=True)
class Endpoint:
    method: str
    route: str  # URL with {placeholders} filled from the owning tenant's objects
    scope: str
    body: dict[str, Any] = field(default_factory=dict)

    def url(self, objects: dict[str, str]) -> str:
        return self.route.format(**objects)


def tenant_objects(tenant: Tenant) -> dict[str, str]:
    """One of each addressable object for ``tenant``; the keys are the route placeholders."""
    subject = tenant.subject("matrix-subject")
    with organization_scope(tenant.id):
        job = job_create(organization_id=tenant.id, kind="graph.check")
    key_id = tenant.issue_key(["memories:read"])
    from apps.tenancy.models import ApiKey

    with organization_scope(tenant.id):
        api_key = ApiKey.objects.get(lookup_id=key_id[len("mx_live_") :][:12])
    return {"subject": subject.external_id, "job": str(job.id), "api_key": str(api_key.id)}


ENDPOINTS: list[Endpoint] = [
    Endpoint("GET", "/v1/subjects", "memories:read"),
    Endpoint("POST", "/v1/subjects", "memories:write", {"external_id": "new-subject", "kind": "user"}),
    Endpoint("GET", "/v1/subjects/{subject}", "memories:read"),
    Endpoint("GET", "/v1/api-keys", "admin"),
    Endpoint("POST", "/v1/api-keys", "admin", {"name": "k", "scopes": ["memories:read"]}),
    Endpoint("POST", "/v1/api-keys/{api_key}/revoke", "admin"),
    Endpoint("POST", "/v1/api-keys/{api_key}/rotate", "admin", {"overlap_seconds": 60}),
    Endpoint("GET", "/v1/jobs/{job}", "memories:read"),
    Endpoint("POST", "/v1/graph/check", "admin"),
]

# Object factories later capabilities register to extend ``tenant_objects``.
EXTRA_OBJECTS: list[Callable[[Tenant], dict[str, str]]] = []
