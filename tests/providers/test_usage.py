"""Token usage rows: tenant-owned, fail-closed, row-level secured, summed per purpose."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import DatabaseError
from django.utils import timezone

from apps.platform.errors import MissingTenantScope
from apps.providers.models import ProviderUsage
from apps.providers.selectors import usage_totals_by_purpose
from apps.providers.services import DatabaseUsageMeter, usage_record
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant


def test_recording_needs_the_organization_in_scope() -> None:
    tenant = make_tenant()
    with pytest.raises(MissingTenantScope):
        usage_record(organization_id=tenant.id, purpose="route", model="m", prompt_tokens=1, completion_tokens=1)


def test_another_organizations_scope_cannot_write_or_read_its_usage() -> None:
    tenant, other = make_tenant(), make_tenant()
    DatabaseUsageMeter().record(
        organization_id=tenant.id, purpose="route", model="gpt-test", prompt_tokens=10, completion_tokens=2
    )
    with pytest.raises(DatabaseError, match="row-level security"), organization_scope(other.id):
        usage_record(organization_id=tenant.id, purpose="route", model="m", prompt_tokens=1, completion_tokens=1)
    with organization_scope(other.id):
        assert list(ProviderUsage.objects.for_organization(tenant.id)) == []
        assert usage_totals_by_purpose() == {}
    with organization_scope(tenant.id):
        assert ProviderUsage.objects.count() == 1


def test_totals_per_purpose_over_a_window() -> None:
    tenant = make_tenant()
    meter = DatabaseUsageMeter()
    for purpose, prompt, completion in [("route", 100, 10), ("route", 50, 5), ("write.core", 70, 30), ("embed", 9, 0)]:
        meter.record(
            organization_id=tenant.id,
            purpose=purpose,
            model="gpt-test",
            prompt_tokens=prompt,
            completion_tokens=completion,
        )

    with organization_scope(tenant.id):
        totals = usage_totals_by_purpose()
        assert {purpose: (t.calls, t.prompt_tokens, t.completion_tokens) for purpose, t in totals.items()} == {
            "embed": (1, 9, 0),
            "route": (2, 150, 15),
            "write.core": (1, 70, 30),
        }
        assert usage_totals_by_purpose(since=timezone.now() + timedelta(minutes=1)) == {}
        assert usage_totals_by_purpose(until=timezone.now() - timedelta(minutes=1)) == {}
