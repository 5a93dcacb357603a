"""The registry of every API endpoint for the authorization matrix.

Each capability adds its endpoints here; ``test_every_endpoint_is_in_the_matrix`` fails when
a route exists that the matrix does not cover.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connections
from django.urls import URLPattern, URLResolver, get_resolver

from apps.graph import adapter
from apps.graph.services import index_chunk
from apps.jobs.services import job_create
from apps.memory.models import EpisodicEvent
from apps.tenancy.models import ApiKey
from apps.tenancy.scope import organization_scope
from apps.webhooks import services as webhook_services
from tests.factories import Tenant, complete_writes


def url_routes(resolver: URLResolver | None = None, prefix: str = "") -> list[tuple[str, Any]]:
    """Every route of the URLconf (``v1/subjects/<str:external_id>``) with its view."""
    found: list[tuple[str, Any]] = []
    for pattern in (resolver or get_resolver()).url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            found += url_routes(pattern, route)
        elif isinstance(pattern, URLPattern):
            found.append((route, pattern.callback))
    return found


def organization_snapshot(organization_id: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every row the organization owns, read as the owner (beneath RLS), but its request
    counters: they count each answered call, a refused one included, as usage and not as data."""
    snapshot: dict[str, list[tuple[Any, ...]]] = {}
    with connections["owner"].cursor() as cursor:
        cursor.execute(
            """SELECT c.relname, CASE WHEN c.relname = 'tenancy_organization' THEN 'id' ELSE 'organization_id' END
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relrowsecurity AND c.relname <> 'usage_counter'"""
        )
        for table, column in cursor.fetchall():
            cursor.execute(f'SELECT * FROM "{table}" WHERE "{column}" = %s ORDER BY 1', [organization_id])
            snapshot[table] = [tuple(str(v) for v in row) for row in cursor.fetchall()]
    return snapshot


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
    with organization_scope(tenant.id):
        api_key = ApiKey.objects.get(lookup_id=key_id[len("mx_live_") :][:12])
    written = tenant.write(
        subject.external_id,
        {
            "messages": [
                {
                    "role": "user",
                    "name": "Ana",
                    "content": "Yesterday I hiked Mount Tam with Leo. My password is Tr0ub4dor&3x",
                    "timestamp": "2024-03-02T10:00:00Z",
                }
            ]
        },
    )["records"]
    document = (
        tenant.client()
        .post(
            f"/v1/subjects/{subject.external_id}/memories",
            {"file": SimpleUploadedFile("notes.txt", b"Repotting: water first, then move the plant.", "text/plain")},
            format="multipart",
        )
        .json()["records"]
    )
    complete_writes(tenant.id)
    by_type = {r["type"]: r["id"] for r in [*written, *document]}
    with organization_scope(tenant.id):
        index_chunk(chunk_id=EpisodicEvent.objects.get(id=by_type["episodic"]).chunk_id)
        frame = adapter.cypher(
            organization_id=tenant.id, query="MATCH (f:Frame) RETURN f.frame_id LIMIT 1", params={}, returns=["f"]
        )
    return {
        "subject": subject.external_id,
        "job": str(job.id),
        "api_key": str(api_key.id),
        "episodic": by_type["episodic"],
        "resource": by_type["resource"],
        "vault": by_type["vault"],
        "frame": frame[0][0] if frame else "no-frame",
    }


ENDPOINTS: list[Endpoint] = [
    Endpoint("GET", "/v1/organization", "admin"),
    Endpoint("PATCH", "/v1/organization", "admin", {"subjects_created_on_write": True}),
    Endpoint("GET", "/v1/subjects", "memories:read"),
    Endpoint("POST", "/v1/subjects", "memories:write", {"external_id": "new-subject", "kind": "user"}),
    Endpoint("GET", "/v1/subjects/{subject}", "memories:read"),
    Endpoint("PATCH", "/v1/subjects/{subject}", "memories:write", {"display_name": "Ana Pereira"}),
    Endpoint("GET", "/v1/api-keys", "admin"),
    Endpoint("POST", "/v1/api-keys", "admin", {"name": "k", "scopes": ["memories:read"]}),
    Endpoint("POST", "/v1/api-keys/{api_key}/revoke", "admin"),
    Endpoint("POST", "/v1/api-keys/{api_key}/rotate", "admin", {"overlap_seconds": 60}),
    Endpoint("GET", "/v1/jobs", "memories:read"),
    Endpoint("GET", "/v1/jobs/{job}", "memories:read"),
    Endpoint("POST", "/v1/graph/check", "admin"),
    Endpoint("POST", "/v1/subjects/{subject}/search", "memories:read", {"query": "Where did Ana hike?"}),
    Endpoint("GET", "/v1/subjects/{subject}/graph/anchors", "memories:read"),
    Endpoint("GET", "/v1/subjects/{subject}/graph/frames", "memories:read"),
    Endpoint("GET", "/v1/subjects/{subject}/graph/frames/{frame}", "memories:read"),
    Endpoint("GET", "/v1/provider-config", "admin"),
    Endpoint("PUT", "/v1/provider-config", "admin", {"api_key": "sk-matrix", "model": "m"}),
    Endpoint("DELETE", "/v1/provider-config", "admin"),
    Endpoint("GET", "/v1/subjects/{subject}/memories?type=episodic", "memories:read"),
    Endpoint(
        "POST",
        "/v1/subjects/{subject}/memories?wait=true&wait_timeout=0.1",  # the wait runs after the checks
        "memories:write",
        {"messages": [{"role": "user", "content": "I adopted a cat named Miso."}]},
    ),
    Endpoint(
        "POST",
        "/v1/subjects/{subject}/memories/batch?wait=true&wait_timeout=0.1",
        "memories:write",
        {"chunks": [{"text": "We moved to Lisbon in 2021."}]},
    ),
    Endpoint("GET", "/v1/subjects/{subject}/memories/episodic/{episodic}", "memories:read"),
    Endpoint(
        "PATCH",
        "/v1/subjects/{subject}/memories/episodic/{episodic}",
        "memories:write",
        {"changes": {"summary": "Ana hiked Mount Tamalpais with Leo."}},
    ),
    Endpoint("GET", "/v1/subjects/{subject}/memories/episodic/{episodic}/history", "memories:read"),
    Endpoint("DELETE", "/v1/subjects/{subject}/memories/episodic/{episodic}", "memories:delete"),
    Endpoint(
        "POST",
        "/v1/subjects/{subject}/memories/delete",
        "memories:delete",
        {"ids": [{"type": "semantic", "id": "00000000-0000-4000-8000-000000000000"}]},
    ),
    Endpoint("POST", "/v1/subjects/{subject}/memories/resource/search", "memories:read", {"query": "repotting"}),
    Endpoint("GET", "/v1/subjects/{subject}/core", "memories:read"),
    Endpoint("GET", "/v1/subjects/{subject}/resources/{resource}/content", "memories:read"),
    Endpoint("GET", "/v1/subjects/{subject}/vault", "vault:read"),
    Endpoint("GET", "/v1/subjects/{subject}/vault/{vault}", "vault:read"),
    Endpoint("GET", "/v1/webhook-event-types", "admin"),
    Endpoint("GET", "/v1/webhook-endpoints", "admin"),
    Endpoint(
        "POST",
        "/v1/webhook-endpoints",
        "admin",
        {"url": "http://127.0.0.1:9/new", "event_types": ["memory.created"]},
    ),
    Endpoint("GET", "/v1/webhook-endpoints/{webhook_endpoint}", "admin"),
    Endpoint("PATCH", "/v1/webhook-endpoints/{webhook_endpoint}", "admin", {"description": "changed"}),
    Endpoint("DELETE", "/v1/webhook-endpoints/{webhook_endpoint}", "admin"),
    Endpoint("POST", "/v1/webhook-endpoints/{webhook_endpoint}/rotate-secret", "admin", {"overlap_seconds": 60}),
    Endpoint("POST", "/v1/webhook-endpoints/{webhook_endpoint}/ping", "admin"),
    Endpoint("GET", "/v1/webhook-endpoints/{webhook_endpoint}/deliveries", "admin"),
    Endpoint("GET", "/v1/webhook-deliveries/{webhook_delivery}", "admin"),
    Endpoint("POST", "/v1/webhook-deliveries/{webhook_delivery}/replay", "admin"),
]

# Object factories later capabilities register to extend ``tenant_objects``.
EXTRA_OBJECTS: list[Callable[[Tenant], dict[str, str]]] = []


def _webhook_objects(tenant: Tenant) -> dict[str, str]:
    """An endpoint and a finished delivery of it (a ping failed by disabling the endpoint,
    which is then enabled again), so that replay is allowed."""
    issued = webhook_services.webhook_endpoint_create(
        organization_id=tenant.id, url="http://127.0.0.1:9/mirix", event_types=["*"]
    )
    endpoint_id = issued.endpoint.id
    delivery = webhook_services.webhook_endpoint_ping(organization_id=tenant.id, endpoint_id=endpoint_id)
    for enabled in (False, True):
        webhook_services.webhook_endpoint_update(organization_id=tenant.id, endpoint_id=endpoint_id, enabled=enabled)
    return {"webhook_endpoint": str(endpoint_id), "webhook_delivery": str(delivery.id)}


EXTRA_OBJECTS.append(_webhook_objects)


# Consent, erasure, export and the audit log.
ENDPOINTS += [
    Endpoint("GET", "/v1/subjects/{subject}/consent", "memories:read"),
    Endpoint("PUT", "/v1/subjects/{subject}/consent", "memories:write", {"purposes": {"learn_skills": True}}),
    Endpoint("DELETE", "/v1/subjects/{subject}", "admin"),
    Endpoint("GET", "/v1/subjects/{subject}/export", "admin"),
    Endpoint("GET", "/v1/erasure-requests/{erasure_request}", "admin"),
    # With a limit the log comes as one JSON page; without, as a JSON-lines stream (tested
    # in tests/erasure/test_audit_log.py, another organization's key included).
    Endpoint("GET", "/v1/audit-log?limit=50", "admin"),
    Endpoint("GET", "/v1/audit-log/verify", "admin"),
    Endpoint("GET", "/v1/usage", "admin"),
]


def _erasure_objects(tenant: Tenant) -> dict[str, str]:
    """A subject erasure request (requested, not run) of a second subject."""
    from apps.erasure.services import subject_erase_request

    tenant.subject("matrix-erased")
    with organization_scope(tenant.id):
        erasure = subject_erase_request(organization_id=tenant.id, external_id="matrix-erased")
    return {"erasure_request": str(erasure.request.id)}


EXTRA_OBJECTS.append(_erasure_objects)


# Answers (the local answerer: extractive, offline).
ENDPOINTS += [
    Endpoint("POST", "/v1/subjects/{subject}/answer", "memories:read", {"query": "Where did Ana hike with Leo?"}),
]


# Verified procedural memory: sessions, skills, skill search, feedback, reverting a change.
ENDPOINTS += [
    Endpoint(
        "POST",
        "/v1/subjects/{subject}/sessions",
        "memories:write",
        {
            "task": "Convert 5 miles to kilometres",
            "domain": "units",
            "steps": [{"kind": "action", "content": "multiply by 1.609"}],
            "final_output": "8.05 km",
        },
    ),
    Endpoint("GET", "/v1/subjects/{subject}/skills", "memories:read"),
    Endpoint("GET", "/v1/subjects/{subject}/skills/{skill}", "memories:read"),
    Endpoint("POST", "/v1/subjects/{subject}/skills/search", "memories:read", {"query": "convert miles"}),
    Endpoint("POST", "/v1/feedback?retrieval_id={retrieval}", "memories:write", {"items_used": [], "success": True}),
    Endpoint("POST", "/v1/skill-events/{skill_event}/revert", "admin"),
]


def _procedural_objects(tenant: Tenant) -> dict[str, str]:
    """A skill of the matrix subject (which consents to learning skills), a retrieval of it
    and a weight change that can be reverted."""
    from apps.consent.services import consent_update
    from apps.procedural.evolution_store import skill_weight_set
    from apps.procedural.selectors import skill_search
    from apps.procedural.services import skill_create
    from apps.providers.registry import embedder
    from apps.tenancy.selectors import subject_get

    with organization_scope(tenant.id):
        subject = subject_get(external_id="matrix-subject")
        consent_update(subject=subject, changes={"learn_skills": True})
        skill = skill_create(
            subject=subject,
            name="Unit conversion",
            domain="units",
            text="Multiply miles by 1.609.",
            citations=(),
            job=None,
        )
        skill_weight_set(skill, 0.4, kind="weight_changed", details={})
        retrieval = skill_search(subject=subject, query="convert miles", embedder=embedder())
        event = skill.events.order_by("-sequence").first()
        assert event is not None
    return {"skill": str(skill.id), "retrieval": str(retrieval.retrieval.id), "skill_event": str(event.id)}


EXTRA_OBJECTS.append(_procedural_objects)


# Semantic AutoDream: a final round (it may omit chunk ids) and the merges it recorded.
ENDPOINTS += [
    Endpoint("POST", "/v1/subjects/{subject}/dream", "memories:write", {"final": True}),
    Endpoint("GET", "/v1/subjects/{subject}/dream/merges", "memories:read"),
]
