"""Factories that go through the services, so every row is made the way production makes it."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime, timedelta

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
