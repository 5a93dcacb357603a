"""Factories that go through the services, so every row is made the way production makes it."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone
from rest_framework.test import APIClient

from apps.tenancy import keys, services
from apps.tenancy.models import Organization, Subject
from apps.tenancy.scope import organization_scope

_sequence = itertools.count(1)


@dataclass
class Tenant:
    organization: Organization
    key: str  # a full-scope API key

    @property
    def id(self):  # type: ignore[no-untyped-def]
        return self.organization.id

    def client(self, key: str | None = None) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key or self.key}")
        return client

    def issue_key(self, scopes: list[str], *, expires_at: datetime | None = None, rate_limit: int | None = None) -> str:
        return services.api_key_create(
            organization_id=self.id,
            name=f"key-{next(_sequence)}",
            scopes=scopes,
            expires_at=expires_at,
            rate_limit_per_minute=rate_limit,
        ).secret

    def issue_expired_key(self, scopes: list[str]) -> str:
        """A key whose expiry has passed (one cannot be created already expired)."""
        from apps.tenancy.models import ApiKey

        secret = self.issue_key(scopes, expires_at=timezone.now() + timedelta(minutes=1))
        with organization_scope(self.id):
            ApiKey.objects.filter(lookup_id=secret[len(settings.API_KEY_PREFIX) :][:12]).update(
                expires_at=timezone.now() - timedelta(seconds=1)
            )
        return secret

    def write(
        self, external_id: str, body: dict[str, Any], *, key: str | None = None, index: bool = False, **extra: Any
    ) -> dict[str, Any]:
        """``POST …/memories`` (a 202), then what the worker does with it (``complete_writes``):
        the answer as ``wait=true`` gives it once the job finished, every row of the write in
        ``records`` and the router's ``routed_types``."""
        response = self.client(key).post(f"/v1/subjects/{external_id}/memories", body, format="json", **extra)
        assert response.status_code == 202, response.content
        complete_writes(self.id, index=index)
        return written_answer(self.id, response.json())

    def graph(self) -> str:
        """Create the organization's graph now, as its first graph write would (ADR 0050); its name."""
        from apps.graph.adapter import graph_ensure

        with organization_scope(self.id):
            return graph_ensure(organization_id=self.id)

    def subject(self, external_id: str | None = None, kind: str = "user") -> Subject:
        with organization_scope(self.id):
            return services.subject_create(
                organization_id=self.id, external_id=external_id or f"subject-{next(_sequence)}", kind=kind
            )


def make_tenant(slug: str | None = None, *, monthly_request_quota: int | None = None) -> Tenant:
    slug = slug or f"org-{next(_sequence)}"
    organization = services.organization_create(
        name=slug.title(), slug=slug, monthly_request_quota=monthly_request_quota
    )
    key = services.api_key_create(organization_id=organization.id, name="full", scopes=list(keys.SCOPES)).secret
    return Tenant(organization=organization, key=key)


def complete_writes(organization_id: Any, *, index: bool = False) -> int:
    """What the worker does after a write's 202 (ADR 0054), in process: complete the
    organization's accepted writes (routing, the other typed rows, embeddings), and with
    ``index`` index their rows too (their jobs then settle). Returns how many it completed."""
    from apps.graph.services import index_chunks
    from apps.memory.services import memory_complete_writes

    total = 0
    while True:
        with organization_scope(organization_id):
            completed = memory_complete_writes()
        if not completed:
            return total
        total += len(completed)
        if index:
            with organization_scope(organization_id):
                index_chunks(chunk_ids=[write.chunk_id for write in completed])


def written_answer(organization_id: Any, accepted: dict[str, Any]) -> dict[str, Any]:
    """A write's 202 answer completed: every row of the write and the router's types, as the
    waited answer (201) gives them."""
    from apps.jobs.models import Job
    from apps.memory.selectors import chunk_records

    with organization_scope(organization_id):
        job = Job.objects.get(id=accepted["job_id"])
        records = [{"type": t, "id": str(i)} for t, i in chunk_records(chunk_ids=[accepted["chunk_id"]])]
    return {**accepted, "records": records, "routed_types": job.result.get("routed_types", accepted["routed_types"])}
