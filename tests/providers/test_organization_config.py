"""An organization's own OpenAI-compatible endpoint: encrypted key, used only for its calls."""

from __future__ import annotations

import pytest
from django.db import connections

from tests.factories import complete_writes, make_tenant
from tests.providers.openai_stub import OpenAIStub, json_reply

ORG_KEY = "sk-org-own-key-5b1f0c"


def _database_text() -> str:
    with connections["owner"].cursor() as cursor:
        cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        tables = [row[0] for row in cursor.fetchall()]
        chunks = []
        for table in tables:
            cursor.execute(f'SELECT t::text FROM public."{table}" t')
            chunks += [row[0] for row in cursor.fetchall()]
    return "\n".join(chunks)


def test_an_organization_brings_its_own_endpoint_and_key(openai_stub: OpenAIStub) -> None:
    tenant, other = make_tenant(), make_tenant()
    set_response = tenant.client().put(
        "/v1/provider-config", {"api_key": ORG_KEY, "base_url": openai_stub.url, "model": "org-model"}, format="json"
    )
    assert set_response.status_code == 200, set_response.content
    assert set_response.json()["configured"] and ORG_KEY not in set_response.content.decode()
    assert ORG_KEY not in _database_text()

    openai_stub.queue(json_reply({"memory_types": [], "reason": "small talk"}))
    for owner in (tenant, other):
        owner.subject("ana")
        written = owner.client().post("/v1/subjects/ana/memories", {"text": "I adopted a cat."}, format="json")
        assert written.status_code == 202, written.content
        complete_writes(owner.id)  # the worker routes (ADR 0054); the message stays stored as said
    # Only the configured organization's call reached its endpoint, with its key and model.
    assert len(openai_stub.requests) == 1
    assert openai_stub.requests[0].headers["authorization"] == f"Bearer {ORG_KEY}"
    assert openai_stub.requests[0].body["model"] == "org-model"

    assert tenant.client().delete("/v1/provider-config").status_code == 204
    assert tenant.client().get("/v1/provider-config").json()["configured"] is False


@pytest.mark.parametrize(
    "base_url",
    ["http://10.0.0.7/v1", "https://169.254.169.254/latest", "https://user:pw@127.0.0.1:9/v1", "ftp://127.0.0.1:9/v1"],
)
def test_unsafe_base_urls_are_refused(base_url: str) -> None:
    tenant = make_tenant()
    response = tenant.client().put("/v1/provider-config", {"api_key": ORG_KEY, "base_url": base_url}, format="json")
    assert response.status_code == 400, response.content
    assert tenant.client().get("/v1/provider-config").json()["configured"] is False
