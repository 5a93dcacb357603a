"""Token usage rows: tenant-owned, fail-closed, row-level secured, summed per purpose."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import DatabaseError
from django.utils import timezone

from apps.platform.errors import MissingTenantScope
from apps.providers.config import OpenAIConfig
from apps.providers.interfaces import MeteringContext
from apps.providers.models import ProviderUsage
from apps.providers.openai_provider import OpenAIMemoryLLM
from apps.providers.selectors import usage_totals_by_purpose
from apps.providers.services import DatabaseUsageMeter, usage_record
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant
from tests.providers.openai_stub import OpenAIStub, chat_reply, json_reply
from tests.providers.test_openai_provider import EPISODE, ROUTE, _input


def test_recording_needs_the_organization_in_scope() -> None:
    tenant = make_tenant()
    with pytest.raises(MissingTenantScope):
        usage_record(organization_id=tenant.id, purpose="route", model="m", prompt_tokens=1, completion_tokens=1)


def test_another_organizations_scope_cannot_write_or_read_its_usage() -> None:
    tenant, other = make_tenant(), make_tenant()
    DatabaseUsageMeter().record(
        organization_id=tenant.id,
        api_key_id=None,
        purpose="route",
        model="gpt-test",
        prompt_tokens=10,
        completion_tokens=2,
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
            api_key_id=None,
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


def test_token_usage_is_metered_per_organization_and_purpose(
    openai_stub: OpenAIStub, stub_config: OpenAIConfig
) -> None:
    tenant, other = make_tenant(), make_tenant()
    llm = OpenAIMemoryLLM(config=stub_config)
    metering = MeteringContext(organization_id=tenant.id, meter=DatabaseUsageMeter())
    openai_stub.queue(
        json_reply(ROUTE, prompt_tokens=120, completion_tokens=15),
        chat_reply("{not json", prompt_tokens=300, completion_tokens=40),
        json_reply({"drafts": [EPISODE]}, prompt_tokens=310, completion_tokens=90),
    )

    llm.route(_input(), metering=metering)  # outside any scope: the meter opens its own
    with organization_scope(tenant.id):  # inside the organization's scope: it nests
        llm.write_episodic(_input(), metering=metering)

    with organization_scope(tenant.id):
        totals = usage_totals_by_purpose()
    assert {purpose: (t.calls, t.prompt_tokens, t.completion_tokens) for purpose, t in totals.items()} == {
        "route": (1, 120, 15),
        "write.episodic": (2, 610, 130),
    }
    with organization_scope(other.id):
        assert usage_totals_by_purpose() == {}
